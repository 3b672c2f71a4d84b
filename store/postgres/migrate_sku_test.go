package postgres

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// TestOpen_MigrateSKUKeys opens a schema written before SKUs had keys, holding SKUs that
// collide once compared by key: the migration keys every product in Go, keeps the colliding
// ones (the oldest gets the plain key), and from then on no new sku joins the collision.
func TestOpen_MigrateSKUKeys(t *testing.T) {
	dsn := pgtest.DSN(t)
	ms, err := migrations()
	if err != nil || len(ms) == 0 || ms[0].version != 1 {
		t.Fatalf("migrations = %v, %v", ms, err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		ms[0].sql,
		"CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO schema_migrations (version) VALUES (1)",
		`INSERT INTO products (id, sku, name, updated_at, updated_by) VALUES
			(1, 'ABC-1', 'first', now(), 'old'), (2, E'ABC\u200B-1', 'lookalike', now(), 'old'), (3, 'XYZ-9', 'other', now(), 'old')`,
	} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("build a version 1 schema: %v", err)
		}
	}
	conn.Close(t.Context())

	db := mustOpen(t, dsn)
	if db.SchemaVersion() != latestSchemaVersion {
		t.Fatalf("schema version = %d, want %d", db.SchemaVersion(), latestSchemaVersion)
	}
	keys := map[int64]string{}
	rows, err := db.pool.Query(t.Context(), "SELECT id, sku_key FROM products ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			id  int64
			key string
		)
		if err := rows.Scan(&id, &key); err != nil {
			t.Fatal(err)
		}
		keys[id] = key
	}
	rows.Close()
	if keys[1] != "abc-1" || keys[3] != "xyz-9" || keys[2] != "abc-1"+store.SKUKeySeparator+"2" {
		t.Errorf("keys = %+v, want abc-1, abc-1+separator+2, xyz-9", keys)
	}
	_, err = db.CreateRecord(actx(t, alice), store.KindProduct, store.Values{"sku": "abc-1", "name": "third"})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "already exists (product 1") {
		t.Errorf("create of a third lookalike = %v, want EINVALID naming product 1", err)
	}
}
