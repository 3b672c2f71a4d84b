// Package postgres is tandem's store on a shared PostgreSQL server (pgx/v5, pgxpool). It
// implements store.Store with PostgreSQL's own tools: version-checked UPDATEs with an
// affected-rows check, SELECT ... FOR UPDATE for the system writer's read-modify-write, a
// transaction-scoped advisory lock that serializes tree moves, leases decided by the
// database clock, and LISTEN/NOTIFY as the wake-up of a change feed whose truth is the change
// log. The schema is taken from the DSN's search_path, so one database can hold several
// independent tandem stores (the tests use one fresh schema each).
package postgres

import (
	"context"
	crand "crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/tandem-editor/tandem/internal/wake"
	"github.com/tandem-editor/tandem/store"
)

// latestSchemaVersion is the database schema version this build writes and understands: the
// number of the newest embedded migration. A database with a higher version was written by
// a newer tandem and is refused. Each store numbers its own migrations.
var latestSchemaVersion = newestMigration()

// newestMigration returns the highest migration number; a build whose migrations cannot be
// read or are not numbered 1, 2, 3… without gaps does not start.
func newestMigration() int {
	ms, err := migrations()
	if err != nil {
		panic(err)
	}
	for i, m := range ms {
		if m.version != i+1 {
			panic(fmt.Sprintf("postgres migration %s: want number %04d (migrations are numbered without gaps)", m.name, i+1))
		}
	}
	return len(ms)
}

// LatestSchemaVersion is the schema version this binary migrates databases to.
func LatestSchemaVersion() int { return latestSchemaVersion }

