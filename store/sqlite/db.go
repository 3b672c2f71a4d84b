// Package sqlite implements store.Store on an embedded SQLite file (modernc.org/sqlite, pure
// Go): WAL, a busy timeout, foreign keys, and BEGIN IMMEDIATE for every write transaction so
// that SQLite's single writer lock serializes read-modify-write transactions and tree moves.
package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/tandem-editor/tandem/store"
)

var _ store.Store = (*DB)(nil)

// DB is a tandem store on one SQLite file. It holds two connection pools: a write pool whose
// transactions all begin IMMEDIATE, and a read pool for plain reads; change-feed subscribers
// each hold one more connection of their own.
type DB struct {
	path    string
	write   *sql.DB // every transaction is BEGIN IMMEDIATE (_txlock=immediate)
	read    *sql.DB // plain reads
	feed    *sql.DB // one dedicated connection per subscriber (PRAGMA data_version)
	reg     *store.Registry
	now     func() time.Time
	version int
	owner   string // distinguishes this process's idempotency claims from another's

	commits notifier  // wakes this process's subscribers after each commit
	stmts   stmtCache // prepared statements of write transactions

	ctx    context.Context // ends on Close; stops subscribers
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Retry budget for SQLITE_BUSY / SQLITE_LOCKED at begin and commit, on top of busy_timeout.
const (
	busyAttempts = 5
	busyBackoff  = 20 * time.Millisecond
)

// busyTimeout is how long SQLite's busy handler waits for a lock before answering SQLITE_BUSY.
const busyTimeout = 10 * time.Second

const pragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"

// Open opens (creating if needed) the tandem database at path and migrates it to the
// current schema. EUNAVAILABLE when the file cannot be opened (for example its directory is
// missing: no file is created then), EINVALID when it is not an SQLite database or was
// written by a newer tandem.
func Open(ctx context.Context, path string, opts store.Options) (*DB, error) {
	opts = opts.WithDefaults()
	if path == "" {
		return nil, store.Errorf(store.EINVALID, "open database: no path given")
	}
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		// Each pool would see a different in-memory database, and a URI would bypass the
		// settings below: tandem needs a plain file path.
		return nil, store.Errorf(store.EINVALID, "open database %s: give the path of a database file", path)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, store.Errorf(store.EINVALID, "open database %s: it is a directory, not a database file", path)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return nil, store.Errorf(store.EUNAVAILABLE, "open database %s: directory %s does not exist", path, dir)
	} else if !st.IsDir() {
		return nil, store.Errorf(store.EUNAVAILABLE, "open database %s: %s is not a directory", path, dir)
	}
	base := "file:" + escapePath(path) + "?" + pragmas
	db := &DB{path: path, reg: opts.Registry, now: opts.Now}
	db.ctx, db.cancel = context.WithCancel(context.Background())
	var err error
	if db.write, err = sql.Open("sqlite", base+"&_txlock=immediate"); err != nil {
		return nil, store.Errorf(store.EUNAVAILABLE, "open database %s: %v", path, err)
	}
	db.write.SetMaxOpenConns(4)
	db.read, _ = sql.Open("sqlite", base)
	db.read.SetMaxOpenConns(8)
	db.feed, _ = sql.Open("sqlite", base)
	db.feed.SetMaxIdleConns(0)
	var b [8]byte
	_, _ = rand.Read(b[:])
	db.owner = hex.EncodeToString(b[:])

	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// escapePath makes a file path safe inside a "file:" URI: the characters that would end the
// path or start an escape are percent-encoded (SQLite decodes them).
func escapePath(p string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

// Registry returns the field registry the store was opened with.
func (db *DB) Registry() *store.Registry { return db.reg }

// SchemaVersion returns the schema version of the database (the number of migrations applied).
func (db *DB) SchemaVersion() int { return db.version }

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Close stops the change-feed subscribers and closes every connection.
func (db *DB) Close() error {
	db.cancel()
	db.wg.Wait()
	db.closeStmts()
	var errs []error
	for _, p := range []*sql.DB{db.feed, db.read, db.write} {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return mapErr("close database", err)
	}
	return nil
}

// tx is one write transaction: the SQL transaction and the Go-side timestamp all its rows get.
type tx struct {
	*sql.Tx
	db    *DB
	now   time.Time // Go-side time (Options.Now), one per transaction
	dbNow time.Time // the database clock, read lazily (lease and key expiry)
}

// writeTx runs fn in a BEGIN IMMEDIATE transaction and commits. It retries the whole
// transaction with jittered backoff when the database stays busy or locked past busy_timeout,
// then gives up with EBUSY. fn may run more than once. Typed store errors from fn pass
// through; driver errors are mapped to store codes with what as their context.
func (db *DB) writeTx(ctx context.Context, what string, fn func(*tx) error) error {
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := db.tryWrite(ctx, fn)
		if err == nil {
			db.commits.broadcast()
			return nil
		}
		// An attempt that already sat out busy_timeout is not retried: the lock holder is
		// stuck, not racing us. Quick BUSY answers (which skip the busy handler) are.
		if !isBusy(err) || attempt >= busyAttempts || time.Since(start) >= busyTimeout/2 {
			return mapErr(what, err)
		}
		d := busyBackoff << (attempt - 1)
		d += mrand.N(d)
		select {
		case <-ctx.Done():
			return mapErr(what, ctx.Err())
		case <-time.After(d):
		}
	}
}

func (db *DB) tryWrite(ctx context.Context, fn func(*tx) error) error {
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	t := &tx{Tx: sqlTx, db: db, now: db.now().UTC()}
	if err := fn(t); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	return sqlTx.Commit()
}

// clock returns the database clock's now, read once per transaction.
func (t *tx) clock(ctx context.Context) (time.Time, error) {
	if !t.dbNow.IsZero() {
		return t.dbNow, nil
	}
	var s string
	if err := t.QueryRowContext(ctx, `SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`).Scan(&s); err != nil {
		return time.Time{}, fmt.Errorf("read database clock: %w", err)
	}
	n, err := parseTime(s)
	if err != nil {
		return time.Time{}, err
	}
	t.dbNow = n
	return n, nil
}

// timeLayout is how every time is stored: UTC, milliseconds, so that text order is time order.
const timeLayout = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad time %q in database: %w", s, err)
	}
	return t.UTC(), nil
}

