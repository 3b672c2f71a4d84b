package postgres

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// schemaSize is the size of every table of the store's schema, with indexes and TOAST.
func schemaSize(t *testing.T, db *DB) int64 {
	t.Helper()
	var n int64
	if err := db.pool.QueryRow(t.Context(), `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestHistory_TitleEditsOfALargeDocument makes 100 title edits of a document with a 1 MB
// body (random text, which TOAST's compression cannot shrink): the schema must grow by what
// changed, not by a copy of the body per save.
func TestHistory_TitleEditsOfALargeDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("a size or query-plan test with no goroutines: the race step (-short) leaves it to the plain run")
	}
	db := mustOpen(t, pgtest.DSN(t))
	ctx := actx(t, alice)
	var b strings.Builder
	buf := make([]byte, 32)
	for b.Len() < 1<<20 {
		_, _ = rand.Read(buf)
		b.WriteString(hex.EncodeToString(buf) + "\n")
	}
	body := b.String()
	doc, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Big", "body": body})
	if err != nil {
		t.Fatal(err)
	}
	before := schemaSize(t, db)
	for i := range 100 {
		if _, err := db.UpdateRecord(ctx, store.KindDocument, doc.ID, store.Update{BaseVersion: int64(i + 1),
			Set: store.Values{"title": fmt.Sprintf("Title %d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	after := schemaSize(t, db)
	t.Logf("100 title edits of a %d-byte document: %d bytes before, %d after (+%d)", len(body), before, after, after-before)
	if grew := after - before; grew >= 2<<20 {
		t.Errorf("the schema grew by %d bytes, want under 2 MiB", grew)
	}
	for _, v := range []int64{1, 2, 50, 101} {
		got, err := db.FindVersion(t.Context(), store.KindDocument, doc.ID, v)
		if err != nil {
			t.Fatal(err)
		}
		if got.Snapshot["body"] != body || (v > 1 && got.Snapshot["title"] != fmt.Sprintf("Title %d", v-2)) {
			t.Fatalf("version %d = title %q and a body of %d bytes", v, got.Snapshot["title"], len(got.Snapshot["body"].(string)))
		}
	}
}

// TestMigrate_KeepsHistory opens a schema written at version 1 (full snapshots, ids from
// change_counter): the migration keeps its history readable, new saves chain onto it, and
// the change log goes on after the old ids.
func TestMigrate_KeepsHistory(t *testing.T) {
	dsn := pgtest.DSN(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	const snap1 = `{"availability":"in_stock","categories":["tools"],"checksum":"","description":"one\ntwo\n","last_sync_at":null,"name":"Lamp","price":"29.99","search_index":"","sku":"L1","stock":10,"thumbnail":""}`
	const snap3 = `{"availability":"in_stock","categories":["tools"],"checksum":"abc","description":"one\ntwo\n","last_sync_at":"2026-01-02T03:04:05.678901Z","name":"Lamp","price":"34.99","search_index":"","sku":"L1","stock":10,"thumbnail":""}`
	for _, q := range []string{string(v1),
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
		`INSERT INTO schema_migrations (version) VALUES (1)`,
		`INSERT INTO products (id, sku, name, description, categories, price, stock, checksum, last_sync_at, version, updated_at, updated_by)
			VALUES (1, 'L1', 'Lamp', E'one\ntwo\n', '{tools}', 3499, 10, 'abc', '2026-01-02T03:04:05.678901Z', 3, '2026-01-03T00:00:00Z', 'bob')`,
		`INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot) VALUES
			('product', 1, 1, 'alice', '2026-01-01T00:00:00Z', '{description,name,price,sku}', '` + snap1 + `'),
			('product', 1, 3, 'bob', '2026-01-03T00:00:00Z', '{price}', '` + snap3 + `')`,
		`INSERT INTO changes (id, event, kind, record_id, version, actor, role, fields, history, at) VALUES
			(1, 'created', 'product', 1, 1, 'alice', 'editor', '{description,name,price,sku}', true, '2026-01-01T00:00:00Z'),
			(2, 'saved', 'product', 1, 2, 'sync', 'system', '{checksum,last_sync_at}', false, '2026-01-02T00:00:00Z'),
			(3, 'saved', 'product', 1, 3, 'bob', 'editor', '{price}', true, '2026-01-03T00:00:00Z')`,
		`UPDATE change_counter SET last_id = 3`,
	} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	conn.Close(t.Context())

	db := mustOpen(t, dsn)
	if db.SchemaVersion() != latestSchemaVersion {
		t.Fatalf("schema version %d after opening, want %d", db.SchemaVersion(), latestSchemaVersion)
	}
	hist, err := db.FindHistory(t.Context(), store.KindProduct, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Version != 3 || hist[0].Snapshot["price"] != int64(3499) || hist[0].Snapshot["checksum"] != "abc" ||
		!hist[0].Snapshot["last_sync_at"].(time.Time).Equal(time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)) ||
		hist[1].Snapshot["price"] != int64(2999) || hist[1].Snapshot["last_sync_at"] != nil {
		t.Fatalf("history after the migration = %+v", hist)
	}
	res, err := db.UpdateRecord(actx(t, alice), store.KindProduct, 1, store.Update{BaseVersion: 3, Set: store.Values{"name": "Desk lamp"}})
	if err != nil {
		t.Fatal(err)
	}
	v4, err := db.FindVersion(t.Context(), store.KindProduct, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range res.Record.Fields {
		if !store.Equal(v4.Snapshot[name], want) {
			t.Errorf("version 4 %s = %#v, want %#v", name, v4.Snapshot[name], want)
		}
	}
	cs, err := db.Changes(t.Context(), 0, 0)
	if err != nil || len(cs) != 4 || cs[3].ID != 4 || cs[3].Version != 4 {
		t.Fatalf("changes after the migration = %v, %v; want the 3 old ones and id 4", ids(cs), err)
	}
}