// Timeouts that keep every wait bounded. They are session defaults of every pooled
// connection (runtime parameters, no round trip per transaction); a DSN may override them.
const (
	connectTimeout       = 5 * time.Second
	lockTimeout          = "5s"  // a row, advisory or table lock wait ends with 55P03
	statementTimeout     = "60s" // no statement runs forever (57014)
	idleInTxTimeout      = "60s" // a client that hangs inside a transaction frees its locks
	lockRetryBudget      = 15 * time.Second
	connRetryBudget      = 15 * time.Second
	maxLockRetries       = 10
	listenWait           = time.Second // Subscribe reads the change log at least this often
	listenAppNamePrefix  = "tandem-listen "
	clientAppNamePrefix  = "tandem "
	maxIdentifierLength  = 63
	channelPrefix        = "tandem_changes_"
	migrationLockPurpose = "tandem.migrate."
	treeLockPurpose      = "tandem.tree."
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DB is a tandem store on PostgreSQL. It is safe for concurrent use.
type DB struct {
	pool *pgxpool.Pool
	// regState is the store's registry and what is derived from it (useRegistry): swapped
	// whole by a schema change while other goroutines read it.
	regState  atomic.Pointer[schemaState]
	given     *store.Registry   // the registry it was opened with (store.Options.Registry), nil for none
	stored    store.SchemaCache // the newer schema a write found the store keeps (stale.go)
	now       func() time.Time
	schema    string // the schema the store lives in (current_schema())
	channel   string // the NOTIFY channel of this schema's change feed
	treeKey   int64  // advisory lock key that serializes this schema's tree moves
	where     string // user@host:port/db, for messages; never the password
	password  string // only to scrub it from driver messages
	listenCfg *pgx.ConnConfig
	owner     string // identifies this DB value as an idempotency claimer
	version   int
	created   bool   // this Open installed tandem's tables (Created)
	storeID   string // store_meta's store_id, read at open

	oneStatementSaves atomic.Int64 // saves relativeSave committed itself, for tests

	ctx       context.Context // cancelled by Close: ends subscriptions
	cancel    context.CancelFunc
	wg        sync.WaitGroup // subscription goroutines and the waker
	commits   wake.Signal    // wakes this process's subscribers after each commit
	poke      chan struct{}  // asks the waker for a NOTIFY (feed.go)
	closeOnce sync.Once
}

var _ store.Store = (*DB)(nil)

// Open connects to the PostgreSQL server dsn names (postgres://user@host:port/db?...),
// migrates the schema named by the DSN's search_path (default: the role's default schema) and
// returns the store. An unreachable server is an EUNAVAILABLE error within about five seconds;
// a database written by a newer tandem is refused with EINVALID. No error contains the password.
//
// The store's schema is the one it keeps (see loadSchema): opts.Registry nil opens it with
// that; a store without one records opts.Registry (nil: the sample schema) as version 1 and
// creates its kinds' tables. A registry other than the store's is refused (EINVALID), a field
// registry of the form before schemas is checked against it (store.Registry.CheckOverlay).
func Open(ctx context.Context, dsn string, opts store.Options) (*DB, error) {
	given := opts.Registry
	opts = opts.WithDefaults()
	if _, err := parseDSN(dsn); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The connection parsed (above): a pool parameter (pool_max_conns=…) is wrong.
		return nil, store.Errorf(store.EINVALID, "open store: a pool_ parameter of the connection string is not usable "+
			"(the string is not repeated here, as it may hold a password)")
	}
	cc := cfg.ConnConfig
	db := &DB{
		now:      opts.Now,
		where:    describe(cc.Config),
		password: cc.Password,
		owner:    randomHex(8),
		poke:     make(chan struct{}, 1),
	}
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = connectTimeout
	}
	setDefault(cc.RuntimeParams, "lock_timeout", lockTimeout)
	setDefault(cc.RuntimeParams, "statement_timeout", statementTimeout)
	setDefault(cc.RuntimeParams, "idle_in_transaction_session_timeout", idleInTxTimeout)
	cc.RuntimeParams[writerSetting] = writerValue // tells tandem's writes from other programs' (outside.go)
	schemaHint := cc.RuntimeParams["search_path"]
	db.listenCfg = cc.Copy()
	setDefault(cc.RuntimeParams, "application_name", appName(clientAppNamePrefix, schemaHint))
	db.listenCfg.RuntimeParams["application_name"] = appName(listenAppNamePrefix, schemaHint)

	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "open store at %s: %s", db.where, db.redact(err.Error()))
	}
	db.pool = pool
	db.ctx, db.cancel = context.WithCancel(context.Background())
	if err := db.init(ctx, given); err != nil {
		db.cancel()
		pool.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) init(ctx context.Context, given *store.Registry) error {
	pctx, cancel := context.WithTimeout(ctx, connectTimeout+time.Second)
	defer cancel()
	if err := db.pool.Ping(pctx); err != nil {
		if pgCode(err) == sqlstateInvalidPassword && db.password == "" {
			return &store.Error{Code: store.EUNAVAILABLE, Err: ErrNoPassword, Message: fmt.Sprintf("open store: PostgreSQL at %s asks for a password and none was given: "+
				"set PGPASSWORD, or put it in the password file (~/.pgpass, or the file PGPASSFILE names)", db.where)}
		}
		return store.Errorf(store.EUNAVAILABLE, "open store: cannot connect to PostgreSQL at %s: %s", db.where, db.redact(err.Error()))
	}
	var schema *string
	if err := db.pool.QueryRow(pctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return db.mapErr("open store", err)
	}
	if schema == nil {
		var path string
		_ = db.pool.QueryRow(pctx, "SHOW search_path").Scan(&path)
		return store.Errorf(store.EINVALID, "open store at %s: the search_path (%s) names no existing schema; create it first (CREATE SCHEMA ...)", db.where, path)
	}
	db.schema = *schema
	db.channel = channelName(db.schema)
	db.treeKey = lockKey(treeLockPurpose + db.schema)
	if err := db.migrate(ctx); err != nil {
		return err
	}
	db.given = given
	if err := db.loadSchema(ctx, given); err != nil {
		return err
	}
	err := db.read(ctx, "open store: read the store id", func(q querier) error {
		err := q.QueryRow(ctx, "SELECT value FROM store_meta WHERE key = 'store_id'").Scan(&db.storeID)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.Errorf(store.EINTERNAL, "open store at %s: schema %s has no store id in store_meta; the store is damaged", db.where, db.schema)
		}
		return err
	})
	if err != nil {
		return err
	}
	listening, _ := db.listening(true)
	db.wg.Add(1)
	go db.wake(listening)
	return nil
}

