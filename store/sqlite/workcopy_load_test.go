package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// loadSource returns n products as a source would hand them over, with values that give
// every index and search fold something to hold.
func loadSource(n int) []*store.Record {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	words := []string{"Lamp", "Straße", "chair", "ÉCRAN", "desk"}
	out := make([]*store.Record, n)
	for i := range out {
		out[i] = &store.Record{Kind: store.KindProduct, ID: int64(3*i + 5), Version: int64(i%7 + 1), UpdatedBy: fmt.Sprintf("user%d", i%3),
			UpdatedAt: at.Add(time.Duration(i) * time.Second), Fields: store.Values{
				"sku": fmt.Sprintf("SKU-%05d", i), "name": fmt.Sprintf("%s %d", words[i%len(words)], i),
				"description": strings.Repeat(words[(i+1)%len(words)]+" ", i%4+1), "price": int64(100 + i), "stock": int64(i % 50),
				"categories": []string{words[i%2], words[2+i%3]}}}
	}
	return out
}

// newCopy opens a fresh working copy of kinds, at feed position pos of a source named "src",
// as the file name in a temporary directory; it is closed when the test ends.
func newCopy(t *testing.T, name string, pos int64, kinds ...store.Kind) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	db, err := sqlite.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.StartCopy(context.Background(), store.CopyState{SourceID: "src", Source: "somewhere", Kinds: kinds, Position: pos}); err != nil {
		t.Fatal(err)
	}
	return db, path
}

