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
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	driver "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tandem-editor/tandem/internal/wake"
	"github.com/tandem-editor/tandem/store"
)

var _ store.Store = (*DB)(nil)

// DB is a tandem store on one SQLite file. It holds two connection pools: a write pool whose
// transactions all begin IMMEDIATE, and a read pool for plain reads; the change feed's shared
// reader holds one more connection of its own (feed.go).
type DB struct {
	path     string
	write    *sql.DB                        // every transaction is BEGIN IMMEDIATE (_txlock=immediate)
	read     *sql.DB                        // plain reads
	feed     *sql.DB                        // the shared change-feed reader's connection (PRAGMA data_version)
	reg      atomic.Pointer[store.Registry] // the schema the store runs (loadSchema; ApplySchema swaps it)
	stored   store.SchemaCache              // the newer schema a write found the store keeps (stale.go)
	asked    *store.Registry                // the registry it was opened with (store.Options.Registry), nil for none
	now      func() time.Time
	version  int
	storeID  string // store_meta's store_id, read at open
	readOnly string // why writes are refused ("" when the store is writable)
	scratch  bool   // OpenConfig.Scratch: no WAL, no fsync
	created  bool   // this OpenWith call created the file, or made the store in an empty one
	// schemaMade is set when this value's migration installed the schema in an empty
	// database (of the SQLite files of several processes at once, exactly one).
	schemaMade bool
	owner      string // distinguishes this process's idempotency claims from another's

	commits wake.Signal // wakes this process's feed reader after each commit (committed)
	hub     feedHub     // the change feed's shared reader (feed.go)
	dirty   atomic.Bool // a commit since the last background checkpoint (checkpoint.go)
	writer  *fileWriter // this process's queue of write transactions on the file (commit.go)
	wdsn    string      // how the file's write connection is opened (writeConn)
	closed  atomic.Bool // Close has let go of writer
	// relQueries holds the UPDATE of each shape of relative save (relativeQuery): a few
	// per registry (the fields a program adds to), each made once.
	relQueries sync.Map
	// searchBuilt is set once the file is known to have no search index left to build
	// (workcopy_search.go): it stays so.
	searchBuilt atomic.Bool
	// copyKnown says whether the file is a working copy, once a system save has asked
	// (copyWriter): copyUnknown, copyNo or copyYes. Either answer stays true: a copy never
	// stops being one, and a store becomes one only by StartCopy, on a store with no record
	// to save (tandem clone makes it on a file of its own, renamed into place when complete),
	// which sets copyYes when it runs on this DB.
	copyKnown atomic.Int32

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

// fileMode is the permission of a database file tandem creates: the store holds everything
// its users wrote, so only its owner may read it, whatever the umask. SQLite gives the -wal
// and -shm files the database file's mode.
const fileMode fs.FileMode = 0o600

// access is how the pools open the file.
type access int

const (
	accessRW        access = iota // mode=rw: never creates the file
	accessRO                      // mode=ro: SQLite may still make the -shm to read a WAL database
	accessImmutable               // mode=ro&immutable=1: no -wal, -shm or locks (a read-only directory)
)

// dsn is the URI of the file for the access mode, with the settings every connection gets.
// _dqs=0 makes a double-quoted name that no column has an error ("no such column"), not a
// string literal: a handle opened before a schema change renamed or dropped a field would
// otherwise read the field's old name as its value (quoteIdent quotes every column).
func (a access) dsn(path string) string {
	base := "file:" + escapePath(path) + "?_dqs=0&"
	switch a {
	case accessRO:
		return base + "mode=ro&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	case accessImmutable:
		return base + "mode=ro&immutable=1&_pragma=foreign_keys(1)"
	}
	// No journal_mode here: switching a file to WAL writes it, so migrate does that once
	// (WAL is a property of the file, and every connection follows it).
	return base + "mode=rw&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
}

// OpenConfig says what OpenWith may do beyond opening an existing store.
type OpenConfig struct {
	// Create makes the database when there is no file at the path. The new file (mode 0600)
	// is made next to the path under a temporary name, migrated and filled by Fill, then
	// linked to the path in one step: nobody ever sees a half-made store, and when another
	// process creates the path first, OpenWith opens that store instead of its own (Created
	// reports false). Create also makes the store in an existing empty database file (a
	// 0-byte file, say), in place: that counts as creating it (Created reports true, and
	// Fill fills it, though others may see it before it is filled). Without Create a
	// missing file, or an empty database without tandem's schema, is ENOTFOUND and no file
	// is made.
	Create bool
	// Fill, when Create makes the database, fills the new store before it appears at the
	// path (sample data), or right after the schema when the file was an empty one. It is
	// not called when the file holds a store.
	Fill func(ctx context.Context, st store.Store) error
	// ReadOnly opens the database for reading even when the file is writable: every write
	// is refused with EINVALID and nothing, not even a migration, writes to the file.
	ReadOnly bool
	// Scratch opens a file that nobody else uses and that is thrown away unless it is
	// complete, such as a clone's before it is linked into place: no WAL (the file is
	// switched out of it), the rollback journal in memory and no fsync, so every page is
	// written once, into the file, and the commits do not wait for the disk. A crash in
	// the middle leaves the file damaged; the caller syncs the file (os.File.Sync) after
	// Close before trusting it. The next open without Scratch puts the file back in WAL.
	// The file is also read through a memory map (scratchMmapSize), which a file that
	// nobody else truncates can afford. With Create and no file at the path, the store is
	// made in the file itself rather than in a temporary file linked into place: a
	// scratch file is a temporary file already.
	Scratch bool
	// PageSize, when not 0, is the page size of the database file when this call makes the
	// store (Create): a power of two from 512 to 65536. An existing store keeps its own.
	// SQLite's default, 4096, suits a store written a few records at a time; a working
	// copy that a clone loads in bulk is made with larger pages (cmd clone), which take
	// fewer page splits and writes to load and fewer pages to read in a full scan.
	PageSize int
}

// Open opens the tandem database at path, creating it when there is none (OpenWith with
// Create and no Fill).
func Open(ctx context.Context, path string, opts store.Options) (*DB, error) {
	return OpenWith(ctx, path, opts, OpenConfig{Create: true})
}

// OpenWith opens the tandem database at path as cfg allows. Opening a database whose schema
// is up to date only reads it, so it never waits for a writer; a migration takes the write
// lock only when one is due. A file tandem may not write (its permissions, an immutable
// file, a read-only file system), or whose directory does not let SQLite make the -wal and
// -shm files, is opened read-only: reads work and every write fails with EINVALID saying
// why. Errors: ENOTFOUND when there is no store and cfg.Create is not set; EUNAVAILABLE when
// the file cannot be opened (for example its directory is missing: no file is made then);
// EINVALID when it is not a tandem database, was written by a newer tandem, or needs a
// migration but is read-only.
//
// The store runs the schema it keeps; opts.Registry, when given, is recorded as a new
// store's schema, and otherwise must be the kept one or an overlay of it (see schema.go).
func OpenWith(ctx context.Context, path string, opts store.Options, cfg OpenConfig) (*DB, error) {
	asked := opts.Registry
	opts.Registry = sampleSchema // parsed once per process, not by WithDefaults on every open
	opts = opts.WithDefaults()
	opts.Registry = asked // nil stays nil: loadSchema tells "none given" from the sample
	if path == "" {
		return nil, store.Errorf(store.EINVALID, "open database: no path given")
	}
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		// Each pool would see a different in-memory database, and a URI would bypass the
		// settings below: tandem needs a plain file path.
		return nil, store.Errorf(store.EINVALID, "open database %s: give the path of a database file", path)
	}
	if n := cfg.PageSize; n != 0 && (n < 512 || n > 65536 || n&(n-1) != 0) {
		return nil, store.Errorf(store.EINVALID, "open database %s: page size %d is not a power of two from 512 to 65536", path, n)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return nil, store.Errorf(store.EUNAVAILABLE, "open database %s: directory %s does not exist", path, dir)
	} else if !st.IsDir() {
		return nil, store.Errorf(store.EUNAVAILABLE, "open database %s: %s is not a directory", path, dir)
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return nil, store.Errorf(store.EINVALID, "open database %s: it is a directory, not a database file", path)
	case errors.Is(err, fs.ErrNotExist) && !cfg.Create:
		return nil, store.Errorf(store.ENOTFOUND, "no store at %s", path)
	case errors.Is(err, fs.ErrNotExist) && cfg.Scratch:
		// A scratch file is the caller's own temporary file, linked into place by the
		// caller once it is complete: the store is made in it directly, without create's
		// own temporary file, WAL and fsyncs.
		if err := makeEmpty(path); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		created, err := create(ctx, path, opts, cfg.Fill, cfg.PageSize)
		if err != nil {
			return nil, err
		}
		db, err := open(ctx, path, path, opts, OpenConfig{ReadOnly: cfg.ReadOnly, Scratch: cfg.Scratch}, true)
		if err != nil {
			return nil, err
		}
		db.created = created
		return db, nil
	case err != nil:
		return nil, store.Errorf(store.EUNAVAILABLE, "open database %s: %v", path, err)
	}
	db, err := open(ctx, path, path, opts, cfg, cfg.Create)
	if err != nil || !cfg.Create || !db.schemaMade {
		return db, err
	}
	// An empty file (touch tandem.db) is a new store: this open installed the schema in
	// it, in place (a file that exists cannot be linked over), so it is filled here as a
	// new one is. Of several processes opening the file at once only the one whose
	// migration found it empty fills it; the others open the store it made.
	if cfg.Fill != nil {
		if err := cfg.Fill(ctx, db); err != nil {
			db.Close()
			return nil, err
		}
	}
	db.created = true
	return db, nil
}

