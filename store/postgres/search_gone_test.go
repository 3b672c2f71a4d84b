package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// searchRows returns how many rows the search table of products' field holds for ids.
func searchRows(t *testing.T, db *DB, field string, ids ...int64) int {
	t.Helper()
	var n int
	if err := db.pool.QueryRow(t.Context(), "SELECT count(*) FROM "+searchTable("products", field)+" WHERE id = ANY($1)", ids).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// outsider connects to db's schema as another program (not a tandem connection: the
// outside-write triggers see its writes), until the test ends.
func outsider(t *testing.T, db *DB) *pgx.Conn {
	t.Helper()
	conn := mustAdmin(t)
	if _, err := conn.Exec(t.Context(), "SET search_path TO "+ident(db.Schema())); err != nil {
		t.Fatal(err)
	}
	return conn
}

// mustFind checks that a search of products for q finds want records.
func mustFind(t *testing.T, db *DB, q string, want int) {
	t.Helper()
	rs, err := db.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct, Search: q})
	if err != nil || len(rs) != want {
		t.Errorf("search %q = %d records, %v; want %d", q, len(rs), err, want)
	}
}

// TestBulkLoad_EmptyFoldsGetNoSearchRow: a load writes no search row for a field whose
// folded value is empty (a product without description or categories), and a later save of
// the field, by tandem or by another program, gets the record its row and a search finds it.
func TestBulkLoad_EmptyFoldsGetNoSearchRow(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	l, err := db.OpenLoader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	recs := make([]store.NewRecord, 3)
	for i := range recs {
		recs[i] = store.NewRecord{Kind: store.KindProduct, Values: store.Values{"sku": fmt.Sprintf("EMPTY-%d", i), "name": fmt.Sprintf("Bare %d", i)}}
	}
	recs[2].Values["description"] = "Ein Tisch aus STRASSBURG"
	loaded, err := l.CreateRecords(ctx, recs)
	if err != nil || len(loaded) != 3 {
		t.Fatalf("load: %d records, %v", len(loaded), err)
	}
	a, b, c := loaded[0], loaded[1], loaded[2]
	if n := searchRows(t, db, "description", a.ID, b.ID); n != 0 {
		t.Errorf("%d description search rows for products loaded without one", n)
	}
	if n := searchRows(t, db, "categories", a.ID, b.ID, c.ID); n != 0 {
		t.Errorf("%d categories search rows for products loaded without categories", n)
	}
	if n := searchRows(t, db, "description", c.ID) + searchRows(t, db, "sku", a.ID, b.ID, c.ID); n != 4 {
		t.Errorf("%d description and sku search rows, want 4", n)
	}
	mustFind(t, db, "strassburg", 1)
	mustFind(t, db, "bare", 3)

	if _, err := db.UpdateRecord(ctx, store.KindProduct, a.ID, store.Update{BaseVersion: 1, Set: store.Values{
		"description": "Ein Stuhl aus Köln", "categories": []string{"Garten"}}}); err != nil {
		t.Fatal(err)
	}
	// Another program: the outside-write triggers queue the refold that writes the folds.
	if _, err := outsider(t, db).Exec(t.Context(), "UPDATE products SET description = 'Eine LAMPE' WHERE id = $1", b.ID); err != nil {
		t.Fatal(err)
	}
	mustFind(t, db, "köln", 1)
	mustFind(t, db, "garten", 1)
	mustFind(t, db, "lampe", 1)
	if _, err := db.UpdateRecord(ctx, store.KindProduct, a.ID, store.Update{BaseVersion: 2, Set: store.Values{"description": ""}}); err != nil {
		t.Fatal(err)
	}
	mustFind(t, db, "köln", 0)
}

