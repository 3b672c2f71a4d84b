package exchange

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// The bulk path (importbatch.go) against one row at a time: the same file imported both ways
// into two stores set up alike leaves the same records, versions, history, change feed and
// report, on SQLite and PostgreSQL, on the parts schema (a unique code, a ref, a tree) and on
// the sample schema (leases, owned fields, merges).

// partsStore opens a fresh store of the given engine with the parts schema.
func partsStore(t testing.TB, engine string) store.Store {
	t.Helper()
	reg, err := store.LoadRegistry("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var st store.Store
	if engine == "postgres" {
		st, err = postgres.Open(context.Background(), pgtest.DSN(t), store.Options{Registry: reg})
	} else {
		st, err = sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "parts.db"), store.Options{Registry: reg})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// engines are the stores the equivalence tests run on: SQLite, and PostgreSQL when
// TANDEM_TEST_POSTGRES names a server.
func engines() []string {
	if os.Getenv("TANDEM_TEST_POSTGRES") != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// mustLease gives bob a lease on record id of kind (its first group) and returns the store's
// answer.
func mustLease(t testing.TB, st store.Store, kind store.Kind, id int64) {
	t.Helper()
	_, err := st.AcquireLease(as(t, bob), store.LeaseRequest{Kind: kind, RecordID: id, Group: st.Registry().Groups(kind)[0], TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
}

// mustSave saves vals on record id of kind at version base, as bob.
func mustSave(t testing.TB, st store.Store, kind store.Kind, id, base int64, vals store.Values) {
	t.Helper()
	if _, err := st.UpdateRecord(as(t, bob), kind, id, store.Update{BaseVersion: base, Set: vals}); err != nil {
		t.Fatal(err)
	}
}

// setUpParts fills a parts store: suppliers 1 (ACME) and 2 (BOLT, renamed by bob to v2),
// part 1 of supplier 1 (leased by bob), areas 1 > 2 > 3 and 4 at the root.
func setUpParts(t testing.TB, st store.Store) {
	mustCreate(t, st, "supplier", store.Values{"code": "ACME", "name": "Acme"})
	mustCreate(t, st, "supplier", store.Values{"code": "BOLT", "name": "Bolt"})
	mustCreate(t, st, "part", store.Values{"label": "Hex bolt", "supplier": int64(1)})
	mustCreate(t, st, "part", store.Values{"label": "Washer"})
	top := mustCreate(t, st, "area", store.Values{"name": "Warehouse"})
	aisle := mustCreate(t, st, "area", store.Values{"name": "Aisle", "parent_id": top})
	mustCreate(t, st, "area", store.Values{"name": "Shelf", "parent_id": aisle})
	mustCreate(t, st, "area", store.Values{"name": "Yard"})
	mustSave(t, st, "supplier", 2, 1, store.Values{"name": "Bolt & Sons"})
	mustLease(t, st, "part", 1)
}

// partsFile holds every outcome: creates (with and without an id), a unique code taken in
// the store and by an earlier row, refs to a record an earlier row made and to none, updates
// (one record twice, the second row on the version the first made), a conflict (a merge with
// --merge), a leased record, a required field left empty, a tree create under a node, a
// move and a move into the moved node's own subtree; at its end, rows that depend on rows
// of the same batch: a tree create under a node created just before, a ref to a record the
// file created, a unique code a row just before took.
const partsFile = `{"kind":"supplier","fields":{"code":"NEW-1","name":"New one"}}
{"kind":"supplier","fields":{"code":"acme","name":"Dup"}}
{"kind":"supplier","id":10,"fields":{"code":"TEN","name":"Ten"}}
{"kind":"part","fields":{"label":"Nut","supplier":10}}
{"kind":"part","fields":{"label":"Ghost","supplier":99}}
{"kind":"supplier","id":1,"version":1,"fields":{"name":"Acme Tools"}}
{"kind":"supplier","id":2,"version":1,"fields":{"notes":"from the file"}}
{"kind":"part","id":1,"version":1,"fields":{"status":"active"}}
{"kind":"part","id":2,"version":1,"fields":{"status":"retired"}}
{"kind":"supplier","id":10,"version":1,"fields":{"name":"Ten again"}}
{"kind":"area","fields":{"name":"Bin","parent_id":3}}
{"kind":"area","id":4,"version":1,"fields":{"parent_id":1}}
{"kind":"area","id":1,"version":1,"fields":{"parent_id":3}}
{"kind":"supplier","id":1,"version":2,"fields":{"name":"Acme Tools"}}
{"kind":"supplier","fields":{"code":" new-1 ","name":"Again"}}
{"kind":"supplier","id":1,"version":1,"fields":{"rating":3}}
{"kind":"part","fields":{"label":""}}
{"kind":"supplier","id":2,"version":2,"fields":{"name":"Bolt Company"}}
{"kind":"part","id":2,"version":2,"fields":{"label":"Flat washer","supplier":10}}
{"kind":"area","id":3,"version":1,"fields":{"name":"Top shelf"}}
{"kind":"supplier","fields":{"name":"No code"}}
{"kind":"supplier","id":11,"version":4,"fields":{"code":"ELEVEN","name":"Eleven"}}
{"kind":"supplier","id":2,"version":1,"fields":{"name":"Bolt Ltd"}}
{"kind":"area","id":20,"fields":{"name":"Dock"}}
{"kind":"area","fields":{"name":"Dock bay","parent_id":20}}
{"kind":"part","fields":{"label":"Bracket","supplier":10}}
{"kind":"supplier","fields":{"code":"NEW-2","name":"New two"}}
{"kind":"supplier","fields":{"code":"new-2","name":"New two again"}}
`

// storeState is what a store holds that an import changes, with its times left out: every
// record with its version and writer, every record's history, and the change feed.
func storeState(t testing.TB, st store.Store) string {
	t.Helper()
	ctx := as(t, alice)
	var b strings.Builder
	for _, kind := range st.Registry().Kinds() {
		recs, err := st.FindRecords(ctx, store.Filter{Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			fmt.Fprintf(&b, "%s %d v%d by %s:", kind, r.ID, r.Version, r.UpdatedBy)
			for _, f := range st.Registry().Fields(kind) {
				fmt.Fprintf(&b, " %s=%q", f.Name, f.Format(r.Fields[f.Name]))
			}
			b.WriteString("\n")
			// The record is found by a search for each of its searched fields' values (the
			// search folds and their indexes were written).
			for _, f := range st.Registry().SearchFields(kind) {
				v := f.Format(r.Fields[f.Name])
				if len([]rune(v)) < 3 {
					continue
				}
				found, err := st.FindRecords(ctx, store.Filter{Kind: kind, Search: v, IDs: []int64{r.ID}})
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "  search %s %q: %d found\n", f.Name, v, len(found))
			}
			hs, err := st.FindHistory(ctx, kind, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hs {
				fmt.Fprintf(&b, "  history v%d %s %v %q %v\n", h.Version, h.Actor, h.Fields, h.Event, h.Snapshot)
			}
		}
	}
	changes, err := st.Changes(ctx, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		fmt.Fprintf(&b, "change %s %s %d v%d %s %s %v %v %v\n", c.Event, c.Kind, c.RecordID, c.Version, c.Actor, c.Role, c.Fields, c.Deltas, c.History)
	}
	return b.String()
}

// clockTimes are the times of day a lease's message names.
var clockTimes = regexp.MustCompile(`\b\d\d:\d\d\b`)

// reportOf returns the report's rows, one a line, with the times of day left out.
func reportOf(res []Result) string {
	var b strings.Builder
	for _, r := range res {
		fmt.Fprintf(&b, "%+v\n", r)
	}
	return clockTimes.ReplaceAllString(b.String(), "hh:mm")
}

// TestImport_BulkSameAsRowByRow: the parts file, imported in batches of three rows and one
// row at a time (with and without --merge), and then once more (every row imported before),
// leaves the same report and the same records, history and feed on both stores.
func TestImport_BulkSameAsRowByRow(t *testing.T) {
	for _, engine := range engines() {
		for _, merge := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/merge=%v", engine, merge), func(t *testing.T) {
				run := func(batch int) (first, again, state string) {
					st := partsStore(t, engine)
					setUpParts(t, st)
					o := ImportOptions{KeyPrefix: "eq", Merge: merge, BatchRows: batch}
					res, _ := mustImport(t, as(t, alice), st, []byte(partsFile), JSONL, o)
					first = reportOf(res)
					res, _ = mustImport(t, as(t, alice), st, []byte(partsFile), JSONL, o)
					return first, reportOf(res), storeState(t, st)
				}
				oneFirst, oneAgain, oneState := run(1)
				for _, batch := range []int{3, 1000} {
					first, again, state := run(batch)
					if first != oneFirst {
						t.Errorf("batches of %d: report\n%s\nwant (one row at a time)\n%s", batch, first, oneFirst)
					}
					if again != oneAgain {
						t.Errorf("batches of %d: report of the second import\n%s\nwant\n%s", batch, again, oneAgain)
					}
					if state != oneState {
						t.Errorf("batches of %d: store\n%s\nwant\n%s", batch, state, oneState)
					}
				}
				// The file holds every outcome, so that the comparison covers each.
				for _, o := range []Outcome{Created, Updated, Unchanged, Conflict, Leased, Invalid} {
					if !strings.Contains(oneFirst+oneAgain, "Outcome:"+string(o)+" ") {
						t.Errorf("no row %s:\n%s", o, oneFirst)
					}
				}
			})
		}
	}
}

// batchSpy is a store whose batches are counted, and the first failBatches of them refused
// after their rows ran (as a commit that failed would be: nothing of them stays).
type batchSpy struct {
	store.Store
	batches, failBatches int
}

func (s *batchSpy) WriteBatch(ctx context.Context, fn func(context.Context) error) error {
	s.batches++
	fail := s.batches <= s.failBatches
	return s.Store.(store.Batcher).WriteBatch(ctx, func(ctx context.Context) error {
		if err := fn(ctx); err != nil {
			return err
		}
		if fail {
			return store.Errorf(store.EUNAVAILABLE, "the commit was lost")
		}
		return nil
	})
}

// noIDs finds the record ids in a report or a store's state.
var noIDs = regexp.MustCompile(`(ID:|supplier )\d+`)

// TestImport_BulkBatches: 25 new suppliers in batches of ten take three transactions of the
// store (more only on a machine slow enough to end a batch early), not 25; a batch the store refuses as a whole is applied again one row at a time, so
// the report and the store are those of a row-by-row import.
func TestImport_BulkBatches(t *testing.T) {
	var file strings.Builder
	for i := range 25 {
		fmt.Fprintf(&file, `{"kind":"supplier","fields":{"code":"S-%d","name":"Supplier %d"}}`+"\n", i, i)
	}
	for _, engine := range engines() {
		t.Run(engine, func(t *testing.T) {
			one := partsStore(t, engine)
			res, _ := mustImport(t, as(t, alice), one, []byte(file.String()), JSONL, ImportOptions{BatchRows: 1})
			want, wantState := reportOf(res), storeState(t, one)

			spy := &batchSpy{Store: partsStore(t, engine)}
			res, sum := mustImport(t, as(t, alice), spy, []byte(file.String()), JSONL, ImportOptions{BatchRows: 10})
			// Three, unless the machine is so slow that a batch ended early (maxBatchTime).
			if spy.batches < 3 || spy.batches >= 25 || sum[Created] != 25 {
				t.Errorf("%d batches, %v; want 3 (fewer than the rows), 25 created", spy.batches, sum)
			}
			if got := reportOf(res); got != want {
				t.Errorf("report\n%s\nwant\n%s", got, want)
			}

			// The ids of records created after a refused batch may differ: a PostgreSQL
			// sequence keeps what the batch took (as it does for a refused row).
			spy = &batchSpy{Store: partsStore(t, engine), failBatches: 1}
			res, _ = mustImport(t, as(t, alice), spy, []byte(file.String()), JSONL, ImportOptions{BatchRows: 10})
			want, wantState = noIDs.ReplaceAllString(want, "$1N"), noIDs.ReplaceAllString(wantState, "$1N")
			if got := noIDs.ReplaceAllString(reportOf(res), "$1N"); got != want {
				t.Errorf("report after a refused batch\n%s\nwant\n%s", got, want)
			}
			if got := noIDs.ReplaceAllString(storeState(t, spy), "$1N"); got != wantState {
				t.Errorf("store after a refused batch\n%s\nwant\n%s", got, wantState)
			}
		})
	}
}

// sampleFile updates, creates and conflicts on the sample schema's products: a system field
// (checksum) an editor may not write and a worker may (and editor fields the other way), a
// counter (stock) merged by its delta, a name both sides changed, a sku an earlier row
// took, a leased product, a product written twice.
const sampleFile = `{"kind":"product","id":1,"version":1,"fields":{"name":"Lamp one","price":"1.00","checksum":"abc"}}
{"kind":"product","id":2,"version":1,"fields":{"stock":9}}
{"kind":"product","id":2,"version":1,"fields":{"name":"Lamp two"}}
{"kind":"product","id":3,"version":1,"fields":{"price":"3.00","checksum":"x3"}}
{"kind":"product","fields":{"sku":"NEW-1","name":"New lamp","price":"4.00","checksum":"def"}}
{"kind":"product","fields":{"sku":" new-1","name":"Same sku"}}
{"kind":"product","id":1,"version":2,"fields":{"name":"Lamp one again"}}
{"kind":"product","id":4,"version":1,"fields":{"availability":"backorder","checksum":"x4"}}
`

// TestImport_BulkSameAsRowByRowSample: the sample file, imported by an editor and by a worker,
// in batches and one row at a time (with and without --merge), leaves the same report and
// store: fields the role may not write left alone and named, a lease, a conflict or a
// counter merged.
func TestImport_BulkSameAsRowByRowSample(t *testing.T) {
	for _, engine := range engines() {
		open := mustSQLite
		if engine == "postgres" {
			open = mustPostgres
		}
		for _, who := range []store.Actor{alice, worker} {
			for _, merge := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/merge=%v", engine, who.Name, merge), func(t *testing.T) {
					run := func(batch int) (string, string) {
						st := open(t)
						mustProducts(t, st, 5)
						mustSave(t, st, store.KindProduct, 2, 1, store.Values{"stock": int64(12), "name": "Bob's lamp"})
						mustLease(t, st, store.KindProduct, 3)
						o := ImportOptions{KeyPrefix: "eq", Merge: merge, BatchRows: batch}
						res, _ := mustImport(t, as(t, who), st, []byte(sampleFile), JSONL, o)
						again, _ := mustImport(t, as(t, who), st, []byte(sampleFile), JSONL, o)
						return reportOf(res) + reportOf(again), storeState(t, st)
					}
					wantReport, wantState := run(1)
					report, state := run(3)
					if report != wantReport {
						t.Errorf("report in batches of 3\n%s\nwant (one row at a time)\n%s", report, wantReport)
					}
					if state != wantState {
						t.Errorf("store in batches of 3\n%s\nwant\n%s", state, wantState)
					}
				})
			}
		}
	}
}

