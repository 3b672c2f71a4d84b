package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestOpen_MigrateSKUKeys opens a database written before SKUs had keys, holding SKUs that
// collide once compared by key: the migration keys every product, keeps the colliding ones
// (the oldest gets the plain key), and from then on no new sku joins the collision.
func TestOpen_MigrateSKUKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	mustVersion1(t, path,
		`INSERT INTO products (id, sku, name, updated_at, updated_by) VALUES
			(1, 'ABC-1', 'first', '2026-01-01T00:00:00.000Z', 'old'),
			(2, 'abc-1 ', 'lookalike', '2026-01-01T00:00:00.000Z', 'old'),
			(3, 'XYZ-9', 'other', '2026-01-01T00:00:00.000Z', 'old')`,
	)

	db := mustOpen(t, path)
	if got, want := db.SchemaVersion(), sqlite.LatestSchemaVersion(); got != want || got < 3 {
		t.Fatalf("schema version = %d, want %d (at least 3)", got, want)
	}
	check, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	keys := map[int64]string{}
	for id := range int64(3) {
		var key string
		if err := check.QueryRow("SELECT sku_key FROM products WHERE id = ?", id+1).Scan(&key); err != nil {
			t.Fatal(err)
		}
		keys[id+1] = key
	}
	storetest.CheckMigratedSKUKeys(t, db, keys)

	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	// The lookalike kept its sku and can still be saved; a new sku gives it a proper key.
	if _, err := db.UpdateRecord(ctx, store.KindProduct, 2, store.Update{BaseVersion: 1, Set: store.Values{"name": "renamed"}}); err != nil {
		t.Fatalf("save of the lookalike: %v", err)
	}
	if _, err := db.UpdateRecord(ctx, store.KindProduct, 2, store.Update{BaseVersion: 2, Set: store.Values{"sku": "ABC-2"}}); err != nil {
		t.Fatalf("new sku for the lookalike: %v", err)
	}
	var key string
	if err := check.QueryRow("SELECT sku_key FROM products WHERE id = 2").Scan(&key); err != nil || key != "abc-2" {
		t.Errorf("key after the new sku = %q, %v; want abc-2", key, err)
	}
}
