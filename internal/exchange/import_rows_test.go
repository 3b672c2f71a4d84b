package exchange

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// mustDocs creates documents with the given titles, each under the parent parents names
// (0: at the root), and returns their ids in order.
func mustDocs(t testing.TB, st store.Store, parents ...int64) []int64 {
	t.Helper()
	var ids []int64
	for i, p := range parents {
		vals := store.Values{"title": fmt.Sprintf("Doc %d", i+1)}
		if p != 0 {
			vals["parent_id"] = p
		}
		r, err := st.CreateRecord(as(t, alice), store.KindDocument, vals)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// mustDoc reads a document.
func mustDoc(t testing.TB, st store.Store, id int64) *store.Record {
	t.Helper()
	r, err := st.FindRecord(context.Background(), store.KindDocument, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// outcomes lists each row's outcome, in order.
func outcomes(res []Result) string {
	var s []string
	for _, r := range res {
		s = append(s, string(r.Outcome))
	}
	return strings.Join(s, ",")
}

// A row that changes a document's fields and moves it, whose move the store would refuse
// (no such parent yet, a cycle, too deep), is invalid and writes nothing; a re-run once the
// parent exists lands the whole row, and a third run replays it.
func TestImport_MoveRowIsOneUnit(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		ctx := as(t, alice)
		mustDocs(t, st, 0, 0) // 1, 2
		data := []byte("kind,id,title,parent_id\ndocument,2,Moved title,100\ndocument,100,New parent,\n")
		res, _ := mustImport(t, ctx, st, data, CSV, ImportOptions{})
		if got := outcomes(res); got != "invalid,created" || !strings.Contains(res[0].Message, "parent 100 not found") {
			t.Fatalf("first run: %s %+v", got, res[0])
		}
		if d := mustDoc(t, st, 2); d.Version != 1 || d.Fields["title"] != "Doc 2" {
			t.Fatalf("an invalid row wrote: document 2 is v%d %q", d.Version, d.Fields["title"])
		}
		res, sum := mustImport(t, ctx, st, data, CSV, ImportOptions{})
		if got := outcomes(res); got != "updated,unchanged" {
			t.Fatalf("second run: %s %+v (%v)", got, res[0], sum)
		}
		if d := mustDoc(t, st, 2); d.Fields["title"] != "Moved title" || d.Fields["parent_id"] != int64(100) || d.Version != res[0].Version {
			t.Fatalf("after the second run document 2 is %+v, reported v%d", d.Fields, res[0].Version)
		}
		res, _ = mustImport(t, ctx, st, data, CSV, ImportOptions{})
		if got := outcomes(res); got != "unchanged,unchanged" {
			t.Fatalf("third run: %s %+v", got, res[0])
		}

		// Bob's lease on document 1's place in the tree: putting 2 under it is refused, and
		// the title is not written either.
		l, err := st.AcquireLease(as(t, bob), store.LeaseRequest{Kind: store.KindDocument, RecordID: 1, Group: st.Registry().TreeGroup(store.KindDocument), TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		res, _ = mustImport(t, ctx, st, []byte("kind,id,title,parent_id\ndocument,2,Leased title,1\n"), CSV, ImportOptions{})
		if r := res[0]; r.Outcome != Leased || r.Holder != "bob" || !strings.Contains(r.Message, "nothing written") {
			t.Errorf("a move under a leased document: %+v", r)
		}
		if d := mustDoc(t, st, 2); d.Fields["title"] != "Moved title" {
			t.Errorf("a leased row wrote the title: %+v", d.Fields)
		}
		if _, err := st.ReleaseLease(as(t, bob), l.Token); err != nil {
			t.Fatal(err)
		}

		// A cycle, and a tree too deep: both decided before the title is written.
		chain := mustDocs(t, st, 0) // a root, then 7 levels under it: depth 8
		for i := 0; i < store.MaxDepth-1; i++ {
			chain = append(chain, mustDocs(t, st, chain[len(chain)-1])...)
		}
		mustDocs(t, st, 1) // document 1 has a child: under the chain's leaf it would be depth 10
		for _, c := range []struct{ row, want string }{
			{"document,1,Cycle,1\n", "would create a cycle"},
			{fmt.Sprintf("document,%d,Cycle,%d\n", chain[0], chain[3]), "would create a cycle"},
			{fmt.Sprintf("document,1,Deep,%d\n", chain[len(chain)-2]), "levels deep"},
		} {
			res, _ := mustImport(t, ctx, st, []byte("kind,id,title,parent_id\n"+c.row), CSV, ImportOptions{KeyPrefix: c.row})
			if res[0].Outcome != Invalid || !strings.Contains(res[0].Message, c.want) {
				t.Errorf("%q: %+v, want invalid %q", c.row, res[0], c.want)
			}
			if d := mustDoc(t, st, res[0].ID); d.Version != 1 {
				t.Errorf("%q: an invalid row wrote document %d (v%d)", c.row, d.ID, d.Version)
			}
		}
	})
}

// raceStore is a store whose other writer changes the tree right after the import saves a
// row's fields and before it moves the document: between the import's check and its move.
type raceStore struct {
	store.Store
	between func(ctx context.Context)
}

func (s *raceStore) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	r, err := s.Store.UpdateRecord(ctx, kind, id, u)
	if err == nil && s.between != nil {
		s.between(ctx)
	}
	return r, err
}

// When another writer makes the move impossible after the row's fields were saved, the row
// is reported with what was written and why the move was refused, never as landed; its key
// does not count it as imported, so the next run finishes the row once the move is possible
// again (and reports it again while it is not).
func TestImport_MoveRefusedAfterTheFields(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		ctx := as(t, alice)
		ids := mustDocs(t, st, 0, 0, 0) // 1, 2, 3
		data := []byte("kind,id,version,title,parent_id\ndocument,2,1,Moved title,3\n")
		// Bob moves document 3 under 2 in between: 2 under 3 is now a cycle.
		rs := &raceStore{Store: st, between: func(context.Context) {
			if _, err := st.MoveRecord(as(t, bob), store.KindDocument, ids[2], store.Move{Parent: &ids[1]}); err != nil {
				t.Error(err)
			}
		}}
		res, _ := mustImport(t, ctx, rs, data, CSV, ImportOptions{})
		r := res[0]
		if r.Outcome != Invalid || !strings.Contains(r.Message, "title written (version 2), but the move was refused") ||
			!strings.Contains(r.Message, "cycle") || r.Version != 2 {
			t.Fatalf("first run: %+v", r)
		}
		// Not hidden: the next run does not call it imported, and says why it cannot finish.
		res, _ = mustImport(t, ctx, st, data, CSV, ImportOptions{})
		if r := res[0]; r.Outcome != Invalid || !strings.Contains(r.Message, "an earlier import of this row wrote its other fields (version 2) but not its move") {
			t.Fatalf("second run, the move still impossible: %+v", r)
		}
		// Bob puts 3 back at the root: the next run finishes the row with the move alone.
		if _, err := st.MoveRecord(as(t, bob), store.KindDocument, ids[2], store.Move{}); err != nil {
			t.Fatal(err)
		}
		res, _ = mustImport(t, ctx, st, data, CSV, ImportOptions{})
		if r := res[0]; r.Outcome != Updated || strings.Join(r.Fields, ",") != "parent_id" || r.Version != 3 || !strings.Contains(r.Message, "finishes the row") {
			t.Fatalf("third run: %+v", r)
		}
		if d := mustDoc(t, st, 2); d.Version != 3 || d.Fields["title"] != "Moved title" || d.Fields["parent_id"] != int64(3) {
			t.Fatalf("document 2 after the third run: v%d %+v", d.Version, d.Fields)
		}
		res, _ = mustImport(t, ctx, st, data, CSV, ImportOptions{})
		if r := res[0]; r.Outcome != Unchanged || !strings.Contains(r.Message, "imported before") {
			t.Fatalf("fourth run: %+v", r)
		}
	})
}

// --all-or-nothing writes nothing when a row would fail because of a row before it in the
// same file: a cycle two moves make, a sku two rows give to different products (compared by
// key), a sku a product of the store has; and it writes every row when a row needs an earlier
// one (a parent the file creates first, a sku an earlier row frees).
func TestImport_AllOrNothingRowsTogether(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		ctx := as(t, alice)
		mustProducts(t, st, 3)
		mustDocs(t, st, 0, 0, 0, 0, 0, 0) // 1..6
		p3, err := st.FindRecord(ctx, store.KindProduct, 3)
		if err != nil {
			t.Fatal(err)
		}
		sku3 := p3.Fields["sku"].(string)
		for _, c := range []struct {
			name, file, want string
		}{
			{"cycle of two moves", "kind,id,title,parent_id\ndocument,5,AON title,6\ndocument,6,AON six,5\n", "would create a cycle"},
			{"sku twice in the file", "kind,sku,name\nproduct,DUP-1,first\nproduct, dup-1,second\n", "row 1 of this file gives the same sku"},
			{"sku of the store", "kind,sku,name\nproduct,NEW-1,first\nproduct," + strings.ToLower(sku3) + ",second\n", "already exists (product 3"},
			{"sku given to an existing product twice", "kind,id,sku\nproduct,1,TWICE\nproduct,2,twice\n", "gives the same sku to product 1"},
			// Past storeSKUSearches rows the store's skus are read once, not searched for.
			{"sku of the store, many rows", "kind,sku,name\n" + manySKUs(storeSKUSearches+5) + "product,\u00a0" + sku3 + ",last\n", "already exists (product 3"},
			{"sku twice, many rows", "kind,sku,name\n" + manySKUs(storeSKUSearches+5) + "product,M-00001,last\n", "row 1 of this file gives the same sku"},
		} {
			t.Run(c.name, func(t *testing.T) {
				before := versionsOf(t, st)
				docs := docVersions(t, st)
				res, sum, err := importAll(ctx, st, strings.NewReader(c.file), CSV, ImportOptions{KeyPrefix: c.name}, true)
				if err != nil {
					t.Fatal(err)
				}
				last := res[len(res)-1]
				if sum[Invalid] != 1 || sum[NotWritten] != len(res)-1 || last.Outcome != Invalid || !strings.Contains(last.Message, c.want) {
					t.Fatalf("%v: %+v, want the last row invalid %q and the others not written", sum, last, c.want)
				}
				if after := versionsOf(t, st); after != before {
					t.Errorf("products written:\n before %s\n after  %s", before, after)
				}
				if after := docVersions(t, st); after != docs {
					t.Errorf("documents written:\n before %s\n after  %s", docs, after)
				}
			})
		}
		for _, c := range []struct{ name, file string }{
			{"parent created first", "kind,id,title,parent_id\ndocument,100,New parent,\ndocument,2,Moved,100\ndocument,3,Deeper,2\n"},
			{"sku freed first", "kind,id,sku\nproduct,3,FREED-3\nproduct,1," + sku3 + "\n"},
		} {
			t.Run(c.name, func(t *testing.T) {
				res, sum, err := importAll(ctx, st, strings.NewReader(c.file), CSV, ImportOptions{KeyPrefix: c.name}, true)
				if err != nil {
					t.Fatal(err)
				}
				if sum.ExitOutcome() != "" || sum[NotWritten] != 0 {
					t.Fatalf("%v: %+v", sum, res)
				}
			})
		}
		if d := mustDoc(t, st, 3); d.Fields["parent_id"] != int64(2) {
			t.Errorf("document 3: %+v", d.Fields)
		}
	})
}