// bulkSpy is a store whose bulk creates (store.BulkCreator) are counted: the records they
// created.
type bulkSpy struct {
	store.Store
	bulk int
	// loaded counts those of bulk a Loader created.
	loaded int
	// saved counts the records bulk saves (store.BulkUpdater) saved.
	saved int
	// load lets the store's Loader (store.BulkLoader) create records outside batches.
	load bool
}

// OpenLoader opens the store's Loader, counted as the bulk creates are, when the spy loads
// and the store can.
func (s *bulkSpy) OpenLoader(ctx context.Context) (store.Loader, error) {
	bl, ok := s.Store.(store.BulkLoader)
	if !s.load || !ok {
		return nil, nil
	}
	l, err := bl.OpenLoader(ctx)
	if l == nil || err != nil {
		return nil, err
	}
	return &loaderSpy{Loader: l, spy: s}, nil
}

// loaderSpy counts the records a Loader created into its bulkSpy.
type loaderSpy struct {
	store.Loader
	spy *bulkSpy
}

func (l *loaderSpy) CreateRecords(ctx context.Context, recs []store.NewRecord) ([]*store.Record, error) {
	out, err := l.Loader.CreateRecords(ctx, recs)
	l.spy.bulk += len(out)
	l.spy.loaded += len(out)
	return out, err
}