// TestSearch_RowsGoWithTheirRecords: the search rows of records deleted by another program,
// several in one statement, go with them, as those of a record tandem deletes, they follow a
// record whose id another program changes, and a TRUNCATE of the record table is refused.
func TestSearch_RowsGoWithTheirRecords(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	var ids []int64
	for i := range 4 {
		r, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("GONE-%d", i), "name": "Gone", "description": "Beschreibung"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	other := outsider(t, db)
	if _, err := other.Exec(t.Context(), "DELETE FROM products WHERE id = ANY($1)", ids[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRecord(ctx, store.KindProduct, ids[2], store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sku", "name", "description", "categories"} {
		if n := searchRows(t, db, f, ids[:3]...); n != 0 {
			t.Errorf("%d %s search rows of deleted products", n, f)
		}
		if n := searchRows(t, db, f, ids[3]); n != 1 {
			t.Errorf("%d %s search rows of the product left, want 1", n, f)
		}
	}
	mustFind(t, db, "beschreibung", 1)
	// Another program changes the record's id: its search rows follow it.
	moved := ids[3] + 1000
	if _, err := other.Exec(t.Context(), "UPDATE products SET id = $2 WHERE id = $1", ids[3], moved); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sku", "name", "description", "categories"} {
		if n, m := searchRows(t, db, f, ids[3]), searchRows(t, db, f, moved); n != 0 || m != 1 {
			t.Errorf("%s search rows after the id changed: %d under the old id, %d under the new, want 0 and 1", f, n, m)
		}
	}
	mustFind(t, db, "beschreibung", 1)
	// A TRUNCATE would drop the record without a tombstone or a change: refused, as the
	// foreign key refused it, saying what to do instead.
	for _, q := range []string{"TRUNCATE products", "TRUNCATE products CASCADE"} {
		if _, err := other.Exec(t.Context(), q); err == nil || !strings.Contains(err.Error(), "DELETE them instead") {
			t.Errorf("%s = %v, want it refused saying to DELETE instead", q, err)
		}
	}
	if n := searchRows(t, db, "name", moved); n != 1 {
		t.Errorf("%d name search rows after a refused truncate, want 1", n)
	}
	mustFind(t, db, "beschreibung", 1)
}

// TestOpen_SearchGoneOnUpgrade opens a store as tandem before migration 0015 left it
// (search tables with foreign keys, no next_change_ids): the migration drops the keys and
// gives the tables their delete, id and truncate triggers, and search and deletes work as
// before.
func TestOpen_SearchGoneOnUpgrade(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpen(t, dsn)
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	var ids []int64
	for i := range 3 {
		r, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("UP-%d", i), "name": "Upgraded", "description": fmt.Sprintf("Straße %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	tables := []string{}
	for _, kind := range migratedSchema.Kinds() {
		tbl, _ := migratedSchema.Table(kind)
		for _, f := range migratedSchema.FoldedFields(kind) {
			tables = append(tables, tbl, searchTableName(tbl, f))
		}
	}
	downgrade := func(ctx context.Context) {
		for i := 0; i < len(tables); i += 2 {
			tbl, st := tables[i], tables[i+1]
			for _, q := range []string{
				"DROP TRIGGER " + ident(objName(st, "gone")) + " ON " + ident(tbl),
				"DROP TRIGGER " + ident(objName(st, "truncate")) + " ON " + ident(tbl),
				"DROP TRIGGER " + ident(objName(st, "moved")) + " ON " + ident(tbl),
				"DROP FUNCTION " + ident(objName(st, "gone")) + "()",
				"ALTER TABLE " + ident(st) + " ADD FOREIGN KEY (id) REFERENCES " + ident(tbl) + " (id) ON DELETE CASCADE",
			} {
				if _, err := db.pool.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		if _, err := db.pool.Exec(ctx, "DROP FUNCTION next_change_ids(integer)"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.pool.Exec(ctx, "DELETE FROM schema_migrations WHERE version >= 15"); err != nil {
			t.Fatal(err)
		}
	}
	downgrade(t.Context())
	keys := func(db *DB) int {
		var n int
		if err := db.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_constraint
			WHERE contype = 'f' AND connamespace = current_schema()::regnamespace
			  AND conrelid::regclass::text LIKE '%\_search'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := keys(db); n != len(tables)/2 {
		t.Fatalf("the downgraded store has %d search foreign keys, want %d", n, len(tables)/2)
	}
	db.Close()

	db = mustOpen(t, dsn)
	if n := keys(db); n != 0 {
		t.Errorf("after the upgrade %d search foreign keys are left", n)
	}
	mustFind(t, db, "strasse", 3)
	if _, err := outsider(t, db).Exec(t.Context(), "DELETE FROM products WHERE id = ANY($1)", ids[:2]); err != nil {
		t.Fatal(err)
	}
	if n := searchRows(t, db, "description", ids...); n != 1 {
		t.Errorf("%d description search rows after deleting 2 of 3 products, want 1", n)
	}
	mustFind(t, db, "strasse", 1)
	if _, err := outsider(t, db).Exec(t.Context(), "UPDATE products SET id = $2 WHERE id = $1", ids[2], ids[2]+1000); err != nil {
		t.Fatal(err)
	}
	if n := searchRows(t, db, "description", ids[2]+1000); n != 1 {
		t.Errorf("%d description search rows under a product's new id, want 1", n)
	}
}

// TestBulkLoad_ChangeIDsInOrder: a load's change rows take their ids n at a time
// (next_change_ids) in the order of its records, after the ids of the writes before it and
// before those after it, each with its transaction's xid, as ids taken one by one.
func TestBulkLoad_ChangeIDsInOrder(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	before, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "IDS-0", "name": "Before"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := db.OpenLoader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	recs := make([]store.NewRecord, 5)
	for i := range recs {
		recs[i] = store.NewRecord{Kind: store.KindProduct, Values: store.Values{"sku": fmt.Sprintf("IDS-%d", i+1), "name": "Loaded"}}
	}
	loaded, err := l.CreateRecords(ctx, recs)
	if err != nil || len(loaded) != len(recs) {
		t.Fatalf("load: %d records, %v", len(loaded), err)
	}
	after, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "IDS-9", "name": "After"})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.pool.Query(t.Context(), `SELECT record_id, xid IS NOT NULL FROM changes
		WHERE kind = 'product' AND record_id = ANY($1) ORDER BY id`, []int64{before.ID, loaded[0].ID, loaded[1].ID, loaded[2].ID, loaded[3].ID, loaded[4].ID, after.ID})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for rows.Next() {
		var id int64
		var xid bool
		if err := rows.Scan(&id, &xid); err != nil {
			t.Fatal(err)
		}
		if !xid {
			t.Errorf("the change of product %d has no xid", id)
		}
		got = append(got, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []int64{before.ID, loaded[0].ID, loaded[1].ID, loaded[2].ID, loaded[3].ID, loaded[4].ID, after.ID}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("changes in id order are of products %v, want %v", got, want)
	}
}