// manySKUs is n CSV rows that create products M-00001... (kind,sku,name).
func manySKUs(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "product,M-%05d,Many %d\n", i, i)
	}
	return b.String()
}

// docVersions lists every document's id, version and parent.
func docVersions(t *testing.T, st store.Store) string {
	t.Helper()
	recs, err := st.FindRecords(context.Background(), store.Filter{Kind: store.KindDocument})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%d:v%d:%v ", r.ID, r.Version, r.Fields["parent_id"])
	}
	return b.String()
}

// lateStore is a store as an import saw it before another import of the same file saved its
// rows: the key not yet recorded, the record at its old version. Its saves are the store's.
type lateStore struct {
	store.Store
	old map[int64]*store.Record
}

func (s *lateStore) FindKey(context.Context, string, string) (*store.KeyRecord, error) {
	return nil, store.Errorf(store.ENOTFOUND, "no key")
}

func (s *lateStore) FindRecord(ctx context.Context, kind store.Kind, id int64) (*store.Record, error) {
	if r, ok := s.old[id]; ok && kind == store.KindProduct {
		return r, nil
	}
	return s.Store.FindRecord(ctx, kind, id)
}

// Two imports of the same file at once: each row is saved once, and the import whose save
// the store answered from the other's key reports it unchanged (imported before), not
// updated. lateStore makes the interleaving certain: the second import looked at the key and
// read the record before the first one saved.
func TestImport_ConcurrentRunsReportOneWrite(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		ctx := as(t, alice)
		mustProducts(t, st, 5)
		old := map[int64]*store.Record{}
		for id := int64(1); id <= 5; id++ {
			r, err := st.FindRecord(ctx, store.KindProduct, id)
			if err != nil {
				t.Fatal(err)
			}
			old[id] = r
		}
		var b strings.Builder
		b.WriteString("kind,id,name\n")
		for id := 1; id <= 5; id++ {
			fmt.Fprintf(&b, "product,%d,Renamed %d\n", id, id)
		}
		data := []byte(b.String())
		_, sum := mustImport(t, ctx, st, data, CSV, ImportOptions{})
		if sum[Updated] != 5 {
			t.Fatalf("first import: %v", sum)
		}
		before := versionsOf(t, st)
		res, sum := mustImport(t, ctx, &lateStore{Store: st, old: old}, data, CSV, ImportOptions{})
		if sum[Unchanged] != 5 || !strings.Contains(res[0].Message, "imported before") || res[0].Version != 2 {
			t.Fatalf("the other import: %v %+v, want every row unchanged (imported before)", sum, res[0])
		}
		if after := versionsOf(t, st); after != before {
			t.Errorf("the other import wrote:\n before %s\n after  %s", before, after)
		}
	})
}

