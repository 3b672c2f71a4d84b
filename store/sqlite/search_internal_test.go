package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestSearch_UsesTheIndex: a search of a trigram or more is answered by the FTS5 tables of
// the searched fields, not by reading the products table; a shorter one reads the table.
// The plan is SQLite's own (EXPLAIN QUERY PLAN) of the query FindRecords runs.
func TestSearch_UsesTheIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("a size or query-plan test with no goroutines: the race step (-short) leaves it to the plain run")
	}
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plan := func(f store.Filter) string {
		t.Helper()
		cond, args, err := db.searchCondition(f)
		if err != nil {
			t.Fatal(err)
		}
		return queryPlan(t, db, "SELECT id FROM products WHERE "+cond+" ORDER BY id LIMIT 200", args)
	}
	p := plan(store.Filter{Kind: store.KindProduct, Search: "Lamp", AfterID: 10, Limit: 200})
	if !strings.Contains(p, "SCAN products_fts VIRTUAL TABLE INDEX") {
		t.Errorf("plan does not look the query up in the kind's index:\n%s", p)
	}
	if strings.Contains(p, "SCAN products\n") || strings.HasSuffix(p, "SCAN products") {
		t.Errorf("an indexed search scans the products table:\n%s", p)
	}
	p = plan(store.Filter{Kind: store.KindProduct, Search: "la", Limit: 200})
	if strings.Contains(p, "_fts") {
		t.Errorf("a query shorter than a trigram cannot use the index, plan:\n%s", p)
	}
	if !strings.Contains(p, "SCAN products_search") {
		t.Errorf("a short query does not scan the kind's side table:\n%s", p)
	}
	if strings.Contains(p, "SCAN products\n") || strings.HasSuffix(p, "SCAN products") {
		t.Errorf("a short query scans the products table, not the folds:\n%s", p)
	}
}

// TestSearch_IndexFollowsWrites: after creates, saves of each folded field, relative saves,
// a delete by another program and a delete and restore by the store, every FTS5 table agrees
// with its content table (FTS5's own integrity-check, which compares the index with the
// side table), the side tables hold rows of existing records only, and a save writes the
// folds of the fields it writes and no other.
func TestSearch_IndexFollowsWrites(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	var ids []int64
	for i, name := range []string{"Straße", "Ёлка", "İzmir lamp"} {
		r, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "S-" + string(rune('A'+i)), "name": name,
			"description": "A long text about " + name, "categories": []string{"Küche"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if _, err := db.UpdateRecord(ctx, store.KindProduct, ids[0], store.Update{BaseVersion: 1,
		Set: store.Values{"description": "Neu", "categories": []string{"Garten"}, "name": "Weg"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(ctx, store.KindProduct, ids[1], store.Update{Add: map[string]int64{"stock": 4}}); err != nil {
		t.Fatal(err)
	}
	doc, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Ψυχή", "body": "Σοφία\nline two", "tags": []string{"HR"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(ctx, store.KindDocument, doc.ID, store.Update{BaseVersion: 1, Set: store.Values{"body": "new body"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(t.Context(), "DELETE FROM products WHERE id = ?", ids[2]); err != nil {
		t.Fatal(err)
	}

	// A title edit leaves the body's side row alone: one set to a marker stays as it is.
	if _, err := db.write.ExecContext(t.Context(), "UPDATE documents_search SET fold = 'marker' WHERE key = ?", mustSearchKey(t, db, "documents", "body", doc.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(ctx, store.KindDocument, doc.ID, store.Update{BaseVersion: 2, Set: store.Values{"title": "Ψυχή 2"}}); err != nil {
		t.Fatal(err)
	}
	var body string
	if err := db.read.QueryRowContext(t.Context(), "SELECT fold FROM documents_search WHERE key = ?", mustSearchKey(t, db, "documents", "body", doc.ID)).Scan(&body); err != nil || body != "marker" {
		t.Errorf("body's fold after a title edit = %q, %v; want it untouched (marker)", body, err)
	}
	if _, err := db.UpdateRecord(ctx, store.KindDocument, doc.ID, store.Update{BaseVersion: 3, Set: store.Values{"body": "New Body"}}); err != nil {
		t.Fatal(err)
	}

	// A store delete takes the side rows with the record; its restore writes them again.
	gone, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Ölmühle", "body": "Wassermühle am Bach", "tags": []string{"Mühle"}})
	if err != nil {
		t.Fatal(err)
	}
	sideRows := func(id int64) int {
		t.Helper()
		var n int
		if err := db.read.QueryRowContext(t.Context(), "SELECT count(*) FROM documents_search WHERE key >> ? = ?", slotBits, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := sideRows(gone.ID); n != 3 {
		t.Errorf("a new document has %d side rows, want 3 (title, body, tags)", n)
	}
	if _, err := db.DeleteRecord(ctx, store.KindDocument, gone.ID, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if n := sideRows(gone.ID); n != 0 {
		t.Errorf("a deleted document keeps %d side rows", n)
	}
	if _, err := db.RestoreRecord(ctx, store.KindDocument, gone.ID, store.Restore{}); err != nil {
		t.Fatal(err)
	}
	if n := sideRows(gone.ID); n != 3 {
		t.Errorf("a restored document has %d side rows, want 3", n)
	}
	var other int
	if err := db.read.QueryRowContext(t.Context(), "SELECT count(*) FROM products_search WHERE key >> ? = ?", slotBits, ids[2]).Scan(&other); err != nil || other != 0 {
		t.Errorf("a product another program deleted keeps %d side rows (%v)", other, err)
	}
	for _, kind := range sampleSchema.Kinds() {
		st, _ := searchTable(sampleSchema, kind)
		if _, err := db.write.ExecContext(t.Context(), "INSERT INTO "+st+" ("+st+", rank) VALUES ('integrity-check', 1)"); err != nil {
			t.Errorf("%s: %v", st, err)
		}
	}
	for q, want := range map[string]int{"neu": 1, "garten": 1, "küche": 1, "long text": 1, "izmir": 0,
		"new body": 1, "ψυχή 2": 1, "marker": 0, "wassermühle": 1, "ölmühle": 1, "MÜHLE": 1, "öl": 1, "ne": 1} {
		kind := store.KindProduct
		if strings.Contains("new body ψυχή 2 marker wassermühle ölmühle MÜHLE öl", q) {
			kind = store.KindDocument
		}
		rs, err := db.FindRecords(t.Context(), store.Filter{Kind: kind, Search: q})
		if err != nil || len(rs) != want {
			t.Errorf("search %q = %d records, %v; want %d", q, len(rs), err, want)
		}
	}
}

// mustSearchKey returns the key of the search row of field of record id in table's search
// table.
func mustSearchKey(t *testing.T, db *DB, table, field string, id int64) int64 {
	t.Helper()
	slot, err := searchSlot(t.Context(), db.read, table, field)
	if err != nil {
		t.Fatal(err)
	}
	return searchKey(id, slot)
}
