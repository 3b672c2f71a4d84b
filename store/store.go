// Package store is tandem's domain: record kinds and the field registry, records and
// updates, versions, history, leases, idempotency keys, change events, errors, and the Store
// interface every database implements. It holds no SQL and imports no driver; store/memory,
// store/sqlite and store/postgres implement it, and store/storetest is the contract all must
// pass.
package store

import (
	"context"
	"time"
)

// Store is a tandem database. Every method is safe for concurrent use. Writes take their
// actor from the context (WithActor) and refuse to run without one (EINVALID).
type Store interface {
	Records
	Documents
	History
	Idempotency
	Leases
	Feed
	Presences
	Meta
	// Registry returns the field registry the store was opened with.
	Registry() *Registry
	// Close releases the store's connections and background work.
	Close() error
}

// Meta describes the store itself, as opposed to its records.
type Meta interface {
	// StoreID returns the store's identity: a random id (32 lowercase hex digits) made when
	// the store was created and kept in the store's own metadata, read when it is opened. It
	// never derives from the file path or the DSN, so a moved or renamed SQLite file keeps
	// it, and two stores never share it unless one is a byte copy of the other. Local state
	// that belongs to one store (drafts, working copies) is keyed by it.
	StoreID() string
}

// Records reads and writes products and documents.
type Records interface {
	// FindRecord returns one record. ENOTFOUND if there is none.
	FindRecord(ctx context.Context, kind Kind, id int64) (*Record, error)
	// FindRecords returns the records matching f, ordered by id.
	FindRecords(ctx context.Context, f Filter) ([]*Record, error)
	// CountRecords returns how many records of kind exist.
	CountRecords(ctx context.Context, kind Kind) (int, error)
	// CreateRecord inserts a record at version 1 and returns it. Missing fields get their
	// zero value. EINVALID for bad values or a sku whose SKUKey another product's sku has,
	// EFORBIDDEN for fields the actor's role may not write. A document's parent_id may be
	// set here: under the tree lock, the parent must exist (ENOTFOUND) and not sit at
	// MaxDepth (EINVALID), and a live lease on the parent's tree group (Registry.TreeGroup)
	// must be presented with opts' ParentLeaseToken (ELEASE otherwise), all in the create's
	// transaction. In a working copy (WorkingCopy), EINVALID for what CheckCopyCreate
	// refuses (a kind the copy did not clone, an explicit id). At most one CreateOptions is
	// read.
	CreateRecord(ctx context.Context, kind Kind, vals Values, opts ...CreateOptions) (*Record, error)
	// UpdateRecord applies a partial, version-checked update in one transaction, in this
	// order: a completed idempotency key of the same request answers at once (Replayed,
	// nothing written); then the record is read (locked), the lease check runs, and
	// Registry.PlanUpdate decides: a stale base of an absolute change (conflict, even when
	// its values equal the current ones), nothing to change (Unchanged, nothing written), a
	// counter out of range or money below zero (EINVALID); then one UPDATE
	// of the changed fields with "version = version + 1", the sku key, the history version or
	// operation-log entry, the change-log entry and the idempotency key.
	// ECONFLICT (*ConflictError with the current record) when the base version is stale,
	// ENOTFOUND, EINVALID, EFORBIDDEN (*OwnershipError), ELEASE (*LeaseError) when a live
	// lease covers a written group and its token was not presented (the token binds, not the
	// holder's name), or the presented token is no longer valid, EBUSY when the database
	// stayed locked past the retry budget.
	UpdateRecord(ctx context.Context, kind Kind, id int64, u Update) (*UpdateResult, error)
	// LockedUpdate is the system writer's read-modify-write under a short database lock
	// (SELECT ... FOR UPDATE on PostgreSQL, BEGIN IMMEDIATE on SQLite): it reads the record,
	// calls fn with it, and applies the update fn returns, checked against the version read,
	// all in one transaction. fn may return a zero Update to write nothing (result nil); an
	// update whose values equal the ones read writes nothing either (Unchanged). fn may be
	// called more than once when the transaction is retried after a deadlock or busy
	// database, so it must not have side effects. Same errors as UpdateRecord.
	LockedUpdate(ctx context.Context, kind Kind, id int64, fn func(*Record) (Update, error)) (*UpdateResult, error)
	// DeleteRecord removes a record (and, with d.Subtree, the documents below it) in one
	// transaction, leaving a tombstone (a history version of event EventDeleted holding
	// every field) and an EventDeleted change per record removed (see delete.go for the
	// rules). A completed idempotency key of the same request answers first (Replayed).
	// ECONFLICT (*ConflictError) when the record is not at d.ExpectVersion, ENOTFOUND,
	// EINVALID (a document with children and no Subtree; no version), EFORBIDDEN for a
	// system actor, ELEASE when a live lease on any group of a record removed is not
	// presented with d.LeaseToken.
	DeleteRecord(ctx context.Context, kind Kind, id int64, d Delete) (*DeleteResult, error)
	// RestoreRecord brings a deleted record back under its id, with the values its tombstone
	// kept, as the tombstone's version + 1, with a history version of event EventRestored and
	// an EventRestored change. A document whose parent is gone goes to the root (the result's
	// Note says so). ENOTFOUND when history holds no tombstone to restore from, EINVALID
	// when the record exists, another record took the value of one of its unique fields
	// meanwhile, or a ref it holds names a record that is gone (Registry.CheckRefs), EFORBIDDEN for a
	// system actor, ELEASE when the parent's tree group is leased and r does not present it.
	RestoreRecord(ctx context.Context, kind Kind, id int64, r Restore) (*RestoreResult, error)
}

