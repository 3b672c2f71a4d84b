package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	modernc "modernc.org/sqlite"
)

// TestWriterGate_EndsOutsideTriggers: on a connection with tandem's write connection's
// authorizer (writerGate) and without the writer mark, the outside-write triggers end at
// their gate: an update that another program would be logged for (it keeps the version and
// the time), an insert and a delete are not logged, and an update that lowers the version,
// which the update trigger refuses another program, is not refused (the trigger never runs
// its refusals; without the gate it would, the mark being absent). On a connection without
// the authorizer the same update is an outside write, and the lowering is refused.
func TestWriterGate_EndsOutsideTriggers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gate.db")
	db, err := Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	actx := store.WithActor(ctx, store.Actor{Name: "alice", Role: store.RoleEditor})
	p, err := db.CreateRecord(actx, store.KindProduct, store.Values{"sku": "G-1", "name": "gated"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	pool, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	conn := func(gated bool) *sql.Conn {
		c, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if gated {
			if err := c.Raw(func(dc any) error { return dc.(modernc.AuthorizerRegisterer).RegisterAuthorizer(writerGate) }); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	version := func(c *sql.Conn, id int64) (v int64) {
		t.Helper()
		if err := c.QueryRowContext(ctx, "SELECT version FROM products WHERE id = ?", id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	logged := func(c *sql.Conn, id int64) (n int) {
		t.Helper()
		if err := c.QueryRowContext(ctx, "SELECT count(*) FROM history WHERE kind = 'product' AND record_id = ? AND actor = ?",
			id, store.OutsideActor).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	gated, other := conn(true), conn(false)
	if _, err := gated.ExecContext(ctx, "UPDATE products SET stock = stock + 1 WHERE id = ?", p.ID); err != nil {
		t.Fatal(err)
	}
	if v, n := version(gated, p.ID), logged(gated, p.ID); v != p.Version || n != 0 {
		t.Fatalf("after the gated update: version %d, %d outside versions; want %d, 0", v, n, p.Version)
	}
	res, err := gated.ExecContext(ctx, `INSERT INTO products (sku, name, description, categories, price, stock, availability,
		thumbnail, search_index, checksum, version, updated_at, updated_by)
		VALUES ('G-2', 'gated too', '', '[]', 0, 0, 'in_stock', '', '', '', 1, '2026-01-01T00:00:00.000Z', 'alice')`)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := res.LastInsertId()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gated.ExecContext(ctx, "DELETE FROM products WHERE id = ?", id2); err != nil {
		t.Fatal(err)
	}
	if n := logged(gated, id2); n != 0 {
		t.Fatalf("the gated insert and delete: %d outside versions, want 0", n)
	}

	lower := "UPDATE products SET version = version - 1 WHERE id = ?"
	if _, err := gated.ExecContext(ctx, lower, p.ID); err != nil {
		t.Fatalf("the gated connection's update of the version: %v", err)
	}
	if _, err := gated.ExecContext(ctx, "UPDATE products SET version = version + 1 WHERE id = ?", p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(ctx, lower, p.ID); err == nil {
		t.Fatal("another program lowered the version")
	}
	if _, err := other.ExecContext(ctx, "UPDATE products SET stock = stock + 1 WHERE id = ?", p.ID); err != nil {
		t.Fatal(err)
	}
	if v, n := version(other, p.ID), logged(other, p.ID); v != p.Version+1 || n != 1 {
		t.Fatalf("after the other program's update: version %d, %d outside versions; want %d, 1", v, n, p.Version+1)
	}
}

// TestWriterGate_OnlyTheGate: the authorizer nulls a record table's id in its own insert,
// update and delete outside-write triggers alone.
func TestWriterGate_OnlyTheGate(t *testing.T) {
	for _, tt := range []struct {
		action                 modernc.AuthorizerActionCode
		table, column, trigger string
		ignore                 bool
	}{
		{modernc.AuthRead, "products", "id", "products_outside_update", true},
		{modernc.AuthRead, "products", "id", "products_outside_insert", true},
		{modernc.AuthRead, "products", "id", "products_outside_delete", true},
		{modernc.AuthRead, "products", "version", "products_outside_update", false},
		{modernc.AuthRead, "products", "id", "products_search_delete", false},
		{modernc.AuthRead, "products", "id", "", false},
		{modernc.AuthRead, "products", "id", "products_outside_ref_supplier_update", false},
		{modernc.AuthRead, "suppliers", "id", "parts_outside_update", false},
		{modernc.AuthRead, "p", "id", "p_outside_x_outside_update", false},
		{modernc.AuthRead, "p_outside_x", "id", "p_outside_x_search_delete", false},
		{modernc.AuthUpdate, "products", "id", "products_outside_update", false},
	} {
		want := modernc.AuthorizerOK
		if tt.ignore {
			want = modernc.AuthorizerIgnore
		}
		if got := writerGate(tt.action, tt.table, tt.column, "main", tt.trigger); got != want {
			t.Errorf("writerGate(%d, %s, %s, %s) = %d, want %d", tt.action, tt.table, tt.column, tt.trigger, got, want)
		}
	}
}