// create makes a new database for path: a temporary file next to it, migrated and filled,
// then hard-linked to path, which fails if path exists, so of several processes creating
// one path at once exactly one wins and the others open the winner's store. It reports
// whether this call made the store at path.
func create(ctx context.Context, path string, opts store.Options, fill func(context.Context, store.Store) error, pageSize int) (bool, error) {
	fail := func(err error) (bool, error) {
		if store.ErrorCode(err) != "" && store.ErrorCode(err) != store.EINTERNAL {
			return false, err
		}
		return false, store.Errorf(store.EUNAVAILABLE, "create database %s: %v", path, err)
	}
	dir, base := filepath.Split(path)
	tmp := filepath.Join(dir, "."+base+".new-"+randomHex(6))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return fail(err)
	}
	defer removeDatabase(tmp)
	// The umask may have taken bits away from fileMode; the mode is not the umask's choice.
	err = f.Chmod(fileMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	db, err := open(ctx, tmp, path, opts, OpenConfig{PageSize: pageSize}, true)
	if err != nil {
		return fail(err)
	}
	if fill != nil {
		if err := fill(ctx, db); err != nil {
			db.Close()
			return false, err
		}
	}
	// Move everything from the -wal into the file itself: only the file is linked.
	_, err = db.checkpointTruncate(ctx)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if fi, err := os.Stat(tmp + "-wal"); err == nil && fi.Size() > 0 {
		return fail(fmt.Errorf("%s-wal still holds changes after the checkpoint", tmp))
	}
	switch err := os.Link(tmp, path); {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return false, nil // another process created path first: open its store
	default:
		// A file system without hard links (FAT, some network shares): rename, which
		// replaces a file that another process created in the instant since the check.
		if _, serr := os.Lstat(path); serr == nil {
			return false, nil
		}
		if err := os.Rename(tmp, path); err != nil {
			return fail(err)
		}
	}
	syncDir(dir)
	return true, nil
}