// notifier wakes waiters: wait returns a channel that is closed by the next broadcast.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notifier) broadcast() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}

// Prepared statements. Parsing SQL is a third of a save's cost in modernc.org/sqlite, so
// write transactions run their (parameterized, registry-built) statements from a cache of
// statements prepared on the write pool; database/sql keeps each one prepared per connection.

// maxCachedStmts bounds the cache: update statements vary with the set of changed fields.
const maxCachedStmts = 512

type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// stmt returns the cached statement for q, or nil when it is not prepared yet. On a miss it
// prepares q in the background: preparing inside the transaction would need a second
// connection of the write pool, and with every connection inside a transaction waiting for
// the write lock that would deadlock. The caller runs q unprepared meanwhile.
func (db *DB) stmt(q string) *sql.Stmt {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	if s, ok := db.stmts.m[q]; ok || len(db.stmts.m) >= maxCachedStmts || db.ctx.Err() != nil {
		return s
	}
	if db.stmts.m == nil {
		db.stmts.m = map[string]*sql.Stmt{}
	}
	db.stmts.m[q] = nil // being prepared
	db.wg.Go(func() {
		s, err := db.write.PrepareContext(db.ctx, q)
		db.stmts.mu.Lock()
		defer db.stmts.mu.Unlock()
		if err != nil {
			delete(db.stmts.m, q) // try again on the next use
			return
		}
		db.stmts.m[q] = s
	})
	return nil
}

func (db *DB) closeStmts() {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	for _, s := range db.stmts.m {
		if s != nil {
			s.Close()
		}
	}
	db.stmts.m = nil
}

// QueryRowContext runs a single-statement query in the transaction from the statement cache.
func (t *tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	s := t.db.stmt(q)
	if s == nil {
		return t.Tx.QueryRowContext(ctx, q, args...)
	}
	return t.Tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
}

// QueryContext runs a single-statement query in the transaction from the statement cache.
func (t *tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	s := t.db.stmt(q)
	if s == nil {
		return t.Tx.QueryContext(ctx, q, args...)
	}
	return t.Tx.StmtContext(ctx, s).QueryContext(ctx, args...)
}

// ExecContext runs a single statement in the transaction from the statement cache.
func (t *tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	s := t.db.stmt(q)
	if s == nil {
		return t.Tx.ExecContext(ctx, q, args...)
	}
	return t.Tx.StmtContext(ctx, s).ExecContext(ctx, args...)
}
