package storetest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Fake is an in-memory store.Store for tests of code that uses a store (the TUI, the lease
// manager): it keeps the contract of store.Store (versions, version-checked partial updates,
// conflicts carrying the current record, ownership, history, idempotency, tree rules, leases
// with tokens and fencing numbers, and the change feed) without a database. Every method is
// safe for concurrent use and every returned value is a deep copy.
//
// Beyond the contract it has test hooks: a settable database clock (SetClock, Advance, Now)
// that decides lease and idempotency-key expiry; injected failures before a call (FailNext,
// FailNextOn, SetFailure) and after a committed save (LoseNextReply); and call counts (Calls).
type Fake struct {
	reg *store.Registry
	id  string // StoreID: random, like a real store's
	// timestamps is Options.Now; nil means the fake's database clock.
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
	history   []fakeVersion // stored as the real stores store them: snapshots and deltas
	changes   []store.Change
	notify    chan struct{}             // closed and replaced whenever a change is appended
	leases    map[leaseScope]*fakeLease // the newest lease of each scope
	tokens    map[string]*fakeLease
	fences    map[leaseScope]int64
	keys      map[keyID]*store.KeyRecord
	lockedMu  sync.Mutex // serializes LockedUpdate calls like a row lock
	subsWG    sync.WaitGroup
}

// injectedErr is one queued injected error: for the next call of op, or of any method when op
// is "".
type injectedErr struct {
	op  string
	err error
}

type leaseScope struct {
	kind  store.Kind
	id    int64
	group string
}

type fakeLease struct {
	store.Lease
	takenBy string // holder of the lease that took this one over
}

type keyID struct{ scope, key string }

// fakeVersion is one stored history row of a record.
type fakeVersion struct {
	kind store.Kind
	id   int64
	row  store.HistoryRow
}

var _ store.Store = (*Fake)(nil)

// lockedUpdateAttempts bounds how often LockedUpdate rereads a record that changed under it
// before it gives up with EBUSY.
const lockedUpdateAttempts = 100

// NewFake returns an empty in-memory store. opts.Registry defaults to the embedded registry;
// opts.Now, when set, stamps records, history and changes (as it does for the real stores),
// and otherwise the fake's database clock does. The database clock, which decides lease
// and key expiry, starts as time.Now; SetClock and Advance change it.
func NewFake(opts store.Options) *Fake {
	reg := opts.Registry
	if reg == nil {
		reg = store.DefaultRegistry()
	}
	f := &Fake{
		reg:        reg,
		id:         newToken()[:32],
		timestamps: opts.Now,
		clock:      time.Now,
		closedCh:   make(chan struct{}),
		records:    map[store.Kind]map[int64]*store.Record{},
		lastID:     map[store.Kind]int64{},
		notify:     make(chan struct{}),
		leases:     map[leaseScope]*fakeLease{},
		tokens:     map[string]*fakeLease{},
		fences:     map[leaseScope]int64{},
		keys:       map[keyID]*store.KeyRecord{},
		calls:      map[string]int{},
	}
	for _, k := range store.Kinds {
		f.records[k] = map[int64]*store.Record{}
	}
	return f
}

// SetClock replaces the fake's database clock, which decides lease and idempotency-key
// expiry (and stamps records when Options.Now was nil). It resets any Advance offset. now is
// called under the fake's lock and must not call the fake; nil means time.Now.
func (f *Fake) SetClock(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now == nil {
		now = time.Now
	}
	f.clock, f.offset = now, 0
}

// Advance moves the database clock forward by d, so tests can expire leases and keys
// without sleeping.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offset += d
}

// Now returns the database clock's time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dbNow()
}

// FailNext makes the next store call, of any method, fail with err before it does anything
// (queued: n calls make the next n calls fail). Registry, Close and the hooks never fail.
// Use it with store.Errorf(store.EUNAVAILABLE, ...) to test how callers handle a database
// that went away. When callers run background calls (a feed, a heartbeat), prefer
// FailNextOn, which cannot be consumed by the wrong call.
func (f *Fake) FailNext(err error) {
	f.FailNextOn("", err)
}

// FailNextOn makes the next call of the method named op ("UpdateRecord", "ExtendLease", ...)
// fail with err before it does anything; "" means any method. Queued like FailNext.
func (f *Fake) FailNextOn(op string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = append(f.failNext, injectedErr{op, err})
}

// LoseNextReply makes the next UpdateRecord that succeeds commit its write and then return
// err instead of its result, like a connection that dies between commit and reply (queued
// like FailNext). Tests use it to show that a save retried with the same idempotency key is
// applied once.
func (f *Fake) LoseNextReply(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lostReply = append(f.lostReply, err)
}