// makeEmpty makes an empty file at path, which must not exist, with tandem's file mode
// whatever the umask; opened with Create, an empty file becomes a new store in place.
func makeEmpty(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return store.Errorf(store.EUNAVAILABLE, "create database %s: %v", path, err)
	}
	err = f.Chmod(fileMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return store.Errorf(store.EUNAVAILABLE, "create database %s: %v", path, err)
	}
	return nil
}

// removeDatabase removes a database file and its companions, ignoring what is not there.
func removeDatabase(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		_ = os.Remove(path + suffix)
	}
}

// syncDir makes a new directory entry durable; best effort, as some systems cannot sync a
// directory.
func syncDir(dir string) {
	if dir == "" {
		dir = "."
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// scratchMmapSize is how much of a Scratch file SQLite reads through a memory map rather
// than read(2) calls into its page cache, up to 1 GiB (beyond it, and where the map cannot
// be made, it reads as usual). A clone's load builds six indexes after the rows, each
// scanning the whole table, whose pages the default cache no longer holds: read through
// the map, a clone of 100,000 products (a 47 MB file) makes no read call at all instead of
// one per page per index (about a fifth of the CPU the index builds took, measured in
// BenchmarkLoadCopy's profile). A larger cache instead costs more than it saves (see
// LoadCopy).
const scratchMmapSize = 1 << 30

// open opens the existing database file at file (named name in messages), read-only when
// cfg.ReadOnly is set or tandem may not write it, with the settings of cfg.Scratch, and
// brings it to the current schema; a store it makes gets cfg.PageSize. allowInit lets it
// set up an empty database; without it an empty database is ENOTFOUND.
func open(ctx context.Context, file, name string, opts store.Options, cfg OpenConfig, allowInit bool) (*DB, error) {
	mode, why := accessRW, ""
	switch {
	case cfg.ReadOnly:
		mode, why = accessRO, "opened read-only"
	case !writable(file):
		mode, why = accessRO, "the file is not writable"
	}
	for {
		db, err := openPools(file, name, opts, mode, why, cfg.Scratch && mode == accessRW, cfg.PageSize)
		if err != nil {
			return nil, err
		}
		err = db.migrate(ctx, allowInit)
		if err == nil {
			if mode == accessRW && !db.scratch {
				db.startCheckpoints()
			}
			return db, nil
		}
		db.Close()
		if !noCompanionFiles(err) || mode == accessImmutable {
			return nil, err
		}
		// SQLite could not open or make the -wal or -shm file: the directory is not
		// writable. A read-only connection still reads a WAL database whose -shm it may
		// read; without one, an immutable connection reads the file alone, which is right
		// only when the -wal holds nothing that is not in the file yet.
		why = "its directory is not writable"
		if mode == accessRW {
			mode = accessRO
			continue
		}
		if fi, serr := os.Stat(file + "-wal"); serr == nil && fi.Size() > 0 {
			return nil, errUnreadableWAL(name, file)
		}
		mode = accessImmutable
	}
}

// errUnreadableWAL is the error of a store whose -wal holds commits SQLite cannot read
// without a -shm file it may use: the -shm is there but this user may not read it, or it is
// missing and the directory refuses a new one. Reading the file alone would show the store
// as it was before those commits, so nothing is read.
func errUnreadableWAL(name, file string) error {
	cause := "the directory is not writable, so SQLite cannot make " + name + "-shm; make the directory writable"
	if _, err := os.Stat(file + "-shm"); err == nil {
		cause = "SQLite may not open " + name + "-shm; let its owner make it readable"
	}
	return store.Errorf(store.EUNAVAILABLE,
		"open database %s: %s-wal holds changes not yet in the file, and %s (or let a writer of the store finish)", name, name, cause)
}

// openPools opens the three connection pools on file with access mode (and the settings of
// OpenConfig.Scratch when scratch, and of OpenConfig.PageSize when pageSize is not 0).
// sql.Open connects lazily, so nothing touches the file yet.
func openPools(file, name string, opts store.Options, mode access, why string, scratch bool, pageSize int) (*DB, error) {
	db := &DB{path: name, asked: opts.Registry, now: opts.Now, readOnly: why, scratch: scratch}
	db.reg.Store(opts.Registry)
	if opts.Registry == nil {
		db.reg.Store(sampleSchema) // until loadSchema reads the store's
	}
	db.ctx, db.cancel = context.WithCancel(context.Background())
	dsn := mode.dsn(file)
	if scratch {
		// The last _pragma wins: synchronous(OFF) over the dsn's NORMAL.
		dsn += "&_pragma=journal_mode(MEMORY)&_pragma=synchronous(OFF)&_pragma=mmap_size(" + strconv.Itoa(scratchMmapSize) + ")"
	}
	if pageSize != 0 {
		// Before anything is written: the first connection that writes an empty file
		// makes its first page with this size. A database with pages keeps its size (a
		// change would wait for a VACUUM, which tandem never runs), so this is a no-op for
		// every later connection and open.
		dsn += "&_pragma=page_size(" + strconv.Itoa(pageSize) + ")"
	}
	wdsn := dsn + "&_txlock=immediate"
	if mode == accessRW && !scratch {
		// The background checkpoints (checkpoint.go) keep the WAL short; a save runs one
		// itself only past this many pages, a backstop.
		wdsn += "&_pragma=wal_autocheckpoint(" + strconv.Itoa(backstopPages) + ")"
	}
	var err error
	if db.write, err = sql.Open("sqlite", wdsn); err != nil {
		db.cancel()
		return nil, store.Errorf(store.EUNAVAILABLE, "open database %s: %v", name, err)
	}
	db.write.SetMaxOpenConns(4)
	db.read, _ = sql.Open("sqlite", dsn)
	db.read.SetMaxOpenConns(8)
	db.feed, _ = sql.Open("sqlite", dsn)
	db.feed.SetMaxIdleConns(0)
	db.owner = randomHex(8)
	db.wdsn = wdsn
	db.writer = writerOf(file)
	db.writer.acquire()
	return db, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// escapePath makes a file path safe inside a "file:" URI: the characters that would end the
// path or start an escape are percent-encoded (SQLite decodes them).
func escapePath(p string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

// Registry returns the schema the store runs: the one it keeps (with its version), or the
// overlay of it it was opened with (see schema.go).
func (db *DB) Registry() *store.Registry { return db.reg.Load() }

// SchemaVersion returns the schema version of the database (the number of migrations applied).
func (db *DB) SchemaVersion() int { return db.version }

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// StoreID returns the store's random id from store_meta (see store.Meta).
func (db *DB) StoreID() string { return db.storeID }

// Created reports whether OpenWith made this database, or made the store in an empty file
// (false when it opened an existing store, also one that another process created while this
// one was creating it).
func (db *DB) Created() bool { return db.created }

// ReadOnly returns why the store refuses writes ("the file is not writable", "its directory
// is not writable", "opened read-only"), or "" when it is writable.
func (db *DB) ReadOnly() string { return db.readOnly }

// Close stops the change-feed subscribers and closes every connection.
func (db *DB) Close() error {
	db.cancel()
	db.wg.Wait()
	var errs []error
	if db.closed.CompareAndSwap(false, true) {
		errs = append(errs, db.writer.release())
	}
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
	wc *writeConn // the file's write connection, which runs the transaction: its statement caches serve it
	// txCtx is the context the transaction began with: when it ends, database/sql rolls
	// the transaction back, so raw statements must not run after it (rawstmt.go).
	txCtx context.Context
	now   time.Time // Go-side time (Options.Now), one per transaction
	dbNow time.Time // the database clock, read lazily (lease and key expiry)
	// batch is the write batch the transaction is a write of (batch.go), nil outside one:
	// a create in a batch leaves its search folds to the batch, which writes them in bulk.
	batch *batch
	// waiting, set on the transaction of a background write running alone, is the queue
	// of writes it gives way to, and queued when that write was first queued (givesWay,
	// priority.go).
	waiting *fileWriter
	queued  time.Time
}

// inTx runs fn in a BEGIN IMMEDIATE transaction and commits. It retries the whole
// transaction with jittered backoff when the database stays busy or locked past busy_timeout,
// then gives up with EBUSY. fn may run more than once. Typed store errors from fn pass
// through; driver errors are mapped to store codes with what as their context.
func (db *DB) inTx(ctx context.Context, what string, fn func(*tx) error) error {
	if db.readOnly != "" {
		return db.errReadOnly(what, db.readOnly)
	}
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := db.tryWrite(ctx, fn)
		if err == nil {
			db.committed()
			return nil
		}
		if isReadOnly(err) {
			// The file became read-only after the store was opened.
			return db.errReadOnly(what, "SQLite refused to write it")
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

// isReadOnly reports whether err is SQLite refusing to write a read-only database.
func isReadOnly(err error) bool {
	var e *driver.Error
	return errors.As(err, &e) && (e.Code() == sqlite3.SQLITE_READONLY || e.Code() == sqlite3.SQLITE_READONLY_DIRECTORY)
}

// noCompanionFiles reports whether err is SQLite failing to open or make the -wal or -shm
// file beside the database: SQLITE_CANTOPEN, or SQLITE_READONLY_DIRECTORY, which a
// read-only connection answers when the directory refuses it a new -shm (permission bits,
// as opposed to an immutable directory).
func noCompanionFiles(err error) bool {
	var e *driver.Error
	return errors.As(err, &e) && (e.Code()&0xff == sqlite3.SQLITE_CANTOPEN || e.Code() == sqlite3.SQLITE_READONLY_DIRECTORY)
}

// errReadOnly is the error of a write to a store that may only be read: bad input for this
// store (exit 2), with the reason, so the user knows what to change.
func (db *DB) errReadOnly(what, why string) error {
	return store.Errorf(store.EINVALID, "%s: %s is read-only (%s); tandem can read it but not change it", what, db.path, why)
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

// formatTime returns t in timeLayout. It writes the digits itself (time.Format parses the
// layout on every call, a fifth of what a clone spent encoding each product), and leaves
// the years timeLayout's four digits cannot hold to time.Format.
func formatTime(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(timeLayout)
	}
	hour, minute, sec := t.Clock()
	b := [len(timeLayout)]byte{4: '-', 7: '-', 10: 'T', 13: ':', 16: ':', 19: '.', 23: 'Z'}
	digits := func(at, n, v int) {
		for i := at + n - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	digits(0, 4, year)
	digits(5, 2, int(month))
	digits(8, 2, day)
	digits(11, 2, hour)
	digits(14, 2, minute)
	digits(17, 2, sec)
	digits(20, 3, t.Nanosecond()/1e6) // truncated, as Format's .000 is
	return string(b[:])
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad time %q in database: %w", s, err)
	}
	return t.UTC(), nil
}

// Prepared statements. Parsing SQL is a third of a save's cost in modernc.org/sqlite, so
// write transactions run their (parameterized, registry-built) statements from a cache of
// statements prepared on the write connection's pool; database/sql keeps each one prepared
// per connection.

// maxCachedStmts bounds the cache: update statements vary with the set of changed fields.
const maxCachedStmts = 512

// stmtCache holds the statements prepared on pool.
type stmtCache struct {
	pool   *sql.DB
	ctx    context.Context // ends on close: stops statements being prepared
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	m      map[string]*sql.Stmt
}

func newStmtCache(pool *sql.DB) *stmtCache {
	c := &stmtCache{pool: pool, m: map[string]*sql.Stmt{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// stmt returns the cached statement for q, or nil when it is not prepared yet. On a miss it
// prepares q in the background: preparing inside the transaction would need a second
// connection of the pool, and while the transaction's connection waits for the write lock
// that could deadlock. The caller runs q unprepared meanwhile.
//
// A PRAGMA is never cached: SQLite applies some pragmas (defer_foreign_keys, say) when the
// statement is prepared, so a statement prepared on another connection, or before a commit
// reset the pragma, would run without effect.
func (c *stmtCache) stmt(q string) *sql.Stmt {
	if isPragma(q) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[q]; ok || len(c.m) >= maxCachedStmts || c.ctx.Err() != nil {
		return s
	}
	c.m[q] = nil // being prepared
	c.wg.Go(func() {
		s, err := c.pool.PrepareContext(c.ctx, q)
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil {
			delete(c.m, q) // try again on the next use
			return
		}
		c.m[q] = s
	})
	return nil
}

// isPragma reports whether q is a PRAGMA statement.
func isPragma(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	return len(q) >= 6 && strings.EqualFold(q[:6], "PRAGMA")
}

// close stops the statements being prepared and closes the prepared ones.
func (c *stmtCache) close() {
	// Under the lock, which guards every start of a statement being prepared in the
	// background: none starts after this.
	c.mu.Lock()
	c.cancel()
	c.mu.Unlock()
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.m {
		if s != nil {
			s.Close()
		}
	}
	c.m = nil
}

// stmtCtx is the context a statement of a write transaction runs under: ctx without its
// cancellation while ctx is live. The driver starts a goroutine per statement to watch a
// context that can end, a cost paid inside the write lock by every statement of every save;
// the statements of a write transaction are short, and a context that ends is still
// honoured before each statement (a done ctx is passed on as it is) and at COMMIT, which
// database/sql refuses for a transaction whose context ended.
func stmtCtx(ctx context.Context) context.Context {
	if ctx.Err() != nil || ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// QueryRowContext runs a single-statement query in the transaction from the statement cache.
func (t *tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	ctx = stmtCtx(ctx)
	s := t.wc.stmts.stmt(q)
	if s == nil {
		return t.Tx.QueryRowContext(ctx, q, args...)
	}
	return t.Tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
}

// QueryContext runs a single-statement query in the transaction from the statement cache.
func (t *tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx = stmtCtx(ctx)
	s := t.wc.stmts.stmt(q)
	if s == nil {
		return t.Tx.QueryContext(ctx, q, args...)
	}
	return t.Tx.StmtContext(ctx, s).QueryContext(ctx, args...)
}

// ExecContext runs a single statement in the transaction from the statement cache.
func (t *tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx = stmtCtx(ctx)
	s := t.wc.stmts.stmt(q)
	if s == nil {
		return t.Tx.ExecContext(ctx, q, args...)
	}
	return t.Tx.StmtContext(ctx, s).ExecContext(ctx, args...)
}
