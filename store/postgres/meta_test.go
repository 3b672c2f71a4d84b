package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
)

// TestStoreID checks that the store id lives in the schema: reopening the store (another
// connection, as another process would) reads the same id, and a schema made before store
// ids existed (version 1) gets one when it is opened and keeps it.
func TestStoreID(t *testing.T) {
	dsn := pgtest.DSN(t)
	open := func() *postgres.DB {
		t.Helper()
		db, err := postgres.Open(t.Context(), dsn, store.Options{})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return db
	}
	db := open()
	sid := db.StoreID()
	db.Close()
	db = open()
	if db.StoreID() != sid || len(sid) != 32 {
		t.Errorf("store id after reopening = %q, first %q", db.StoreID(), sid)
	}
	db.Close()

	// A schema as tandem 1 made it (the first migration only), in a schema of its own.
	dsn = pgtest.DSN(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{string(v1),
		"CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO schema_migrations (version) VALUES (1)",
	} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(context.Background())
	db = open()
	migrated := db.StoreID()
	if len(migrated) != 32 || migrated == sid || db.SchemaVersion() != postgres.LatestSchemaVersion() {
		t.Errorf("after migrating a version 1 schema: store id %q (was %q), schema %d", migrated, sid, db.SchemaVersion())
	}
	db.Close()
	db = open()
	defer db.Close()
	if db.StoreID() != migrated {
		t.Errorf("store id %q after reopening the migrated schema, want %q", db.StoreID(), migrated)
	}
}

// TestCreated: of several first openings of an empty schema at once, exactly one installs
// tandem's tables and says so; opening the store again does not.
func TestCreated(t *testing.T) {
	dsn := pgtest.DSN(t)
	const n = 4
	dbs := make([]*postgres.DB, n)
	errs := make([]error, n)
	done := make(chan int)
	for i := range n {
		go func() {
			dbs[i], errs[i] = postgres.Open(t.Context(), dsn, store.Options{})
			done <- i
		}()
	}
	created := 0
	for range n {
		i := <-done
		if errs[i] != nil {
			t.Errorf("open %d: %v", i, errs[i])
			continue
		}
		if dbs[i].Created() {
			created++
		}
		dbs[i].Close()
	}
	if created != 1 {
		t.Errorf("%d openings say they created the store, want 1", created)
	}
	db, err := postgres.Open(t.Context(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Created() {
		t.Error("reopening the store says it created it")
	}
}