// SetFailure installs fn, called before every store call with the method's name
// ("UpdateRecord", "ExtendLease", ...); a non-nil result is returned instead of running the
// call. SetFailure(nil) removes it. fn runs under the fake's lock and must not call the fake.
func (f *Fake) SetFailure(fn func(op string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failure = fn
}

// SchemaVersion returns 1. The fake has no schema; the method gives it the same optional
// interface the real stores have, so code (and the contract) that asks for it works.
func (f *Fake) SchemaVersion() int { return 1 }

// Calls returns how often the method op ("ExtendLease", ...) was called, counting calls
// that failed, so tests can see that a heartbeat kept trying.
func (f *Fake) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// Registry returns the field registry the fake was made with.
func (f *Fake) Registry() *store.Registry { return f.reg }

// StoreID returns the fake's random store id, made by NewFake.
func (f *Fake) StoreID() string { return f.id }

// Close ends every subscription and makes later calls fail with EUNAVAILABLE. It waits for
// the subscription goroutines to finish, so none outlives the store.
func (f *Fake) Close() error {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.closedCh)
	}
	f.mu.Unlock()
	f.subsWG.Wait()
	return nil
}

// begin locks the fake and runs the checks every call makes: the context, closing and the
// injected failures. On error the lock is released again.
func (f *Fake) begin(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	f.mu.Lock()
	f.calls[op]++
	if err := f.injected(op); err != nil {
		f.mu.Unlock()
		return err
	}
	return nil
}

func (f *Fake) injected(op string) error {
	if f.closed {
		return store.Errorf(store.EUNAVAILABLE, "%s: store is closed", op)
	}
	for i, fl := range f.failNext {
		if fl.op == "" || fl.op == op {
			f.failNext = slices.Delete(f.failNext, i, i+1)
			return fl.err
		}
	}
	if f.failure != nil {
		return f.failure(op)
	}
	return nil
}

func (f *Fake) dbNow() time.Time { return f.clock().Add(f.offset) }

func (f *Fake) stamp() time.Time {
	if f.timestamps != nil {
		return f.timestamps()
	}
	return f.dbNow()
}

func (f *Fake) checkKind(kind store.Kind) error {
	if len(f.reg.Fields(kind)) == 0 {
		return store.Errorf(store.EINVALID, "unknown kind %q", kind)
	}
	return nil
}

func (f *Fake) find(kind store.Kind, id int64) (*store.Record, error) {
	if err := f.checkKind(kind); err != nil {
		return nil, err
	}
	r, ok := f.records[kind][id]
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "%s %d not found", kind, id)
	}
	return r, nil
}

