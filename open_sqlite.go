package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// openSQLite opens the SQLite store at path, creating the file if it does not exist. A path
// whose directory is missing is a bad path (EINVALID, exit 2), not an outage.
func openSQLite(ctx context.Context, path string, opts store.Options) (store.Store, error) {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, store.Errorf(store.EINVALID, "directory %s does not exist", dir)
	} else if err == nil && !fi.IsDir() {
		return nil, store.Errorf(store.EINVALID, "%s is not a directory", dir)
	}
	db, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// schemaVersion is the database schema version this binary writes.
func schemaVersion() int { return sqlite.LatestSchemaVersion() }
