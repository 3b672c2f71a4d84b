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
	if create {
		defer lockCreate(path)()
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

// lockCreate takes the create lock of the SQLite store at path, a file beside it, waiting
// while another tandem holds it, and removes what killed creators left (removeLeftovers: a
// seed killed halfway leaves its temporary database, as large as it had grown). It returns
// the unlock. The processes that may create the store take turns: the first creates it and
// the others then open it, so that none removes another's temporary file, and a store made
// in place in an empty file (sqlite.OpenConfig.Create) is filled before the next one looks.
// Where the lock cannot be had (a directory that may not be written, in which nothing can be
// created either; a system without flock) nothing is removed and the open goes on without
// it.
func lockCreate(path string) (unlock func()) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	unlock, ok, err := waitLockFile(filepath.Join(dir, "."+base+".create.lock"), "create")
	if err != nil || !ok {
		return func() {}
	}
	removeLeftovers(dir, base, false)
	return unlock
}