func (s *bulkSpy) WriteBatch(ctx context.Context, fn func(context.Context) error) error {
	return s.Store.(store.Batcher).WriteBatch(ctx, fn)
}

func (s *bulkSpy) ListKeys(ctx context.Context, scope string, keys []string) (map[string]bool, error) {
	return s.Store.(store.KeyLister).ListKeys(ctx, scope, keys)
}

// UpdateRecords saves in bulk, counted, when the store can; else it saves none, and each
// save goes UpdateRecord's way.
func (s *bulkSpy) UpdateRecords(ctx context.Context, ups []store.RecordUpdate) ([]*store.UpdateResult, error) {
	bu, ok := s.Store.(store.BulkUpdater)
	if !ok {
		return nil, nil
	}
	out, err := bu.UpdateRecords(ctx, ups)
	s.saved += len(out)
	return out, err
}

func (s *bulkSpy) CreateRecords(ctx context.Context, recs []store.NewRecord) ([]*store.Record, error) {
	out, err := s.Store.(store.BulkCreator).CreateRecords(ctx, recs)
	s.bulk += len(out)
	return out, err
}

// mixedFile is n rows of the parts schema that mostly create records without an id, with,
// among them, rows a set-based check refuses or leaves to a create of its own: a code an
// earlier row of the file took (in another case), a code the store holds, a ref to a
// supplier the file created with an id just before, a ref to none, a tree create under a
// node the file created just before, a required field left empty, a row with an id.
func mixedFile(n int) string {
	var b strings.Builder
	for i := range n {
		switch {
		case i%17 == 5:
			fmt.Fprintf(&b, `{"kind":"supplier","fields":{"code":"s-%d","name":"Same code as row %d"}}`+"\n", i-3, i-3)
		case i%29 == 7:
			b.WriteString(`{"kind":"supplier","fields":{"code":"acme","name":"Held code"}}` + "\n")
		case i%23 == 3:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"fields":{"code":"ID-%d","name":"With id"}}`+"\n", 1000+i, i)
		case i%23 == 4:
			fmt.Fprintf(&b, `{"kind":"part","fields":{"label":"Part of %d","supplier":%d}}`+"\n", 1000+i-1, 1000+i-1)
		case i%31 == 9:
			fmt.Fprintf(&b, `{"kind":"part","fields":{"label":"Ghost %d","supplier":999999}}`+"\n", i)
		case i%37 == 11:
			fmt.Fprintf(&b, `{"kind":"area","id":%d,"fields":{"name":"Node %d"}}`+"\n", 2000+i, i)
		case i%37 == 12:
			fmt.Fprintf(&b, `{"kind":"area","fields":{"name":"Under %d","parent_id":%d}}`+"\n", 2000+i-1, 2000+i-1)
		case i%41 == 13:
			b.WriteString(`{"kind":"part","fields":{"label":""}}` + "\n")
		case i%3 == 0:
			fmt.Fprintf(&b, `{"kind":"part","fields":{"label":"Part %d","supplier":1}}`+"\n", i)
		default:
			fmt.Fprintf(&b, `{"kind":"supplier","fields":{"code":"S-%d","name":"Supplier %d","notes":"note %d"}}`+"\n", i, i, i)
		}
	}
	return b.String()
}

// TestImport_BulkCreatesSameAsRowByRow: a file of mostly new records, with rows between
// them that the bulk create's set-based checks refuse or leave to a create of their own (a
// unique clash inside the batch and with the store, refs to a record created in the same
// batch and to none, a tree child under a node of the same batch), imported in batches of
// the default size and of 50, leaves the same report, records, history, feed and keys (the
// import again changes nothing) as one row at a time; and most of its records were
// created in bulk, by the store's Loader when the import may load.
func TestImport_BulkCreatesSameAsRowByRow(t *testing.T) {
	file := []byte(mixedFile(400))
	for _, engine := range engines() {
		t.Run(engine, func(t *testing.T) {
			run := func(batch int, load bool) (report, state string, bulk int) {
				t.Helper()
				spy := &bulkSpy{Store: partsStore(t, engine), load: load}
				setUpParts(t, spy)
				o := ImportOptions{KeyPrefix: "eq", BatchRows: batch}
				res, _ := mustImport(t, as(t, alice), spy, file, JSONL, o)
				again, _ := mustImport(t, as(t, alice), spy, file, JSONL, o)
				if _, ok := spy.Store.(store.BulkLoader); !ok {
					t.Fatalf("the %s store has no Loader (store.BulkLoader)", engine)
				}
				if load && spy.loaded == 0 {
					t.Errorf("batches of %d: the store's Loader created no record", batch)
				}
				return reportOf(res) + reportOf(again), storeState(t, spy), spy.bulk
			}
			wantReport, wantState, _ := run(1, false)
			for _, batch := range []int{0, 50} {
				for _, load := range []bool{false, true} {
					report, state, bulk := run(batch, load)
					if report != wantReport {
						t.Errorf("batches of %d, load %v: report\n%s\nwant (one row at a time)\n%s", batch, load, report, wantReport)
					}
					if state != wantState {
						t.Errorf("batches of %d, load %v: store\n%s\nwant\n%s", batch, load, state, wantState)
					}
					if created := strings.Count(wantReport, "Outcome:created "); bulk < created*3/4 {
						t.Errorf("batches of %d, load %v: %d of %d records created in bulk, want most", batch, load, bulk, created)
					}
				}
			}
		})
	}
}

// updateFile is an update of the n suppliers (ids 3 …) updateBase made, and of parts 1
// and 2: most rows change a name, a note (long enough to be stored as a patch) or a
// rating, or change nothing; among them a row from a stale version, a row of a leased
// record, a required field left empty, a code too long, a changed unique code (free, and
// one the store holds), a ref changed, a row without a version, the same record twice.
func updateFile(n int) string {
	var b strings.Builder
	long := strings.Repeat("a long note that a history version stores as a patch; ", 4)
	for i := range n {
		id := 3 + i
		switch {
		case i%13 == 5:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":1,"fields":{"name":"Stale %d"}}`+"\n", id, i)
		case i%13 == 6:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":2,"fields":{"name":"Leased %d"}}`+"\n", id, i)
		case i%17 == 7:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":2,"fields":{"name":""}}`+"\n", id)
		case i%19 == 8:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":2,"fields":{"code":"%s"}}`+"\n", id, strings.Repeat("X", 40))
		case i%23 == 9:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":2,"fields":{"code":"NEWCODE-%d"}}`+"\n", id, i)
		case i%29 == 10:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":2,"fields":{"code":"acme"}}`+"\n", id)
		case i%31 == 11:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"fields":{"name":"No version %d"}}`+"\n", id, i)
		case i%37 == 12:
			fmt.Fprintf(&b, `{"kind":"part","id":2,"version":1,"fields":{"supplier":%d}}`+"\n", id)
		case i%41 == 13:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":2,"fields":{"name":"Twice %d"}}`+"\n", id-1, i)
		case i%3 == 0:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":2,"fields":{"name":"Renamed %d","rating":%d}}`+"\n", id, i, i)
		case i%3 == 1:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":2,"fields":{"notes":"%s %d"}}`+"\n", id, long, i)
		default:
			fmt.Fprintf(&b, `{"kind":"supplier","id":%d,"version":2,"fields":{"code":"C-%d","name":"Base %d"}}`+"\n", id, i, i)
		}
	}
	return b.String()
}

