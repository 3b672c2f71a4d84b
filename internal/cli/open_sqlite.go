package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// openSQLite opens the SQLite store at path. A file that does not exist is created only with
// create: mode 0600, filled by fill, and in place in one step (two first runs at once make one
// store, and the second opens it); created reports whether this call made it. Without create
// a missing file is ENOTFOUND (exit 5) and nothing is made, so a mistyped path is never
// turned into an empty store. A path whose directory is missing is a bad path (EINVALID,
// exit 2), not an outage. A file that may not be written is opened read-only.
func openSQLite(ctx context.Context, path string, opts store.Options, create bool, fill func(context.Context, store.Store) error) (st store.Store, created bool, err error) {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, false, store.Errorf(store.EINVALID, "directory %s does not exist", dir)
	} else if err == nil && !fi.IsDir() {
		return nil, false, store.Errorf(store.EINVALID, "%s is not a directory", dir)
	}
	db, err := sqlite.OpenWith(ctx, path, opts, sqlite.OpenConfig{Create: create, Fill: fill})
	if store.ErrorCode(err) == store.ENOTFOUND {
		return nil, false, store.Errorf(store.ENOTFOUND, "%v (tandem seed creates one)", err)
	}
	if err != nil {
		return nil, false, err
	}
	return db, db.Created(), nil
}
