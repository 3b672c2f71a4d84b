package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/tandem-editor/tandem/store"
)

// SQLSTATEs tandem reacts to. Everything PostgreSQL-specific about errors lives in this file.
const (
	sqlstateUniqueViolation     = "23505"
	sqlstateForeignKeyViolation = "23503"
	sqlstateCheckViolation      = "23514"
	sqlstateNumericOutOfRange   = "22003"
	sqlstateSerialization       = "40001"
	sqlstateDeadlock            = "40P01"
	sqlstateLockNotAvailable    = "55P03" // lock_timeout or NOWAIT
	sqlstateQueryCanceled       = "57014" // statement_timeout
	sqlstateAdminShutdown       = "57P01" // pg_terminate_backend, server shutdown
	sqlstateCrashShutdown       = "57P02"
	sqlstateCannotConnectNow    = "57P03" // server starting up or shutting down
	sqlstateInvalidSchema       = "3F000"
	sqlstateUndefinedTable      = "42P01"
	sqlstateUndefinedColumn     = "42703"
	sqlstateInsufficientPriv    = "42501"
	sqlstateInvalidPassword     = "28P01"
)

// errRetry marks a transaction that must run again from the start: a concurrent transaction
// inserted the same idempotency key, and the rerun will replay its result.
var errRetry = errors.New("transaction must be retried")

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func pgConstraint(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.ConstraintName
	}
	return ""
}

// isLockErr reports a deadlock, serialization failure or lock timeout: the transaction was
// rolled back as a whole and may run again.
func isLockErr(err error) bool {
	switch pgCode(err) {
	case sqlstateSerialization, sqlstateDeadlock, sqlstateLockNotAvailable:
		return true
	}
	return false
}

// isConnErr reports an error that means the connection (or the server) went away.
func isConnErr(err error) bool {
	if err == nil {
		return false
	}
	code := pgCode(err)
	switch {
	case strings.HasPrefix(code, "08"), code == sqlstateAdminShutdown, code == sqlstateCrashShutdown,
		code == sqlstateCannotConnectNow:
		return true
	case code != "":
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), errors.Is(err, pgconn.ErrConnClosed), pgconn.SafeToRetry(err):
		return true
	}
	return false
}

// mapErr turns a driver error into a tandem error. Typed store errors pass through; what is
// left is mapped by SQLSTATE. what says what was being done ("save product 42").
func (db *DB) mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var se *store.Error
	var ce *store.ConflictError
	var le *store.LeaseError
	var oe *store.OwnershipError
	if errors.As(err, &se) || errors.As(err, &ce) || errors.As(err, &le) || errors.As(err, &oe) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// As in the SQLite store: the caller gave up or ran out of time; safe to try again.
		return &store.Error{Code: store.EBUSY, Message: what + ": " + db.redact(err.Error()), Err: err}
	}
	code := pgCode(err)
	switch {
	case code == sqlstateUniqueViolation && pgConstraint(err) == "products_sku_key_unique":
		// Only a concurrent insert gets here: checkUnique names the other product otherwise.
		return store.Errorf(store.EINVALID, "%s: the sku already exists: another product was just given a sku "+
			"that differs only in case, surrounding spaces, width, non-breaking or zero-width characters (%s)", what, pgDetail(err))
	case code == sqlstateUniqueViolation && pgConstraint(err) == "products_sku_key":
		return store.Errorf(store.EINVALID, "%s: sku already exists (%s)", what, pgDetail(err))
	case code == sqlstateUniqueViolation:
		return store.Errorf(store.EINVALID, "%s: a unique value already exists (%s)", what, pgConstraint(err))
	case code == sqlstateForeignKeyViolation && strings.HasSuffix(pgConstraint(err), "_"+store.ParentField+"_fkey"):
		return store.Errorf(store.ENOTFOUND, "%s: the parent record does not exist (%s)", what, pgDetail(err))
	case code == sqlstateForeignKeyViolation:
		// Only a delete that committed after the write's own check gets here.
		return store.Errorf(store.EINVALID, "%s: a record it refers to does not exist (%s)", what, pgDetail(err))
	case code == sqlstateCheckViolation, code == sqlstateNumericOutOfRange:
		return store.Errorf(store.EINVALID, "%s: value out of range: %s", what, pgMessage(err))
	case isLockErr(err), code == sqlstateQueryCanceled:
		return store.Errorf(store.EBUSY, "%s: the database stayed locked (%s); try again", what, pgMessage(err))
	case code == sqlstateInsufficientPriv:
		return store.Errorf(store.EUNAVAILABLE, "%s: the database role lacks a right tandem needs: %s", what, pgMessage(err))
	case code == sqlstateUndefinedColumn:
		// A client opened before a schema change that renamed or dropped a field it writes.
		return store.Errorf(store.EINVALID, "%s: the store's schema changed since this client opened it (%s); open the store again", what, pgMessage(err))
	case code == sqlstateInvalidSchema, code == sqlstateUndefinedTable:
		return store.Errorf(store.EUNAVAILABLE, "%s: %s (is the search_path right and the schema migrated?)", what, pgMessage(err))
	case isConnErr(err):
		return store.Errorf(store.EUNAVAILABLE, "%s: cannot connect to PostgreSQL at %s: %s", what, db.where, db.redact(err.Error()))
	}
	// Keep the cause (errors.Is/As still find an error returned by a caller's function),
	// with a message that never shows the password.
	return &store.Error{Code: store.EINTERNAL, Message: what + ": " + db.redact(err.Error()), Err: err}
}

func pgDetail(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Detail != "" {
		return pe.Detail
	}
	return pgConstraint(err)
}

func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (SQLSTATE " + pe.Code + ")"
	}
	return err.Error()
}

// errLostDuringSave is the answer when the connection died while COMMIT was under way: the
// save may or may not have been applied, and only an idempotency key makes a retry safe.
func (db *DB) errLostDuringSave(what string, err error) error {
	return store.Errorf(store.EUNAVAILABLE, "%s: connection lost during save; the save may or may not have been applied — retry with the same idempotency key (%s)",
		what, db.redact(err.Error()))
}

// redact returns a driver's message for tandem's own. The driver names servers without
// their password (its connect errors say user and database), so the message is kept whole;
// should one ever hold the password, it is withheld whole, not cut around the password,
// which would show where the password stood and what surrounds it.
func (db *DB) redact(msg string) string {
	if db.password != "" && strings.Contains(msg, db.password) {
		return "(the driver's message is withheld: it repeats the connection's password)"
	}
	return msg
}