// records hands recs over one by one as a store.RecordStreamer does, in one Record whose
// fields are overwritten for the next: a load that kept a record it was handed, rather than
// what it had encoded of it, would write the wrong values.
func records(recs []*store.Record) func(put func(*store.Record) error) error {
	return func(put func(*store.Record) error) error {
		r := &store.Record{Fields: store.Values{}}
		for _, src := range recs {
			fields := r.Fields
			clear(fields)
			maps.Copy(fields, src.Fields)
			*r = *src
			r.Fields = fields
			if err := put(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// schemaOf returns the DDL of everything in the file's schema, by name.
func schemaOf(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, coalesce(sql, '') FROM sqlite_master`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		out[name] = ddl
	}
	return out
}

// loadSearches are the searches a loaded copy must answer as an applied one does: queries
// of a trigram or more (the index, once built), a shorter one (always a scan), sorted
// listings.
var loadSearches = []store.Filter{{Kind: store.KindProduct}, {Kind: store.KindProduct, Search: "strasse"},
	{Kind: store.KindProduct, Search: "écran 1"}, {Kind: store.KindProduct, Search: "SKU-0099"},
	{Kind: store.KindProduct, Search: "am"}, {Kind: store.KindProduct, Search: "chair", AfterID: 600, Limit: 20},
	{Kind: store.KindProduct, Sort: "price", Limit: 50}, {Kind: store.KindProduct, Sort: "name", Limit: 50}}

// mustSameSearches fails the test unless got finds, for each of filters, the records want
// finds, through FindRecords and through StreamRecords.
func mustSameSearches(t *testing.T, when string, got, want *sqlite.DB, filters []store.Filter) {
	t.Helper()
	ctx := context.Background()
	stream := func(db *sqlite.DB, f store.Filter) []int64 {
		var ids []int64
		f.Limit = 0
		if err := db.StreamRecords(ctx, f, nil, func(r *store.Record) error { ids = append(ids, r.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	for _, f := range filters {
		w, err := want.FindRecords(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := got.FindRecords(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) == 0 {
			t.Fatalf("%+v finds nothing in the applied copy: the test data is wrong", f)
		}
		// The two copies' own saves (between the searches) differ in their time.
		same := len(g) == len(w)
		for i := 0; same && i < len(g); i++ {
			same = g[i].ID == w[i].ID && g[i].Version == w[i].Version && reflect.DeepEqual(g[i].Fields, w[i].Fields)
		}
		if !same {
			t.Fatalf("%s: %+v: the loaded copy has %d records, the applied one %d (or they differ)", when, f, len(g), len(w))
		}
		if f.Sort == "" {
			if g, w := stream(got, f), stream(want, f); !reflect.DeepEqual(g, w) {
				t.Fatalf("%s: %+v streamed: the loaded copy has %d records, the applied one %d (or they differ)", when, f, len(g), len(w))
			}
		}
	}
}

// mustIntactFTS runs FTS5's integrity check on every FTS5 table of the file: it compares
// each index with its content table.
func mustIntactFTS(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var names []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%fts5%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	if len(names) == 0 {
		t.Fatal("no FTS5 table in the file")
	}
	for _, n := range names {
		if _, err := db.Exec(`INSERT INTO ` + n + ` (` + n + `) VALUES ('integrity-check')`); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
}

// TestDB_LoadCopyAsApplySource: products loaded in bulk are in the copy exactly as
// ApplySource writes them (values, versions, authors, bases); search finds the same ones
// before the search index is built (the load leaves it, and only it, to be built) and
// after; once built, the schema is what it was (indexes and triggers back) and the indexes
// hold what their tables hold, saves made in between included; and a local save after the
// load goes to the outbox.
func TestDB_LoadCopyAsApplySource(t *testing.T) {
	ctx := context.Background()
	recs := loadSource(1000) // several INSERTs, the last one short
	loaded, loadedPath := newCopy(t, "loaded.db", 3, store.KindProduct)
	applied, appliedPath := newCopy(t, "applied.db", 3, store.KindProduct)
	before := schemaOf(t, loadedPath)
	if err := loaded.LoadCopy(ctx, store.KindProduct, records(recs)); err != nil {
		t.Fatal(err)
	}
	if err := applied.ApplySource(ctx, recs, store.FeedPoint{}); err != nil {
		t.Fatal(err)
	}
	pending := schemaOf(t, loadedPath)
	for name, ddl := range before {
		ddl = strings.ReplaceAll(ddl, `"`, "")
		if _, ok := pending[name]; !ok && !(strings.Contains(ddl, "CREATE TRIGGER products_fts_") && strings.Contains(ddl, "ON products_search")) {
			t.Errorf("the load took out %s, which is not a trigger of a products search index", name)
		}
	}
	for name := range pending {
		if _, ok := before[name]; !ok {
			t.Errorf("the load made %s", name)
		}
	}
	if len(pending) != len(before)-3 {
		t.Errorf("the load left %d schema objects, want the %d before without the search index's 3 triggers", len(pending), len(before))
	}
	mustSameSearches(t, "search index not built", loaded, applied, loadSearches)
	r := recs[10]
	for _, db := range []*sqlite.DB{loaded, applied} {
		if _, err := db.UpdateRecord(wcEditor("alice"), store.KindProduct, r.ID, store.Update{BaseVersion: r.Version, Set: store.Values{"name": "renamed"}}); err != nil {
			t.Fatal(err)
		}
	}
	edited := append(loadSearches, store.Filter{Kind: store.KindProduct, Search: "renamed"})
	mustSameSearches(t, "saved while the index was not built", loaded, applied, edited)
	if built, err := loaded.BuildSearchIndex(ctx); err != nil || !built {
		t.Fatalf("build the search index of a loaded copy: %v, %v; want it built", built, err)
	}
	if built, err := loaded.BuildSearchIndex(ctx); err != nil || built {
		t.Fatalf("build the search index again: %v, %v; want nothing left to build", built, err)
	}
	if after := schemaOf(t, loadedPath); !reflect.DeepEqual(after, before) {
		t.Fatalf("the load and the build changed the schema:\nbefore %v\nafter  %v", before, after)
	}
	if a, b := schemaOf(t, loadedPath), schemaOf(t, appliedPath); !reflect.DeepEqual(a, b) {
		t.Fatalf("loaded and applied copies differ in schema")
	}
	mustIntactFTS(t, loadedPath)
	mustSameSearches(t, "search index built", loaded, applied, edited)
	if _, err := loaded.CreateRecord(wcEditor("alice"), store.KindProduct, store.Values{"sku": "sku-00042", "name": "dup"}); store.ErrorCode(err) != store.EINVALID && store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("a second product with the sku key of a loaded one: %v, want it refused", err)
	}
	es := mustOutbox(t, loaded)
	if len(es) != 1 || es[0].ID != r.ID || es[0].BaseVersion != r.Version {
		t.Fatalf("outbox after a local save on a loaded copy: %+v, want one save of %d on base %d", es, r.ID, r.Version)
	}
}

// TestDB_LoadCopySearchBuiltAtOpen: a loaded copy's search index is built by the first open
// with write access, not by one that may not write (which still finds what the index
// would), and a store whose build is done, or that never had one to do, reports none.
func TestDB_LoadCopySearchBuiltAtOpen(t *testing.T) {
	ctx := context.Background()
	recs := loadSource(1000)
	loaded, path := newCopy(t, "loaded.db", 3, store.KindProduct)
	applied, _ := newCopy(t, "applied.db", 3, store.KindProduct)
	before := schemaOf(t, path)
	if err := loaded.LoadCopy(ctx, store.KindProduct, records(recs)); err != nil {
		t.Fatal(err)
	}
	if err := applied.ApplySource(ctx, recs, store.FeedPoint{}); err != nil {
		t.Fatal(err)
	}
	if err := loaded.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := sqlite.OpenWith(ctx, path, store.Options{}, sqlite.OpenConfig{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, ok := schemaOf(t, path)["products_name_fts_insert"]; ok {
		t.Fatal("a read-only open built the search index")
	}
	filters := loadSearches[:6]
	mustSameSearches(t, "read-only, index not built", ro, applied, filters)
	rw, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if after := schemaOf(t, path); !reflect.DeepEqual(after, before) {
		t.Fatalf("the first open with write access did not build the search index:\nbefore %v\nafter  %v", before, after)
	}
	mustIntactFTS(t, path)
	mustSameSearches(t, "read-only, index built since it was opened", ro, applied, filters)
	mustSameSearches(t, "index built at open", rw, applied, filters)
	if built, err := rw.BuildSearchIndex(ctx); err != nil || built {
		t.Fatalf("build after the open built it: %v, %v; want nothing left to build", built, err)
	}
	if built, err := applied.BuildSearchIndex(ctx); err != nil || built {
		t.Fatalf("build on a copy written by ApplySource: %v, %v; want nothing to build", built, err)
	}
}

// TestDB_LoadCopyAllOrNothing: a load that fails (the reading of the source, or records
// that break the store's sku rules, found while they are written or after) leaves the copy without products and with its schema,
// and a load after it works.
func TestDB_LoadCopyAllOrNothing(t *testing.T) {
	ctx := context.Background()
	db, path := newCopy(t, "wc.db", 3, store.KindProduct)
	before := schemaOf(t, path)
	cut := errors.New("connection cut")
	recs := loadSource(700)
	err := db.LoadCopy(ctx, store.KindProduct, func(put func(*store.Record) error) error {
		if err := records(recs[:600])(put); err != nil {
			return err
		}
		return cut
	})
	if !errors.Is(err, cut) {
		t.Fatalf("load whose reading failed: %v, want the reading's error", err)
	}
	dup := loadSource(10)
	dup[9].Fields = dup[9].Fields.Clone()
	dup[9].Fields["sku"] = "sku-00003" // the same sku key as dup[3]'s SKU-00003
	if err := db.LoadCopy(ctx, store.KindProduct, records(dup)); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("load of two products with one sku key: %v, want EINVALID", err)
	}
	// A write that fails while the records still come (the same sku twice, which the
	// load's UNIQUE index refuses at once) ends the reading, with the write's error.
	same := loadSource(5000)
	same[300].Fields = same[300].Fields.Clone()
	same[300].Fields["sku"] = same[10].Fields["sku"]
	put := 0
	err = db.LoadCopy(ctx, store.KindProduct, func(p func(*store.Record) error) error {
		return records(same)(func(r *store.Record) error {
			put++
			return p(r)
		})
	})
	if err == nil || strings.Contains(err.Error(), "load stopped") {
		t.Fatalf("load of one sku twice: %v, want the write's error", err)
	}
	if put == len(same) {
		// The chunks waiting for the writer hold a few thousand records at most.
		t.Fatalf("all %d records were put although the second chunk's write failed: the reading was not cut short", put)
	}
	for _, what := range []string{"failed", "refused", "broken"} {
		if n, err := db.CountRecords(ctx, store.KindProduct); err != nil || n != 0 {
			t.Fatalf("after the %s load the copy holds %d products (%v), want none", what, n, err)
		}
	}
	if after := schemaOf(t, path); !reflect.DeepEqual(after, before) {
		t.Fatalf("a failed load changed the schema")
	}
	if err := db.LoadCopy(ctx, store.KindProduct, records(recs)); err != nil {
		t.Fatal(err)
	}
	if n, err := db.CountRecords(ctx, store.KindProduct); err != nil || n != len(recs) {
		t.Fatalf("load after a failed one: %d products (%v), want %d", n, err, len(recs))
	}
}

// TestDB_LoadCopyRefuses: a load goes only into a fresh copy, and only of products.
func TestDB_LoadCopyRefuses(t *testing.T) {
	ctx := context.Background()
	db, _ := newCopy(t, "wc.db", 3, store.KindProduct)
	if err := db.LoadCopy(ctx, store.KindDocument, records(nil)); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("load of documents: %v, want EINVALID", err)
	}
	recs := loadSource(3)
	if err := db.ApplySource(ctx, recs[:1], store.FeedPoint{}); err != nil {
		t.Fatal(err)
	}
	if err := db.LoadCopy(ctx, store.KindProduct, records(recs[1:])); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("load into a copy that holds products: %v, want EINVALID", err)
	}
	plain, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "plain.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.LoadCopy(ctx, store.KindProduct, records(recs)); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("load into a store that is not a working copy: %v, want ENOTFOUND", err)
	}
}

