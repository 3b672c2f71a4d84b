package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestSort_ReadsAnIndex: every sorted listing, forwards and backwards, first page and
// keyset page, is read from an index in order, never sorted whole (no temporary b-tree in
// SQLite's plan of the query FindRecords runs). The listing by sku reads the index of
// sku's UNIQUE constraint since migration 0013 dropped the second one.
func TestSort_ReadsAnIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("a query-plan test with no goroutines: the race step (-short) leaves it to the plain run")
	}
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, kind := range []store.Kind{store.KindProduct, store.KindDocument} {
		fields := db.Registry().SortFields(kind)
		if len(fields) == 0 {
			t.Fatalf("no sort fields for %ss", kind)
		}
		for _, sf := range fields {
			var after any = "m"
			if sf.Type == store.TypeInt || sf.Type == store.TypeMoney {
				after = int64(5)
			}
			for _, f := range []store.Filter{
				{Kind: kind, Sort: sf.Name, Limit: 200},
				{Kind: kind, Sort: sf.Name, Desc: true, Limit: 200},
				{Kind: kind, Sort: sf.Name, AfterValue: after, AfterID: 7, Limit: 200},
				{Kind: kind, Sort: sf.Name, Desc: true, AfterValue: after, AfterID: 7, Limit: 200},
			} {
				q, args, err := db.findQuery(db.Registry(), f)
				if err != nil {
					t.Fatal(err)
				}
				p := queryPlan(t, db, q, args)
				if strings.Contains(p, "TEMP B-TREE") || !strings.Contains(p, "INDEX") {
					t.Errorf("%s sorted by %s (desc %v, after %v): the plan sorts instead of reading an index:\n%s",
						kind, sf.Name, f.Desc, f.AfterValue, p)
				}
			}
		}
	}
}

// queryPlan returns SQLite's plan of q, one line per step.
func queryPlan(t *testing.T, db *DB, q string, args []any) string {
	t.Helper()
	rows, err := db.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
