package postgres

import (
	"testing"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestOpen_MigrateSKUKeys opens a schema written before SKUs had keys, holding SKUs that
// collide once compared by key: the migration keys every product in Go, keeps the colliding
// ones (the oldest gets the plain key), and from then on no new sku joins the collision.
func TestOpen_MigrateSKUKeys(t *testing.T) {
	dsn := pgtest.DSN(t)
	mustVersion1(t, dsn,
		`INSERT INTO products (id, sku, name, updated_at, updated_by) VALUES
			(1, 'ABC-1', 'first', now(), 'old'), (2, E'ABC\u200B-1', 'lookalike', now(), 'old'), (3, 'XYZ-9', 'other', now(), 'old')`,
	)
	db := mustOpen(t, dsn)
	if db.SchemaVersion() != latestSchemaVersion {
		t.Fatalf("schema version = %d, want %d", db.SchemaVersion(), latestSchemaVersion)
	}
	keys := map[int64]string{}
	for _, id := range []int64{1, 2, 3} {
		var key string
		if err := db.pool.QueryRow(t.Context(), "SELECT sku_key FROM products WHERE id = $1", id).Scan(&key); err != nil {
			t.Fatal(err)
		}
		keys[id] = key
	}
	storetest.CheckMigratedSKUKeys(t, db, keys)
}