// updateBase makes the records updateFile updates: n suppliers at version 2 (with a
// history version each), the leased ones leased by bob.
func updateBase(t testing.TB, st store.Store, n int) {
	t.Helper()
	for i := range n {
		id := mustCreate(t, st, "supplier", store.Values{"code": fmt.Sprintf("C-%d", i), "name": fmt.Sprintf("Supplier %d", i)})
		mustSave(t, st, "supplier", id, 1, store.Values{"name": fmt.Sprintf("Base %d", i)})
		if i%13 == 6 {
			mustLease(t, st, "supplier", id)
		}
	}
}

// TestImport_BulkUpdatesSameAsRowByRow: a file of updates (changed, unchanged, stale,
// leased, invalid, a unique code changed, a ref changed, the same record twice), imported
// in batches, where most saves are the store's bulk saves, and then again (every row
// imported before), leaves the same report, records, history, feed and keys as one row at
// a time.
func TestImport_BulkUpdatesSameAsRowByRow(t *testing.T) {
	const n = 300
	file := []byte(updateFile(n))
	for _, engine := range engines() {
		t.Run(engine, func(t *testing.T) {
			run := func(batch int) (report, state string, saved int) {
				t.Helper()
				spy := &bulkSpy{Store: partsStore(t, engine)}
				setUpParts(t, spy)
				updateBase(t, spy, n)
				o := ImportOptions{KeyPrefix: "eq", BatchRows: batch}
				res, _ := mustImport(t, as(t, alice), spy, file, JSONL, o)
				again, _ := mustImport(t, as(t, alice), spy, file, JSONL, o)
				return reportOf(res) + reportOf(again), storeState(t, spy), spy.saved
			}
			wantReport, wantState, _ := run(1)
			for _, o := range []Outcome{Updated, Unchanged, Conflict, Leased, Invalid} {
				if !strings.Contains(wantReport, "Outcome:"+string(o)+" ") {
					t.Errorf("no row %s:\n%s", o, wantReport)
				}
			}
			for _, batch := range []int{0, 7} {
				report, state, saved := run(batch)
				if report != wantReport {
					t.Errorf("batches of %d: report\n%s\nwant (one row at a time)\n%s", batch, report, wantReport)
				}
				if state != wantState {
					t.Errorf("batches of %d: store\n%s\nwant\n%s", batch, state, wantState)
				}
				if updated := strings.Count(wantReport, "Outcome:updated "); saved < updated*2/3 {
					t.Errorf("batches of %d: %d of %d records saved in bulk, want most", batch, saved, updated)
				}
			}
		})
	}
}
