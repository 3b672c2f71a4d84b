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
		rows, err := db.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN SELECT id FROM products WHERE "+cond+" ORDER BY id LIMIT 200", args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		return strings.Join(lines, "\n")
	}
	p := plan(store.Filter{Kind: store.KindProduct, Search: "Lamp", AfterID: 10, Limit: 200})
	for _, f := range db.reg.SearchFields(store.KindProduct) {
		if !strings.Contains(p, "SCAN products_"+f.Name+"_fts VIRTUAL TABLE INDEX") {
			t.Errorf("plan does not look %s up in its index:\n%s", f.Name, p)
		}
	}
	if strings.Contains(p, "SCAN products\n") || strings.HasSuffix(p, "SCAN products") {
		t.Errorf("an indexed search scans the products table:\n%s", p)
	}
	if p := plan(store.Filter{Kind: store.KindProduct, Search: "la", Limit: 200}); strings.Contains(p, "_fts") {
		t.Errorf("a query shorter than a trigram cannot use the index, plan:\n%s", p)
	}
}

// TestSearch_IndexFollowsWrites: after creates, saves of each folded field, relative saves
// and a delete by another program, every FTS5 table agrees with its content table (FTS5's
// own integrity-check, which compares the index with the folded columns).
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
	for _, kind := range store.Kinds {
		for _, name := range store.FoldedFields(kind) {
			st, _ := searchTable(kind, name)
			if _, err := db.write.ExecContext(t.Context(), "INSERT INTO "+st+" ("+st+", rank) VALUES ('integrity-check', 1)"); err != nil {
				t.Errorf("%s: %v", st, err)
			}
		}
	}
	for q, want := range map[string]int{"neu": 1, "garten": 1, "küche": 1, "long text": 1, "izmir": 0, "new body": 1} {
		kind := store.KindProduct
		if q == "new body" {
			kind = store.KindDocument
		}
		rs, err := db.FindRecords(t.Context(), store.Filter{Kind: kind, Search: q})
		if err != nil || len(rs) != want {
			t.Errorf("search %q = %d records, %v; want %d", q, len(rs), err, want)
		}
	}
}
