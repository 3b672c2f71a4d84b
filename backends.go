package main

import (
	"context"

	"github.com/tandem-editor/tandem/store"
)

// openSQLite opens the SQLite store at path. Placeholder until store/sqlite lands.
func openSQLite(ctx context.Context, path string, opts store.Options) (store.Store, error) {
	return nil, store.Errorf(store.EUNAVAILABLE, "this build has no SQLite store yet")
}

// openPostgres opens the PostgreSQL store at dsn. Placeholder until store/postgres lands.
func openPostgres(ctx context.Context, dsn string, opts store.Options) (store.Store, error) {
	return nil, store.Errorf(store.EUNAVAILABLE, "this build has no PostgreSQL store yet")
}

// schemaVersion is the database schema version this binary writes.
func schemaVersion() int { return 0 }
