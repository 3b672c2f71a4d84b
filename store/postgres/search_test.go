package postgres

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// TestSearch_UsesTheIndex: every searched field's search table has a pg_trgm index that the
// search FindRecords runs can use (the planner takes it once reading the table in id order or
// whole is ruled out, as on a large table where the word is rare); a query shorter than a
// trigram is strpos(), which no index answers.
func TestSearch_UsesTheIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("a size or query-plan test with no goroutines: the race step (-short) leaves it to the plain run")
	}
	db := mustOpen(t, pgtest.DSN(t))
	plan := func(query string) string {
		t.Helper()
		conn, err := db.pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		tx, err := conn.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(t.Context())
		if _, err := tx.Exec(t.Context(), "SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off"); err != nil {
			t.Fatal(err)
		}
		cond, args := db.searchCondition(store.Filter{Kind: store.KindProduct, Search: query, AfterID: 10, Limit: 200}, 0)
		rows, err := tx.Query(t.Context(), "EXPLAIN SELECT id FROM products WHERE "+cond+" ORDER BY id LIMIT 200", args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, s)
		}
		return strings.Join(lines, "\n")
	}
	p := plan("Lamp")
	for _, f := range db.Registry().SearchFields(store.KindProduct) {
		if !strings.Contains(p, "Bitmap Index Scan on products_"+f.Name+"_search_trgm") {
			t.Errorf("plan does not use the trigram index of %s:\n%s", f.Name, p)
		}
	}
	if p := plan("la"); strings.Contains(p, "_search") {
		t.Errorf("a query shorter than a trigram cannot use the index, plan:\n%s", p)
	}
	if got := likeContains(`50%_a\b`); got != `%50\%\_a\\b%` {
		t.Errorf("likeContains = %q", got)
	}
}

// TestSearch_TablesFollowWrites: the search tables follow creates, saves of each folded field
// and deletes by another program, and a save of other fields (a title, the stock) leaves the
// long text's row, and so its index entries, alone.
func TestSearch_TablesFollowWrites(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	doc, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Ψυχή", "body": "Σοφία\nline two", "tags": []string{"HR"}})
	if err != nil {
		t.Fatal(err)
	}
	rowVersion := func() (fold, xmin string) {
		t.Helper()
		if err := db.pool.QueryRow(t.Context(), "SELECT fold, xmin::text FROM documents_body_search WHERE id = $1", doc.ID).Scan(&fold, &xmin); err != nil {
			t.Fatal(err)
		}
		return fold, xmin
	}
	fold, x1 := rowVersion()
	if fold != "σοφία\nline two" {
		t.Fatalf("body's search row = %q", fold)
	}
	if _, err := db.UpdateRecord(ctx, store.KindDocument, doc.ID, store.Update{BaseVersion: 1, Set: store.Values{"title": "Νους"}}); err != nil {
		t.Fatal(err)
	}
	if _, x2 := rowVersion(); x2 != x1 {
		t.Error("a title save rewrote the body's search row")
	}
	if _, err := db.UpdateRecord(ctx, store.KindDocument, doc.ID, store.Update{BaseVersion: 2, Set: store.Values{"body": "ΝΈΟ"}}); err != nil {
		t.Fatal(err)
	}
	if fold, _ := rowVersion(); fold != "νέο" {
		t.Errorf("after a body save the search row = %q", fold)
	}
	for q, want := range map[string]int{"νέο": 1, "σοφία": 0, "νους": 1, "ψυχή": 0, "hr": 1} {
		rs, err := db.FindRecords(t.Context(), store.Filter{Kind: store.KindDocument, Search: q})
		if err != nil || len(rs) != want {
			t.Errorf("search %q = %d records, %v; want %d", q, len(rs), err, want)
		}
	}
	if _, err := db.pool.Exec(t.Context(), "DELETE FROM documents WHERE id = $1", doc.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.pool.QueryRow(t.Context(), "SELECT count(*) FROM documents_body_search").Scan(&n); err != nil || n != 0 {
		t.Errorf("after a delete the body's search table holds %d rows, %v", n, err)
	}
}

// TestStreamSearchCondition_Plans: a streamed search that matches at least 1/scanShare of
// the rows above its start reads the record table with strpos(); a rarer one goes through
// the search tables. (That both find the same records is TestStreamRecords_EachSearchPlan.)
func TestStreamSearchCondition_Plans(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	var ids []int64
	for i := range 40 {
		name := "Common part"
		if i%10 == 3 {
			name = "Rare lamp"
		}
		r, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "RUN-" + strconv.Itoa(i), "name": name})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	scans := func(f store.Filter) bool {
		t.Helper()
		f.Kind = store.KindProduct
		cond, _, err := db.streamSearchCondition(t.Context(), db.pool, f)
		if err != nil {
			t.Fatal(err)
		}
		return strings.HasPrefix(cond, "(strpos(")
	}
	// 1/4 of the rows: 40 and 36 of 40 match, 4 of 40 and none do not reach 10; above
	// ids[29], 9 of the last 10 are "common" and 1 "rare lamp".
	for _, c := range []struct {
		f    store.Filter
		scan bool
	}{
		{store.Filter{Search: "run-"}, true},
		{store.Filter{Search: "common"}, true},
		{store.Filter{Search: "rare lamp"}, false},
		{store.Filter{Search: "nowhere"}, false},
		{store.Filter{Search: "common", AfterID: ids[29]}, true},
		{store.Filter{Search: "rare lamp", AfterID: ids[29]}, false},
		{store.Filter{Search: "ra"}, true}, // shorter than a trigram: always strpos()
	} {
		if got := scans(c.f); got != c.scan {
			t.Errorf("search %q above %d: scan %v, want %v", c.f.Search, c.f.AfterID, got, c.scan)
		}
	}
}