// FindRecord returns one record. ENOTFOUND if there is none, EINVALID for an unknown kind.
func (f *Fake) FindRecord(ctx context.Context, kind store.Kind, id int64) (*store.Record, error) {
	if err := f.begin(ctx, "FindRecord"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	r, err := f.find(kind, id)
	if err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// FindRecords returns the records matching flt, ordered by id. EINVALID for an unknown kind.
func (f *Fake) FindRecords(ctx context.Context, flt store.Filter) ([]*store.Record, error) {
	if err := f.begin(ctx, "FindRecords"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if err := f.checkKind(flt.Kind); err != nil {
		return nil, err
	}
	ids := slices.Sorted(maps.Keys(f.records[flt.Kind]))
	out := []*store.Record{}
	for _, id := range ids {
		if id <= flt.AfterID || len(flt.IDs) > 0 && !slices.Contains(flt.IDs, id) {
			continue
		}
		r := f.records[flt.Kind][id]
		if flt.Search != "" && !f.reg.MatchesSearch(r, flt.Search) {
			continue
		}
		out = append(out, r.Clone())
		if flt.Limit > 0 && len(out) == flt.Limit {
			break
		}
	}
	return out, nil
}

// CountRecords returns how many records of kind exist. EINVALID for an unknown kind.
func (f *Fake) CountRecords(ctx context.Context, kind store.Kind) (int, error) {
	if err := f.begin(ctx, "CountRecords"); err != nil {
		return 0, err
	}
	defer f.mu.Unlock()
	if err := f.checkKind(kind); err != nil {
		return 0, err
	}
	return len(f.records[kind]), nil
}

// CreateRecord inserts a record at version 1 and returns it. EINVALID for bad values, a
// duplicate sku, a missing parent or a tree deeper than store.MaxDepth; EFORBIDDEN for
// fields the actor's role may not write.
func (f *Fake) CreateRecord(ctx context.Context, kind store.Kind, vals store.Values, opts ...store.CreateOptions) (*store.Record, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.begin(ctx, "CreateRecord"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	fields, err := f.reg.CheckCreate(kind, actor.Role, vals)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", kind, err)
	}
	fields = fields.Clone()
	if kind == store.KindProduct {
		if err := f.checkSKU(0, fields["sku"]); err != nil {
			return nil, err
		}
	}
	parent, token, err := store.CreateParent(kind, fields, opts)
	if err != nil {
		return nil, err
	}
	if parent != 0 {
		if err := f.checkLeases(kind, parent, []string{f.reg.TreeGroup()}, token, f.dbNow()); err != nil {
			return nil, err
		}
		if err := f.checkNewChild(parent); err != nil {
			return nil, err
		}
	}
	f.lastID[kind]++
	now := f.stamp()
	r := &store.Record{Kind: kind, ID: f.lastID[kind], Version: 1, UpdatedBy: actor.Name, UpdatedAt: now, Fields: fields}
	f.records[kind][r.ID] = r
	names := slices.Sorted(maps.Keys(vals))
	keep := store.KeepsHistory(ctx, actor)
	if keep {
		if err := f.addVersion(r, actor.Name, now, names, nil); err != nil {
			return nil, err
		}
	}
	f.appendChange(store.Change{Event: store.EventCreated, Kind: kind, RecordID: r.ID, Version: 1,
		Actor: actor.Name, Role: actor.Role, Fields: names, History: keep, At: now})
	return r.Clone(), nil
}

// checkSKU refuses a sku whose key another product (not id) already has, as the real
// stores' unique index on the key does.
func (f *Fake) checkSKU(id int64, sku any) error {
	s, _ := sku.(string)
	if err := store.CheckSKU(s); err != nil {
		return err
	}
	key := store.SKUKey(s)
	for _, oid := range slices.Sorted(maps.Keys(f.records[store.KindProduct])) {
		o, _ := f.records[store.KindProduct][oid].Fields["sku"].(string)
		if oid != id && store.SKUKey(o) == key {
			return store.DuplicateSKUError(s, oid, o)
		}
	}
	return nil
}

// UpdateRecord applies a partial, version-checked update atomically, with the contract's
// errors: ECONFLICT (*store.ConflictError), ENOTFOUND, EINVALID, EFORBIDDEN
// (*store.OwnershipError), ELEASE (*store.LeaseError).
func (f *Fake) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.begin(ctx, "UpdateRecord"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	res, err := f.update(ctx, actor, kind, id, u)
	if err == nil && len(f.lostReply) > 0 {
		err, f.lostReply = f.lostReply[0], f.lostReply[1:]
		return nil, err
	}
	return res, err
}

// update is UpdateRecord under the lock, in the order store.Records gives: a completed key
// replays first, then the lease check, then PlanUpdate on the current record, then the write.
func (f *Fake) update(ctx context.Context, actor store.Actor, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	if err := f.reg.CheckUpdate(kind, actor.Role, u); err != nil {
		return nil, fmt.Errorf("update %s %d: %w", kind, id, err)
	}
	r, err := f.find(kind, id)
	if err != nil {
		return nil, err
	}
	now := f.dbNow()
	var hash string
	if u.IdempotencyKey != "" {
		hash = store.RequestHash(kind, id, u)
		if k, ok := f.keys[keyID{store.ScopeAPI, u.IdempotencyKey}]; ok {
			replay, err := store.CheckSaveKey(*k, now.Before(k.ExpiresAt), hash)
			if err != nil {
				return nil, err
			}
			if replay {
				kr, err := store.DecodeKeyResult(k.Result)
				if err != nil {
					return nil, err
				}
				return kr.Replay(r.Clone()), nil
			}
		}
	}
	if err := f.checkLeases(kind, id, f.reg.UpdateGroups(kind, u), u.LeaseToken, now); err != nil {
		return nil, err
	}
	plan, err := f.reg.PlanUpdate(r, u)
	if err != nil {
		return nil, err
	}
	if plan.Stale {
		return nil, f.conflict(r, u.BaseVersion)
	}
	res := &store.UpdateResult{Record: r, Version: r.Version, Unchanged: true}
	if !plan.Unchanged {
		if plan.SKUKey != "" {
			if err := f.checkSKU(id, plan.Set["sku"]); err != nil {
				return nil, err
			}
		}
		keep := store.KeepsHistory(ctx, actor)
		pre := f.reg.PreImage(kind, store.Update{Set: plan.Set}, r, keep)
		for name, d := range plan.Add {
			cur, _ := r.Fields[name].(int64)
			r.Fields[name] = cur + d
		}
		for name, v := range plan.Set {
			if s, ok := v.([]string); ok {
				v = slices.Clone(s)
			}
			r.Fields[name] = v
		}
		stamp := f.stamp()
		r.Version++
		r.UpdatedBy, r.UpdatedAt = actor.Name, stamp
		names := plan.FieldNames()
		if keep {
			if err := f.addVersion(r, actor.Name, stamp, names, pre); err != nil {
				return nil, err
			}
		}
		var deltas map[string]int64
		if len(plan.Add) > 0 {
			deltas = maps.Clone(plan.Add)
		}
		f.appendChange(store.Change{Event: store.EventSaved, Kind: kind, RecordID: id, Version: r.Version,
			Actor: actor.Name, Role: actor.Role, Fields: names, Deltas: deltas, History: keep, At: stamp})
		res = &store.UpdateResult{Record: r, Version: r.Version}
	}
	if u.IdempotencyKey != "" {
		f.keys[keyID{store.ScopeAPI, u.IdempotencyKey}] = &store.KeyRecord{Scope: store.ScopeAPI, Key: u.IdempotencyKey,
			Status: store.KeyCompleted, RequestHash: hash, Result: store.ResultOf(res).Encode(), Owner: actor.Name,
			CreatedAt: now, ExpiresAt: now.Add(store.DefaultCompletedTTL)}
	}
	res.Record = r.Clone()
	return res, nil
}

func (f *Fake) conflict(r *store.Record, base int64) *store.ConflictError {
	e := &store.ConflictError{Kind: r.Kind, ID: r.ID, BaseVersion: base, Current: r.Clone()}
	for _, c := range f.changes {
		if c.Kind == r.Kind && c.RecordID == r.ID && c.Version > base && isRecordEvent(c.Event) {
			e.Since = append(e.Since, cloneChange(c))
		}
	}
	return e
}

func isRecordEvent(e store.Event) bool {
	return e == store.EventCreated || e == store.EventSaved || e == store.EventMoved
}

// checkLeases refuses a write to groups of a record when another holder's live lease covers
// one of them, or when the presented token is no longer valid.
func (f *Fake) checkLeases(kind store.Kind, id int64, groups []string, token string, now time.Time) error {
	if token != "" {
		l, ok := f.tokens[token]
		if !ok {
			return store.UnknownTokenError(kind, id, now)
		}
		if l.Kind != kind || l.RecordID != id {
			return store.Errorf(store.EINVALID, "the lease token belongs to %s %d, not %s %d", l.Kind, l.RecordID, kind, id)
		}
		if reason := f.lostReason(l, now); reason != "" {
			return &store.LeaseError{Lease: l.public(), Lost: true, Now: now, Reason: reason}
		}
	}
	for _, g := range groups {
		l, ok := f.leases[leaseScope{kind, id, g}]
		if ok && l.Live(now) && l.Token != token {
			return &store.LeaseError{Lease: l.public(), Now: now}
		}
	}
	return nil
}

// lostReason says why a lease is no longer valid at now, or "" when it is.
func (f *Fake) lostReason(l *fakeLease, now time.Time) string {
	switch {
	case l.takenBy != "":
		return "taken over by " + l.takenBy
	case l.Released:
		return "released"
	case !now.Before(l.ExpiresAt):
		return "expired"
	case f.fences[leaseScope{l.Kind, l.RecordID, l.Group}] != l.Fence:
		return "a newer lease was granted"
	}
	return ""
}

func (l *fakeLease) public() store.Lease {
	p := l.Lease
	p.Token = ""
	return p
}

// LockedUpdate reads the record, calls fn with a copy, and applies the update fn returns,
// checked against the version read. LockedUpdate calls are serialized like a row lock; when
// another writer changed the record between the read and the write, fn is called again
// (bounded; then EBUSY). fn may call the fake's read methods. Same errors as UpdateRecord.
func (f *Fake) LockedUpdate(ctx context.Context, kind store.Kind, id int64, fn func(*store.Record) (store.Update, error)) (*store.UpdateResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	f.lockedMu.Lock()
	defer f.lockedMu.Unlock()
	for range lockedUpdateAttempts {
		if err := f.begin(ctx, "LockedUpdate"); err != nil {
			return nil, err
		}
		r, err := f.find(kind, id)
		if err != nil {
			f.mu.Unlock()
			return nil, err
		}
		read := r.Clone()
		f.mu.Unlock()

		u, err := fn(read.Clone())
		if err != nil {
			return nil, fmt.Errorf("locked update of %s %d: %w", kind, id, err)
		}
		if len(u.Set) == 0 && len(u.Add) == 0 {
			return nil, nil
		}
		if u.BaseVersion == 0 && len(u.Set) > 0 {
			u.BaseVersion = read.Version // the version read is the base of an absolute change
		}
		f.mu.Lock()
		if cur, ok := f.records[kind][id]; ok && cur.Version != read.Version {
			f.mu.Unlock()
			continue // someone wrote in between: read again, as a retried transaction would
		}
		res, err := f.update(ctx, actor, kind, id, u)
		f.mu.Unlock()
		return res, err
	}
	return nil, store.Errorf(store.EBUSY, "%s %d kept changing during a locked update; try again later", kind, id)
}

// MoveDocument puts document id under m.Parent (nil: the root), version-incrementing it, with
// a history version for an editor move that keeps history and an EventMoved change. A move to
// the current parent writes nothing (Unchanged). EFORBIDDEN when the actor's role may not
// write parent_id; ENOTFOUND for a missing document or parent; ELEASE when a live lease on
// the tree group of the document or the new parent is not presented (the token binds, not the
// holder's name); EINVALID naming the path for a cycle or a tree deeper than store.MaxDepth.
func (f *Fake) MoveDocument(ctx context.Context, id int64, m store.Move) (*store.UpdateResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	const kind = store.KindDocument
	fd, err := f.reg.Field(kind, "parent_id")
	if err != nil {
		return nil, err
	}
	if !fd.Writable(actor.Role) {
		return nil, &store.OwnershipError{Kind: kind, Field: fd.Name, Owner: fd.Owner, Role: actor.Role}
	}
	if err := f.begin(ctx, "MoveDocument"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	r, err := f.find(kind, id)
	if err != nil {
		return nil, err
	}
	now := f.dbNow()
	group := f.reg.TreeGroup()
	if err := f.checkLeases(kind, id, []string{group}, m.LeaseToken, now); err != nil {
		return nil, err
	}
	if m.Parent != nil {
		if err := f.checkLeases(kind, *m.Parent, []string{group}, m.ParentLeaseToken, now); err != nil {
			return nil, err
		}
	}
	if store.MoveChangesNothing(r, m.Parent) {
		return &store.UpdateResult{Record: r.Clone(), Version: r.Version, Unchanged: true}, nil
	}
	var newParent any
	if m.Parent != nil {
		if err := f.checkMove(id, *m.Parent); err != nil {
			return nil, err
		}
		newParent = *m.Parent
	}
	stamp := f.stamp()
	r.Fields["parent_id"] = newParent
	r.Version++
	r.UpdatedBy, r.UpdatedAt = actor.Name, stamp
	keep := store.KeepsHistory(ctx, actor)
	names := []string{fd.Name}
	if keep {
		if err := f.addVersion(r, actor.Name, stamp, names, nil); err != nil {
			return nil, err
		}
	}
	f.appendChange(store.Change{Event: store.EventMoved, Kind: kind, RecordID: id, Version: r.Version,
		Actor: actor.Name, Role: actor.Role, Fields: slices.Clone(names), History: keep, At: stamp})
	return &store.UpdateResult{Record: r.Clone(), Version: r.Version}, nil
}

// checkMove runs the cycle and depth checks of moving id under parent.
func (f *Fake) checkMove(id, parent int64) error {
	up := f.ancestors(parent)
	if err := store.CheckMoveCycle(id, parent, up); err != nil {
		return err
	}
	return store.CheckMoveDepth(id, parent, up, f.deepestPath(id))
}

// checkNewChild checks that a new document may be created under parent.
func (f *Fake) checkNewChild(parent int64) error {
	return store.CheckNewChild(parent, f.ancestors(parent))
}

// ancestors returns document id and its ancestors, nearest first (id, its parent, ..., the
// root); empty when id does not exist. It stops at a repeated id, which only a corrupted tree
// could have.
func (f *Fake) ancestors(id int64) []int64 {
	var up []int64
	for cur := id; !slices.Contains(up, cur); {
		r, ok := f.records[store.KindDocument][cur]
		if !ok {
			break
		}
		up = append(up, cur)
		p, ok := r.Fields["parent_id"].(int64)
		if !ok {
			break
		}
		cur = p
	}
	return up
}

// deepestPath returns the longest downward path from id (id first) to a leaf of its subtree;
// of equally long paths, the one ending in the smallest id (as the SQL stores order them).
func (f *Fake) deepestPath(id int64) []int64 {
	children := map[int64][]int64{}
	for cid, c := range f.records[store.KindDocument] {
		if p, ok := c.Fields["parent_id"].(int64); ok && p != cid {
			children[p] = append(children[p], cid)
		}
	}
	best := []int64{id}
	var walk func(path []int64)
	walk = func(path []int64) {
		if len(path) > store.MaxDepth*8 {
			return // a corrupted tree; the real stores bound their walk too
		}
		last := path[len(path)-1]
		if len(path) > len(best) || len(path) == len(best) && last < best[len(best)-1] {
			best = slices.Clone(path)
		}
		for _, c := range children[last] {
			walk(append(path, c))
		}
	}
	walk([]int64{id})
	return best
}

// addVersion stores the history version of r as the real stores do (a snapshot or a delta,
// as store.Registry.NewHistoryRow decides). pre holds the values before the save of the
// fields store.Registry.PreImageFields named.
func (f *Fake) addVersion(r *store.Record, actor string, at time.Time, fields []string, pre store.Values) error {
	h, err := f.reg.NewHistoryRow(r, actor, at, fields, f.historyTail(r.Kind, r.ID, r.Version), pre)
	if err != nil {
		return err
	}
	f.history = append(f.history, fakeVersion{kind: r.Kind, id: r.ID, row: h})
	return nil
}

// historyTail is what a real store reads before writing history version version.
func (f *Fake) historyTail(kind store.Kind, id, version int64) store.HistoryTail {
	var t store.HistoryTail
	for i := len(f.history) - 1; i >= 0; i-- {
		h := f.history[i]
		if h.kind != kind || h.id != id {
			continue
		}
		if t.Version == 0 {
			t.Version, t.Base = h.row.Version, h.row.ChainBase()
		}
		if h.row.Version < t.Base {
			break
		}
		t.Chain++
		t.ChainBytes += len(h.row.Delta)
	}
	for _, c := range f.changes {
		if c.Kind == kind && c.RecordID == id && isRecordEvent(c.Event) && !c.History && c.Version > t.Version && c.Version < version {
			t.Written = append(t.Written, c.Fields...)
		}
	}
	return t
}

// historyRows returns the stored history rows of a record with from <= version <= to,
// ascending.
func (f *Fake) historyRows(kind store.Kind, id, from, to int64) []store.HistoryRow {
	var out []store.HistoryRow
	for _, h := range f.history {
		if h.kind == kind && h.id == id && h.row.Version >= from && h.row.Version <= to {
			out = append(out, h.row)
		}
	}
	return out
}

// FindHistory returns the history versions of a record, newest first (empty when it has
// none). EINVALID for an unknown kind.
func (f *Fake) FindHistory(ctx context.Context, kind store.Kind, id int64) ([]store.Version, error) {
	if err := f.begin(ctx, "FindHistory"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if err := f.checkKind(kind); err != nil {
		return nil, err
	}
	vs, err := f.reg.RebuildHistory(kind, id, f.historyRows(kind, id, 0, math.MaxInt64))
	if err != nil {
		return nil, err
	}
	slices.Reverse(vs)
	return vs, nil
}

// FindVersion returns history version v of a record, rebuilt from its chain. ENOTFOUND when
// there is no such history version, EINVALID for an unknown kind.
func (f *Fake) FindVersion(ctx context.Context, kind store.Kind, id, v int64) (*store.Version, error) {
	if err := f.begin(ctx, "FindVersion"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if err := f.checkKind(kind); err != nil {
		return nil, err
	}
	from := v
	if at := f.historyRows(kind, id, v, v); len(at) == 1 {
		from = at[0].ChainBase()
	}
	return f.reg.RebuildVersion(kind, id, v, f.historyRows(kind, id, from, v))
}

// FindOps returns the record writes that added no history version, newest first.
// EINVALID for an unknown kind.
func (f *Fake) FindOps(ctx context.Context, kind store.Kind, id int64) ([]store.Change, error) {
	if err := f.begin(ctx, "FindOps"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if err := f.checkKind(kind); err != nil {
		return nil, err
	}
	out := []store.Change{}
	for i := len(f.changes) - 1; i >= 0; i-- {
		if c := f.changes[i]; c.Kind == kind && c.RecordID == id && isRecordEvent(c.Event) && !c.History {
			out = append(out, cloneChange(c))
		}
	}
	return out, nil
}

// ClaimKey claims (scope, key) for a request with the given hash, as store.Idempotency says:
// EINVALID for another request's hash, EBUSY for a live PENDING claim of another owner.
func (f *Fake) ClaimKey(ctx context.Context, scope, key, requestHash string, pendingTTL time.Duration) (*store.Claim, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.begin(ctx, "ClaimKey"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if err := store.CheckKey(scope, key); err != nil {
		return nil, err
	}
	if pendingTTL <= 0 {
		pendingTTL = store.DefaultPendingTTL
	}
	now := f.dbNow()
	id := keyID{scope, key}
	if k, ok := f.keys[id]; ok {
		live := now.Before(k.ExpiresAt)
		switch {
		case !live && k.Status != store.KeyPending:
			// Its lifetime ended: as good as purged.
		case k.RequestHash != requestHash:
			return nil, store.Errorf(store.EINVALID, "idempotency key %s was already used for a different request", key)
		case k.Status == store.KeyCompleted:
			return &store.Claim{Record: cloneKey(*k)}, nil
		case k.Status == store.KeyPending && live && k.Owner != actor.Name:
			return nil, store.Errorf(store.EBUSY, "idempotency key %s/%s is being worked on by %s until %s; try again later",
				scope, key, k.Owner, k.ExpiresAt.Format(time.RFC3339))
		}
	}
	k := &store.KeyRecord{Scope: scope, Key: key, Status: store.KeyPending, RequestHash: requestHash,
		Owner: actor.Name, CreatedAt: now, ExpiresAt: now.Add(pendingTTL)}
	f.keys[id] = k
	return &store.Claim{Claimed: true, Record: cloneKey(*k)}, nil
}

// heldKey returns the key the actor holds as PENDING, or ENOTFOUND.
func (f *Fake) heldKey(ctx context.Context, scope, key string) (*store.KeyRecord, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	k, ok := f.keys[keyID{scope, key}]
	if !ok || k.Status != store.KeyPending || k.Owner != actor.Name {
		return nil, store.Errorf(store.ENOTFOUND, "idempotency key %s/%s is not claimed by %s (it may have been taken over)", scope, key, actor.Name)
	}
	return k, nil
}

// CompleteKey marks a claimed key COMPLETED with its result, kept for keep (0: the default).
// ENOTFOUND when the caller does not hold the claim.
func (f *Fake) CompleteKey(ctx context.Context, scope, key string, result []byte, keep time.Duration) error {
	if err := f.begin(ctx, "CompleteKey"); err != nil {
		return err
	}
	defer f.mu.Unlock()
	k, err := f.heldKey(ctx, scope, key)
	if err != nil {
		return err
	}
	if keep <= 0 {
		keep = store.DefaultCompletedTTL
	}
	if result == nil {
		result = []byte{}
	}
	k.Status, k.Result, k.ExpiresAt = store.KeyCompleted, slices.Clone(result), f.dbNow().Add(keep)
	return nil
}

// FailKey marks a claimed key FAILED so a later claim may try again. ENOTFOUND when the
// caller does not hold the claim.
func (f *Fake) FailKey(ctx context.Context, scope, key string) error {
	if err := f.begin(ctx, "FailKey"); err != nil {
		return err
	}
	defer f.mu.Unlock()
	k, err := f.heldKey(ctx, scope, key)
	if err != nil {
		return err
	}
	k.Status, k.ExpiresAt = store.KeyFailed, f.dbNow().Add(store.DefaultCompletedTTL)
	return nil
}

// FindKey returns the state of a key. ENOTFOUND if there is none.
func (f *Fake) FindKey(ctx context.Context, scope, key string) (*store.KeyRecord, error) {
	if err := f.begin(ctx, "FindKey"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	k, ok := f.keys[keyID{scope, key}]
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "idempotency key %s/%s not found", scope, key)
	}
	c := cloneKey(*k)
	return &c, nil
}

// PurgeKeys deletes keys whose lifetime ended (on the database clock) and returns how many.
func (f *Fake) PurgeKeys(ctx context.Context) (int, error) {
	if err := f.begin(ctx, "PurgeKeys"); err != nil {
		return 0, err
	}
	defer f.mu.Unlock()
	now := f.dbNow()
	n := 0
	for id, k := range f.keys {
		if !now.Before(k.ExpiresAt) {
			delete(f.keys, id)
			n++
		}
	}
	return n, nil
}

func cloneKey(k store.KeyRecord) store.KeyRecord {
	k.Result = slices.Clone(k.Result)
	return k
}

// AcquireLease grants a lease to the actor, taking over an expired or released one with a
// higher fencing number. ELEASE (*store.LeaseError naming the holder) when a live lease
// holds the scope, EINVALID for an unknown group or a TTL out of range, ENOTFOUND for a
// missing record.
func (f *Fake) AcquireLease(ctx context.Context, req store.LeaseRequest) (*store.Lease, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.begin(ctx, "AcquireLease"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if err := f.checkKind(req.Kind); err != nil {
		return nil, err
	}
	if !f.reg.HasGroup(req.Kind, req.Group) {
		return nil, store.Errorf(store.EINVALID, "%s has no lease group %q (groups: %s)", req.Kind, req.Group,
			strings.Join(f.reg.Groups(req.Kind), ", "))
	}
	if err := checkTTL(req.TTL); err != nil {
		return nil, err
	}
	if _, err := f.find(req.Kind, req.RecordID); err != nil {
		return nil, err
	}
	now := f.dbNow()
	scope := leaseScope{req.Kind, req.RecordID, req.Group}
	old, ok := f.leases[scope]
	if ok && old.Live(now) {
		return nil, &store.LeaseError{Lease: old.public(), Now: now}
	}
	if ok && !old.Released {
		old.takenBy = actor.Name
		f.appendChange(store.Change{Event: store.EventLeaseExpired, Kind: req.Kind, RecordID: req.RecordID,
			Actor: old.Holder, Group: req.Group, Fence: old.Fence, At: now})
	}
	f.fences[scope]++
	l := &fakeLease{Lease: store.Lease{Kind: req.Kind, RecordID: req.RecordID, Group: req.Group, Holder: actor.Name,
		Token: newToken(), Fence: f.fences[scope], AcquiredAt: now, ExpiresAt: now.Add(req.TTL)}}
	f.leases[scope] = l
	f.tokens[l.Token] = l
	f.appendChange(store.Change{Event: store.EventLeaseGranted, Kind: req.Kind, RecordID: req.RecordID,
		Actor: actor.Name, Role: actor.Role, Group: req.Group, Fence: l.Fence, At: now})
	out := l.Lease
	return &out, nil
}

func checkTTL(ttl time.Duration) error {
	if ttl < store.MinLeaseTTL || ttl > store.MaxLeaseTTL {
		return store.Errorf(store.EINVALID, "lease duration %s is outside [%s, %s]", ttl, store.MinLeaseTTL, store.MaxLeaseTTL)
	}
	return nil
}

func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// ExtendLease moves a live lease's expiry to now + ttl. ELEASE (Lost) when the lease
// expired, was released or taken over; ENOTFOUND for an unknown token; EINVALID for a TTL
// out of range.
func (f *Fake) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	if err := f.begin(ctx, "ExtendLease"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	l, ok := f.tokens[token]
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "no lease with this token")
	}
	now := f.dbNow()
	if reason := f.lostReason(l, now); reason != "" {
		return nil, &store.LeaseError{Lease: l.public(), Lost: true, Now: now, Reason: reason}
	}
	l.ExpiresAt = now.Add(ttl)
	f.appendChange(store.Change{Event: store.EventLeaseRenewed, Kind: l.Kind, RecordID: l.RecordID,
		Actor: l.Holder, Group: l.Group, Fence: l.Fence, At: now})
	out := l.Lease
	return &out, nil
}

// ReleaseLease ends a lease; releasing an ended lease is not an error. ENOTFOUND for an
// unknown token.
func (f *Fake) ReleaseLease(ctx context.Context, token string) (*store.LeaseRelease, error) {
	if err := f.begin(ctx, "ReleaseLease"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	l, ok := f.tokens[token]
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "no lease with this token")
	}
	now := f.dbNow()
	if reason := f.lostReason(l, now); reason != "" {
		return &store.LeaseRelease{Lease: l.public(), Ended: reason}, nil
	}
	l.Released, l.ExpiresAt = true, now
	f.appendChange(store.Change{Event: store.EventLeaseReleased, Kind: l.Kind, RecordID: l.RecordID,
		Actor: l.Holder, Group: l.Group, Fence: l.Fence, At: now})
	return &store.LeaseRelease{Lease: l.public()}, nil
}

// FindLeases returns the live leases matching flt, and those that ended within flt.Expired,
// without tokens, ordered by kind, record and group, with the database clock's now.
func (f *Fake) FindLeases(ctx context.Context, flt store.LeaseFilter) ([]store.Lease, time.Time, error) {
	if err := f.begin(ctx, "FindLeases"); err != nil {
		return nil, time.Time{}, err
	}
	defer f.mu.Unlock()
	now := f.dbNow()
	out := []store.Lease{}
	for scope, l := range f.leases {
		if flt.Kind != "" && scope.kind != flt.Kind || flt.RecordID != 0 && scope.id != flt.RecordID {
			continue
		}
		// A released lease's ExpiresAt is the moment it was released.
		if l.Live(now) || flt.Expired > 0 && now.Sub(l.ExpiresAt) < flt.Expired {
			out = append(out, l.public())
		}
	}
	slices.SortFunc(out, func(a, b store.Lease) int {
		if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.RecordID, b.RecordID); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	})
	return out, now, nil
}

// appendChange adds c to the change log with the next ID and wakes the subscribers.
func (f *Fake) appendChange(c store.Change) {
	c.ID = int64(len(f.changes)) + 1
	f.changes = append(f.changes, c)
	close(f.notify)
	f.notify = make(chan struct{})
}

func cloneChange(c store.Change) store.Change {
	c.Fields = slices.Clone(c.Fields)
	c.Deltas = maps.Clone(c.Deltas)
	return c
}

// Changes returns up to limit change-log entries with ID > after, oldest first (all of them
// when limit <= 0).
func (f *Fake) Changes(ctx context.Context, after int64, limit int) ([]store.Change, error) {
	if err := f.begin(ctx, "Changes"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	return f.since(after, limit), nil
}

func (f *Fake) since(after int64, limit int) []store.Change {
	out := []store.Change{}
	for i := max(after, 0); i < int64(len(f.changes)); i++ {
		out = append(out, cloneChange(f.changes[i]))
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// LastChangeID returns the newest change-log ID, 0 when the log is empty.
func (f *Fake) LastChangeID(ctx context.Context) (int64, error) {
	if err := f.begin(ctx, "LastChangeID"); err != nil {
		return 0, err
	}
	defer f.mu.Unlock()
	return int64(len(f.changes)), nil
}

// Subscribe delivers every change with ID > after, in order, until ctx ends or the fake is
// closed; then the channel is closed. Delivery is immediate: the goroutine wakes on every
// appended change.
func (f *Fake) Subscribe(ctx context.Context, after int64) (<-chan store.Change, error) {
	if err := f.begin(ctx, "Subscribe"); err != nil {
		return nil, err
	}
	f.subsWG.Add(1)
	f.mu.Unlock()
	ch := make(chan store.Change)
	go func() {
		defer f.subsWG.Done()
		defer close(ch)
		cursor := after
		for {
			f.mu.Lock()
			batch := f.since(cursor, 0)
			wake := f.notify
			f.mu.Unlock()
			for _, c := range batch {
				select {
				case ch <- c:
					cursor = c.ID
				case <-ctx.Done():
					return
				case <-f.closedCh:
					return
				}
			}
			if len(batch) > 0 {
				continue
			}
			select {
			case <-wake:
			case <-ctx.Done():
				return
			case <-f.closedCh:
				return
			}
		}
	}()
	return ch, nil
}