// StoreID returns the store's random id from store_meta (see store.Meta).
func (db *DB) StoreID() string { return db.storeID }

// SessionUser returns the role the store's connections authenticated as (session_user),
// which a SET ROLE does not change (store.RoleStore).
func (db *DB) SessionUser(ctx context.Context) (string, error) {
	var name string
	if err := db.pool.QueryRow(ctx, "SELECT session_user").Scan(&name); err != nil {
		return "", db.mapErr("read the database role", err)
	}
	return name, nil
}

var _ store.RoleStore = (*DB)(nil)

// Registry returns the store's schema (at its version in the store), or the field registry
// of the form before schemas it was opened with.
func (db *DB) Registry() *store.Registry { return db.regState.Load().reg }

// SchemaVersion returns the schema version of the open database.
func (db *DB) SchemaVersion() int { return db.version }

// Created reports whether Open installed tandem's tables, the schema holding none of them
// before: of several first openings at once, exactly one does.
func (db *DB) Created() bool { return db.created }

// Schema returns the PostgreSQL schema the store lives in.
func (db *DB) Schema() string { return db.schema }

// Close ends every subscription (their channels are closed) and closes every pooled
// connection. It is safe to call more than once.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.cancel()
		db.wg.Wait()
		db.pool.Close()
	})
	return nil
}

// migration is one embedded schema step.
type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	files, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, f := range files {
		base := strings.TrimPrefix(f, "migrations/")
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its version number", base)
		}
		b, err := migrationFiles.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: n, name: base, sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	return out, nil
}

// migrate brings the schema to SchemaVersion. An up-to-date schema is only read, so a role
// with plain SELECT/INSERT/UPDATE/DELETE rights can use a pre-migrated schema. Concurrent
// first openings serialize on a transaction-scoped advisory lock for this schema.
func (db *DB) migrate(ctx context.Context) error {
	v, err := readSchemaVersion(ctx, db.pool)
	if err != nil {
		return db.mapErr("open store: read schema version", err)
	}
	if err := checkNotNewer(v); err != nil {
		return err
	}
	if v == latestSchemaVersion {
		db.version = v
		return nil
	}
	ms, err := migrations()
	if err != nil {
		return store.Errorf(store.EINTERNAL, "open store: %v", err)
	}
	installed := false
	err = db.inTx(ctx, "migrate schema "+db.schema, true, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(migrationLockPurpose+db.schema)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		v, err := readSchemaVersion(ctx, tx)
		if err != nil {
			return err
		}
		if err := checkNotNewer(v); err != nil {
			return err
		}
		installed = v == 0
		for _, m := range ms {
			if m.version <= v || m.version > latestSchemaVersion {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if err := afterMigration(ctx, tx, m.name); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", m.version); err != nil {
				return err
			}
		}
		// The migrations' own tables; the tables of a schema's other kinds get theirs
		// when they are made (loadSchema).
		return installOutside(ctx, tx, migratedSchema, db.schema, db.channel)
	})
	if err != nil {
		if store.ErrorCode(err) == store.EINTERNAL {
			return db.mapErr("open store: migrate schema "+db.schema, err)
		}
		return err
	}
	db.version = latestSchemaVersion
	db.created = installed
	return nil
}

func checkNotNewer(v int) error {
	if v > latestSchemaVersion {
		return store.Errorf(store.EINVALID, "database schema version %d is newer than this tandem (%d); upgrade tandem", v, latestSchemaVersion)
	}
	return nil
}

func readSchemaVersion(ctx context.Context, q querier) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, "SELECT to_regclass('schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}

// querier is what pgx.Tx, *pgx.Conn and *pgxpool.Pool have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// inTx runs fn in a transaction and commits, rerunning the whole transaction (fn included)
// after a deadlock, serialization failure, lock timeout, an idempotency-key race (errRetry)
// or a connection lost before COMMIT (nothing was applied then), with jittered backoff and
// bounded attempts. A connection lost during COMMIT leaves the outcome unknown: the
// transaction is rerun only when repeatable says that is safe (reads, keyed saves, claims that
// recognise themselves), else the caller gets EUNAVAILABLE saying so. repeatable is read after
// fn ran, so fn may decide it (LockedUpdate knows its key only then).
func (db *DB) inTx(ctx context.Context, what string, repeatable bool, fn func(pgx.Tx) error) error {
	return db.inTxFlag(ctx, what, &repeatable, fn)
}