// TestDB_LoadCopyValuesAsTheyAre: the load binds every value as it is: empty and NUL-holding
// texts, non-ASCII, a text far larger than the load's first argument buffer, negative and
// zero numbers, a time and no time; and what it wrote reads back as it was handed over.
func TestDB_LoadCopyValuesAsTheyAre(t *testing.T) {
	ctx := context.Background()
	db, _ := newCopy(t, "wc.db", 3, store.KindProduct)
	recs := loadSource(600)
	huge := strings.Repeat("Größe ünd ß, ", 40_000) // ~560 KB, one value
	synced := time.Date(2026, 12, 1, 10, 5, 0, 123_000_000, time.UTC)
	odd := []store.Values{
		{"sku": "E-1", "name": "", "description": "", "categories": []string{}, "price": int64(0), "stock": int64(-7)},
		{"sku": "E-2", "name": "nul\x00in the middle", "description": huge, "categories": []string{"b\"c", "ä"}, // a set: sorted, as the store keeps it
			"price": int64(1 << 40), "stock": int64(0), "thumbnail": "t.png", "last_sync_at": synced},
		{"sku": "Ｅ-３", "name": "日本語の名前", "description": "line\nbreak\ttab", "categories": []string{"x"}},
	}
	for i, v := range odd {
		r := recs[100*i+50]
		r.Fields = v
	}
	if err := db.LoadCopy(ctx, store.KindProduct, records(recs)); err != nil {
		t.Fatal(err)
	}
	for _, want := range recs {
		got, err := db.FindRecord(ctx, store.KindProduct, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range want.Fields {
			if g := got.Fields[name]; !reflect.DeepEqual(g, v) && !(isEmptySet(g) && isEmptySet(v)) {
				t.Errorf("product %d %s: read back %#.80v, handed over %#.80v", want.ID, name, g, v)
			}
		}
		if got.Version != want.Version || got.UpdatedBy != want.UpdatedBy || !got.UpdatedAt.Equal(want.UpdatedAt) {
			t.Errorf("product %d: version %d by %s at %v, want %d by %s at %v", want.ID,
				got.Version, got.UpdatedBy, got.UpdatedAt, want.Version, want.UpdatedBy, want.UpdatedAt)
		}
	}
	found, err := db.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: "größe ünd"})
	if err != nil || len(found) != 1 || found[0].ID != recs[150].ID {
		t.Fatalf("search of the large text: %d found (%v), want product %d", len(found), err, recs[150].ID)
	}
}

