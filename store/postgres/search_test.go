package postgres

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// TestSearch_UsesTheIndex: every searched folded column has a pg_trgm index that the search
// FindRecords runs can use (the planner takes it once reading the table in id order or whole
// is ruled out, as on a large table where the word is rare); a query shorter than a trigram
// is strpos(), which no index answers.
func TestSearch_UsesTheIndex(t *testing.T) {
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
		cond, arg := db.searchCondition(store.KindProduct, query)
		rows, err := tx.Query(t.Context(), "EXPLAIN SELECT id FROM products WHERE "+strings.ReplaceAll(cond, "$?", "$1")+
			" ORDER BY id LIMIT 200", arg)
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
	for _, f := range db.reg.SearchFields(store.KindProduct) {
		if !strings.Contains(p, "Bitmap Index Scan on products_"+f.Name+"_fold_trgm") {
			t.Errorf("plan does not use the trigram index of %s:\n%s", f.Name, p)
		}
	}
	if p := plan("la"); strings.Contains(p, "_trgm") {
		t.Errorf("a query shorter than a trigram cannot use the index, plan:\n%s", p)
	}
	if got := likeContains(`50%_a\b`); got != `%50\%\_a\\b%` {
		t.Errorf("likeContains = %q", got)
	}
}