func (db *DB) inTxFlag(ctx context.Context, what string, repeatable *bool, fn func(pgx.Tx) error) error {
	start := time.Now()
	lockRetries := 0
	for attempt := 0; ; attempt++ {
		err, committing := db.runTx(ctx, fn)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return db.mapErr(what, ctx.Err())
		}
		elapsed := time.Since(start)
		retryable := isLockErr(err) || errors.Is(err, errRetry) || db.uniqueKeyRace(err)
		switch {
		case retryable && lockRetries < maxLockRetries && elapsed < lockRetryBudget:
			// errRetry: a concurrent transaction inserted the same key or scope first; the
			// rerun sees its committed row.
			lockRetries++
		case errors.Is(err, errRetry):
			return store.Errorf(store.EBUSY, "%s: concurrent writers kept getting in the way after %d attempts; try again", what, lockRetries+1)
		case isLockErr(err):
			return store.Errorf(store.EBUSY, "%s: the database stayed locked after %d attempts (%s); try again", what, lockRetries+1, pgMessage(err))
		case batchOf(ctx, db) != nil && !retryable:
			return db.mapErr(what, err) // the batch's transaction decides what stays
		case isConnErr(err) && committing && !*repeatable:
			return db.errLostDuringSave(what, err)
		case isConnErr(err) && elapsed < connRetryBudget:
		default:
			return db.mapErr(what, err)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return db.mapErr(what, err)
		}
	}
}

// uniqueKeyRace reports whether err is a unique key index's refusal: a concurrent write with
// the same key committed first, and the transaction run again finds it and names it.
func (db *DB) uniqueKeyRace(err error) bool {
	return pgCode(err) == sqlstateUniqueViolation && db.regState.Load().uniqueIndexes[pgConstraint(err)]
}

// runTx runs one attempt. committing reports that the error came from COMMIT itself.
func (db *DB) runTx(ctx context.Context, fn func(pgx.Tx) error) (err error, committing bool) {
	if b := batchOf(ctx, db); b != nil {
		return b.savepoint(ctx, fn), false
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err, false
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err, false
	}
	if err := tx.Commit(ctx); err != nil {
		// A server-side error at COMMIT (40001 under SERIALIZABLE) means nothing was
		// applied; only a lost connection leaves the outcome open.
		return err, isConnErr(err)
	}
	db.committed()
	return nil, false
}

// read runs a read on the pool, repeating it after a lost connection.
func (db *DB) read(ctx context.Context, what string, fn func(q querier) error) error {
	start := time.Now()
	for attempt := 0; ; attempt++ {
		err := fn(db.pool)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !isConnErr(err) || time.Since(start) > connRetryBudget {
			return db.mapErr(what, err)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return db.mapErr(what, err)
		}
	}
}

// backoff returns a jittered wait that grows with the attempt, capped at one second.
func backoff(attempt int) time.Duration {
	d := 10 * time.Millisecond << min(attempt, 7)
	d = min(d, time.Second)
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// txNow is the Go-side timestamp of one transaction (updated_at, history), at the
// microsecond precision PostgreSQL keeps.
func (db *DB) txNow() time.Time { return db.now().UTC().Truncate(time.Microsecond) }

func setDefault(m map[string]string, k, v string) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

func appName(prefix, schema string) string {
	s := prefix + schema
	if len(s) > maxIdentifierLength {
		s = s[:maxIdentifierLength]
	}
	return s
}

// channelName is the NOTIFY channel of a schema: the schema is part of it so that stores in
// different schemas of one database never wake each other.
func channelName(schema string) string {
	c := channelPrefix + schema
	if len(c) > maxIdentifierLength {
		h := fnv.New64a()
		h.Write([]byte(schema))
		c = fmt.Sprintf("%s%x", channelPrefix, h.Sum64())
	}
	return c
}

// lockKey turns a purpose and schema into an advisory lock key (the same in every process).
func lockKey(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64())
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}