// Documents holds the operations on the document tree.
type Documents interface {
	// MoveRecord puts record id of the tree kind under m.Parent (nil: at the root); EINVALID
	// for a kind that is not a tree. Hierarchy changes are
	// serialized against each other, then the lease checks, then the cycle and depth checks
	// (WITH RECURSIVE) run on the locked state, then the write, all in one transaction; a move
	// takes no base version and writes a change-log entry (and a history version for an
	// editor). A move to the parent the document already has writes nothing and returns
	// the current record with Unchanged. EINVALID naming the path when the move would
	// create a cycle or a tree deeper than MaxDepth, ENOTFOUND for a missing document or
	// parent, EFORBIDDEN when the actor's role may not write parent_id, ELEASE when a live
	// lease on the tree group (Registry.TreeGroup) of the document or of the new parent is
	// not presented with m.LeaseToken or m.ParentLeaseToken, or a presented one is no longer
	// valid.
	MoveRecord(ctx context.Context, kind Kind, id int64, m Move) (*UpdateResult, error)
}

// History reads what was written.
type History interface {
	// FindHistory returns every history version of a record, newest first, each with its
	// snapshot: memory grows with the history. A reader of a history of any length pages
	// with FindHistoryPage.
	FindHistory(ctx context.Context, kind Kind, id int64) ([]Version, error)
	// FindHistoryPage returns the history versions of a record that q selects, newest
	// first; each with its Snapshot only when q.Snapshots (otherwise no snapshot or delta
	// is read). It holds one page in memory. EINVALID for an unknown kind or a query
	// that HistoryQuery.Check refuses.
	FindHistoryPage(ctx context.Context, kind Kind, id int64, q HistoryQuery) ([]Version, error)
	// FindVersion returns history version v of a record, exactly as the save left the
	// record. ENOTFOUND when the record has no history version v (a write that kept no
	// history, or a version it never reached).
	FindVersion(ctx context.Context, kind Kind, id, v int64) (*Version, error)
	// FindOps returns the operation log of a record: the writes that added no history
	// version (system writes and writes inside WithoutHistory), newest first.
	FindOps(ctx context.Context, kind Kind, id int64) ([]Change, error)
	// FindOpsPage returns the operation-log entries of a record whose versions q selects,
	// newest first (q.Snapshots does not apply). EINVALID for an unknown kind or a query
	// that HistoryQuery.Check refuses.
	FindOpsPage(ctx context.Context, kind Kind, id int64, q HistoryQuery) ([]Change, error)
}

