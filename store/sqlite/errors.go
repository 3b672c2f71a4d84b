package sqlite

import (
	"context"
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tandem-editor/tandem/store"
)

// mapErr is the one place where SQLite result codes become store error codes. Typed store
// errors (conflict, lease, ownership, *store.Error) pass through unchanged; anything else is
// wrapped in a *store.Error whose message starts with what and keeps the cause.
func mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var (
		ce *store.ConflictError
		le *store.LeaseError
		oe *store.OwnershipError
		se *store.Error
	)
	if errors.As(err, &ce) || errors.As(err, &le) || errors.As(err, &oe) || errors.As(err, &se) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return store.Errorf(store.EBUSY, "%s: %w", what, err)
	}
	code, ok := sqliteCode(err)
	if !ok {
		return store.Errorf(store.EINTERNAL, "%s: %w", what, err)
	}
	switch {
	case code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return store.Errorf(store.EINVALID, "%s: a record with this value already exists: %w", what, err)
	case code == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return store.Errorf(store.ENOTFOUND, "%s: the referenced record does not exist: %w", what, err)
	case code&0xff == sqlite3.SQLITE_CONSTRAINT:
		return store.Errorf(store.EINVALID, "%s: %w", what, err)
	case code&0xff == sqlite3.SQLITE_BUSY, code&0xff == sqlite3.SQLITE_LOCKED:
		return store.Errorf(store.EBUSY, "%s: the database stayed locked by another writer; try again: %w", what, err)
	case code == sqlite3.SQLITE_ERROR && strings.Contains(err.Error(), "no such column"):
		// A handle opened before a schema change that renamed or dropped a field it writes.
		return store.Errorf(store.EINVALID, "%s: the store's schema changed since this client opened it (%v); open the store again", what, err)
	case code&0xff == sqlite3.SQLITE_NOTADB:
		// The file is something else (a text file given as --db): the caller's mistake.
		return store.Errorf(store.EINVALID, "%s: the file is not a tandem (SQLite) database: %w", what, err)
	case code&0xff == sqlite3.SQLITE_CORRUPT:
		// A database whose pages are damaged or missing (a truncated copy, a disk fault): no
		// input of the caller's can fix that, so it is a failure, not bad input.
		return store.Errorf(store.EINTERNAL, "%s: the store is broken: the database file is damaged or truncated "+
			"(restore it from a backup, or try sqlite3's .recover): %w", what, err)
	case code&0xff == sqlite3.SQLITE_CANTOPEN, code&0xff == sqlite3.SQLITE_PERM,
		code&0xff == sqlite3.SQLITE_READONLY, code&0xff == sqlite3.SQLITE_IOERR,
		code&0xff == sqlite3.SQLITE_FULL:
		return store.Errorf(store.EUNAVAILABLE, "%s: %w", what, err)
	}
	return store.Errorf(store.EINTERNAL, "%s: %w", what, err)
}

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED: the transaction may be retried.
func isBusy(err error) bool {
	code, ok := sqliteCode(err)
	c := code & 0xff
	return ok && (c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED)
}

// sqliteCode returns the extended result code of the SQLite error in err's chain: the
// driver's (*sqlite.Error) or a bulk connection's (*bulkError), which both have it.
func sqliteCode(err error) (int, bool) {
	var de *sqlite.Error
	if errors.As(err, &de) {
		return de.Code(), true
	}
	var be *bulkError
	if errors.As(err, &be) {
		return be.Code(), true
	}
	return 0, false
}