// twoHandles opens two store values on one fresh database (as two processes would): the
// SQLite file, or the PostgreSQL schema.
func twoHandles(t *testing.T, backend string) (store.Store, store.Store) {
	t.Helper()
	var open func() (store.Store, error)
	switch backend {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "t.db")
		open = func() (store.Store, error) { return sqlite.Open(context.Background(), path, store.Options{}) }
	default:
		dsn := pgtest.DSN(t)
		open = func() (store.Store, error) { return postgres.Open(context.Background(), dsn, store.Options{}) }
	}
	var out [2]store.Store
	for i := range out {
		st, err := open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		out[i] = st
	}
	return out[0], out[1]
}

// Two imports of one file of moves at once, from two store values (two processes): every row
// lands once, reported updated by one import and unchanged (imported before) by the other;
// none is a conflict, however their steps interleave.
func TestImport_ConcurrentMoves(t *testing.T) {
	backends := []string{"sqlite"}
	if os.Getenv("TANDEM_TEST_POSTGRES") != "" {
		backends = append(backends, "postgres")
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			a, b := twoHandles(t, backend)
			const n = 60
			parents := make([]int64, 2*n)
			ids := mustDocs(t, a, parents...)
			var f strings.Builder
			f.WriteString("kind,id,title,parent_id\n")
			for i := n; i < 2*n; i++ {
				fmt.Fprintf(&f, "document,%d,Moved %d,%d\n", ids[i], i, ids[i-n])
			}
			data := []byte(f.String())
			var sums [2]Summary
			var errs [2]error
			var wg sync.WaitGroup
			for i, st := range []store.Store{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, sums[i], errs[i] = importAll(as(t, alice), st, bytes.NewReader(data), CSV, ImportOptions{KeyPrefix: "same"}, false)
				}()
			}
			wg.Wait()
			for i := range errs {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
			}
			if sums[0][Updated]+sums[1][Updated] != n || sums[0][Unchanged]+sums[1][Unchanged] != n {
				t.Fatalf("%v and %v: want %d rows updated in all, the rest unchanged", sums[0], sums[1], n)
			}
			for i := n; i < 2*n; i++ {
				if d := mustDoc(t, a, ids[i]); d.Version != 3 || d.Fields["parent_id"] != ids[i-n] {
					t.Errorf("document %d: v%d %+v", ids[i], d.Version, d.Fields)
				}
			}
		})
	}
}
