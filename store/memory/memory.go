// Package memory is a tandem store held in memory: the same contract as store/sqlite and
// store/postgres (it passes storetest.Run and storetest.RunConcurrency), with no database. Code
// that uses a store (the TUI, the lease manager, workers) tests against it, and its files
// mirror the other backends' (record, document, history, idempotency, lease, feed, workcopy), so
// it is also the shortest statement of what a backend does. It is a store.WorkingCopy too:
// sync.Clone makes a store from New a copy of another, as it does an empty SQLite file.
// faults.go holds the test hooks: a settable database clock, injected failures and call counts.
package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// DB is an in-memory store.Store: it keeps the contract of store.Store (versions,
// version-checked partial updates, conflicts carrying the current record, ownership, history,
// idempotency, tree rules, leases with tokens and fencing numbers, and the change feed)
// without a database. Every method is
// safe for concurrent use and every returned value is a deep copy.
//
// Beyond the contract it has test hooks: a settable database clock (SetClock, Advance, Now)
// that decides lease and idempotency-key expiry; injected failures before a call (FailNext,
// FailNextOn, SetFailure) and after a committed save (LoseNextReply); and call counts (Calls).
type DB struct {
	reg atomic.Pointer[store.Registry] // swapped by ApplySchema while others read it
	id  string                         // StoreID: random, like a real store's
	// instance names this store value in claim owners (store.KeyOwner), as the real stores'
	// do, so an owner reads the same whatever the store.
	instance string
	// timestamps is Options.Now; nil means the store's database clock.
	timestamps func() time.Time

	mu        sync.Mutex
	clock     func() time.Time
	offset    time.Duration
	failNext  []injectedErr // queued by FailNext and FailNextOn
	failure   func(op string) error
	lostReply []error // UpdateRecord replies to lose after the write committed
	calls     map[string]int
	closed    bool
	closedCh  chan struct{}
	records   map[store.Kind]map[int64]*store.Record
	lastID    map[store.Kind]int64
	history   []historyEntry // stored as the real stores store them: snapshots and deltas
	changes   []store.Change
	notify    chan struct{}         // closed and replaced whenever a change is appended
	leases    map[leaseScope]*lease // the newest lease of each scope
	tokens    map[string]*lease
	fences    map[leaseScope]int64
	keys      map[keyID]*store.KeyRecord
	presence  map[string]store.Presence // by session (presence.go)
	wc        *copyState                // nil unless StartCopy made the store a working copy (workcopy.go)
	lockedMu  sync.Mutex                // serializes LockedUpdate calls like a row lock
	subsWG    sync.WaitGroup
}

// injectedErr is one queued injected error: for the next call of op, or of any method when op
// is "".
type injectedErr struct {
	op  string
	err error
}

var _ store.Store = (*DB)(nil)

// lockedUpdateAttempts bounds how often LockedUpdate rereads a record that changed under it
// before it gives up with EBUSY.
const lockedUpdateAttempts = 100

// New returns an empty in-memory store. opts.Registry defaults to the embedded registry;
// opts.Now, when set, stamps records, history and changes (as it does for the real stores),
// and otherwise the store's database clock does. The database clock, which decides lease
// and key expiry, starts as time.Now; SetClock and Advance change it.
func New(opts store.Options) *DB {
	reg := opts.Registry
	if reg == nil {
		reg = store.DefaultRegistry()
	}
	db := &DB{
		id:         newToken()[:32],
		instance:   newToken()[:16],
		timestamps: opts.Now,
		clock:      time.Now,
		closedCh:   make(chan struct{}),
		records:    map[store.Kind]map[int64]*store.Record{},
		lastID:     map[store.Kind]int64{},
		notify:     make(chan struct{}),
		leases:     map[leaseScope]*lease{},
		tokens:     map[string]*lease{},
		fences:     map[leaseScope]int64{},
		keys:       map[keyID]*store.KeyRecord{},
		calls:      map[string]int{},
	}
	db.reg.Store(reg)
	for _, k := range reg.Kinds() {
		db.records[k] = map[int64]*store.Record{}
	}
	return db
}

// SchemaVersion returns 1. The store has no schema; the method gives it the same optional
// interface the real stores have, so code (and the contract) that asks for it works.
func (db *DB) SchemaVersion() int { return 1 }

// Registry returns the field registry the store was made with.
func (db *DB) Registry() *store.Registry { return db.reg.Load() }

// StoreID returns the store's random store id, made by New.
func (db *DB) StoreID() string { return db.id }

// Close ends every subscription and makes later calls fail with EUNAVAILABLE. It waits for
// the subscription goroutines to finish, so none outlives the store.
func (db *DB) Close() error {
	db.mu.Lock()
	if !db.closed {
		db.closed = true
		close(db.closedCh)
	}
	db.mu.Unlock()
	db.subsWG.Wait()
	return nil
}

// begin locks the store and runs the checks every call makes: the context, closing and the
// injected failures. On error the lock is released again.
func (db *DB) begin(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	db.mu.Lock()
	db.calls[op]++
	if err := db.injected(op); err != nil {
		db.mu.Unlock()
		return err
	}
	return nil
}

func (db *DB) injected(op string) error {
	if db.closed {
		return store.Errorf(store.EUNAVAILABLE, "%s: store is closed", op)
	}
	for i, fl := range db.failNext {
		if fl.op == "" || fl.op == op {
			db.failNext = slices.Delete(db.failNext, i, i+1)
			return fl.err
		}
	}
	if db.failure != nil {
		return db.failure(op)
	}
	return nil
}

func (db *DB) dbNow() time.Time { return db.clock().Add(db.offset) }

func (db *DB) stamp() time.Time {
	if db.timestamps != nil {
		return db.timestamps()
	}
	return db.dbNow()
}

func (db *DB) checkKind(kind store.Kind) error {
	_, err := db.Registry().Table(kind) // EINVALID naming the schema's kinds
	return err
}

func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