// Idempotency is the general idempotency store for work that spans more than one
// transaction (worker jobs). UpdateRecord handles Update.IdempotencyKey itself, atomically.
type Idempotency interface {
	// ClaimKey claims (scope, key) for a request with the given hash. A new, FAILED or stale
	// PENDING key (past its pending TTL: its owner died) is claimed by the caller as PENDING
	// for pendingTTL. A COMPLETED key is returned for replay (Claimed false), however long
	// ago it completed. EINVALID when the key was used for a request with another hash;
	// EBUSY when a live PENDING claim of another owner holds it.
	ClaimKey(ctx context.Context, scope, key, requestHash string, pendingTTL time.Duration) (*Claim, error)
	// CompleteKey marks a claimed key COMPLETED with its result. The key is kept for good;
	// keep (0: DefaultCompletedTTL) dates only its ExpiresAt, which no decision reads.
	// ENOTFOUND when the caller does not hold the claim (it was taken over).
	CompleteKey(ctx context.Context, scope, key string, result []byte, keep time.Duration) error
	// FailKey marks a claimed key FAILED so a later claim may try again.
	FailKey(ctx context.Context, scope, key string) error
	// FindKey returns the state of a key. ENOTFOUND if there is none.
	FindKey(ctx context.Context, scope, key string) (*KeyRecord, error)
	// PurgeKeys deletes the PENDING and FAILED keys whose lifetime ended (Purgeable) and
	// returns how many; COMPLETED keys are kept for good.
	PurgeKeys(ctx context.Context) (int, error)
}

// Leases grants and checks leases. Expiry is decided by the database clock.
type Leases interface {
	// AcquireLease grants a lease to the actor, taking over an expired or released one
	// with a higher fencing number. ELEASE (*LeaseError naming the holder) when a live lease
	// of anyone, including the same user from another terminal, holds the scope. EINVALID
	// for an unknown group or a TTL outside [MinLeaseTTL, MaxLeaseTTL]; ENOTFOUND for a
	// missing record.
	AcquireLease(ctx context.Context, r LeaseRequest) (*Lease, error)
	// ExtendLease moves a live lease's expiry to now + ttl. ELEASE (Lost) when the token's
	// lease expired, was released or taken over; ENOTFOUND for an unknown token.
	ExtendLease(ctx context.Context, token string, ttl time.Duration) (*Lease, error)
	// ReleaseLease ends a lease. Releasing an already ended lease is not an error; the
	// answer says whether this call ended it, or why it had ended (released, expired, taken
	// over by whom). ENOTFOUND for an unknown token.
	ReleaseLease(ctx context.Context, token string) (*LeaseRelease, error)
	// FindLeases returns live leases (and recently ended ones, see LeaseFilter) without their
	// tokens, and the database clock's now to judge them by.
	FindLeases(ctx context.Context, f LeaseFilter) ([]Lease, time.Time, error)
}

// Feed is the live change feed.
type Feed interface {
	// Changes returns up to limit change-log entries with ID > after, oldest first.
	Changes(ctx context.Context, after int64, limit int) ([]Change, error)
	// LastChangeID returns the newest change-log ID (0 when empty): where a new subscriber
	// that wants only future changes starts.
	LastChangeID(ctx context.Context) (int64, error)
	// Subscribe delivers every change with ID > after, in order, until ctx ends; then the
	// channel is closed. It wakes on the database's notification (LISTEN/NOTIFY, or SQLite's
	// data_version) but reads the change log from its cursor, so nothing is lost across a
	// reconnect. Delivery is within about a second of the commit.
	Subscribe(ctx context.Context, after int64) (<-chan Change, error)
}

// Options configure a store when it is opened.
type Options struct {
	// Registry is the field registry; nil means DefaultRegistry().
	Registry *Registry
	// Now is the clock for Go-side timestamps (updated_at, history); nil means time.Now.
	// Lease expiry never uses it: it is decided by the database clock.
	Now func() time.Time
}

// WithDefaults returns o with nil members filled in.
func (o Options) WithDefaults() Options {
	if o.Registry == nil {
		o.Registry = DefaultRegistry()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