func isEmptySet(v any) bool { s, ok := v.([]string); return ok && len(s) == 0 }

// TestDB_LoadCopyWaitsThenStops: the load waits for another connection's write transaction
// to end, as every write of the store does (busy_timeout), and a load whose context ends
// stops, with the context's error, and leaves the copy as it was.
func TestDB_LoadCopyWaitsThenStops(t *testing.T) {
	ctx := context.Background()
	db, path := newCopy(t, "wc.db", 3, store.KindProduct)
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		released <- time.Now()
		_, _ = conn.ExecContext(ctx, "COMMIT")
	}()
	recs := loadSource(300)
	if err := db.LoadCopy(ctx, store.KindProduct, records(recs[:100])); err != nil {
		t.Fatalf("load while another connection writes: %v, want it to wait and succeed", err)
	}
	select {
	case <-released:
	default:
		t.Fatal("the load ended before the other writer let go of the file")
	}
	conn.Close()

	db2, _ := newCopy(t, "wc2.db", 3, store.KindProduct)
	cctx, cancel := context.WithCancel(ctx)
	err = db2.LoadCopy(cctx, store.KindProduct, func(put func(*store.Record) error) error {
		for i, r := range recs {
			if i == 150 {
				cancel()
				time.Sleep(50 * time.Millisecond) // the interrupt lands on a statement or between them
			}
			if err := put(r); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("load whose context ended: %v, want context.Canceled", err)
	}
	if n, err := db2.CountRecords(ctx, store.KindProduct); err != nil || n != 0 {
		t.Fatalf("after the stopped load the copy holds %d products (%v), want none", n, err)
	}
	if err := db2.LoadCopy(ctx, store.KindProduct, records(recs)); err != nil {
		t.Fatalf("load after a stopped one: %v", err)
	}
}
