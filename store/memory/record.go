package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func (db *DB) find(kind store.Kind, id int64) (*store.Record, error) {
	if err := db.checkKind(kind); err != nil {
		return nil, err
	}
	r, ok := db.records[kind][id]
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "%s %d not found", kind, id)
	}
	return r, nil
}

// FindRecord returns one record. ENOTFOUND if there is none, EINVALID for an unknown kind.
func (db *DB) FindRecord(ctx context.Context, kind store.Kind, id int64) (*store.Record, error) {
	if err := db.begin(ctx, "FindRecord"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	r, err := db.find(kind, id)
	if err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// FindRecords returns the records matching flt, ordered by id or by flt.Sort. EINVALID for an
// unknown kind or sort.
func (db *DB) FindRecords(ctx context.Context, flt store.Filter) ([]*store.Record, error) {
	if err := db.begin(ctx, "FindRecords"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if err := db.checkKind(flt.Kind); err != nil {
		return nil, err
	}
	if err := db.Registry().CheckFilter(flt); err != nil {
		return nil, err
	}
	recs := slices.Collect(maps.Values(db.records[flt.Kind]))
	slices.SortFunc(recs, func(a, b *store.Record) int { return store.CompareSort(flt, a, b) })
	out := []*store.Record{}
	for _, r := range recs {
		if !store.AfterSortKey(flt, r) || len(flt.IDs) > 0 && !slices.Contains(flt.IDs, r.ID) {
			continue
		}
		if flt.Search != "" && !db.Registry().MatchesSearch(r, flt.Search) {
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
func (db *DB) CountRecords(ctx context.Context, kind store.Kind) (int, error) {
	if err := db.begin(ctx, "CountRecords"); err != nil {
		return 0, err
	}
	defer db.mu.Unlock()
	if err := db.checkKind(kind); err != nil {
		return 0, err
	}
	return len(db.records[kind]), nil
}

// CreateRecord inserts a record at version 1 and returns it. EINVALID for bad values, a
// duplicate sku, a missing parent or a tree deeper than store.MaxDepth; EFORBIDDEN for
// fields the actor's role may not write.
func (db *DB) CreateRecord(ctx context.Context, kind store.Kind, vals store.Values, opts ...store.CreateOptions) (*store.Record, error) {
	p, err := db.Registry().PlanCreate(ctx, kind, vals, opts)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", kind, err)
	}
	if err := db.begin(ctx, "CreateRecord"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if db.wc != nil {
		if err := store.CheckCopyCreate(&db.wc.meta, kind, p.ID); err != nil {
			return nil, err
		}
	}
	if p.Key != "" {
		if k, ok := db.keys[keyID{store.ScopeAPI, p.Key}]; ok {
			replay, err := store.CheckSaveKey(*k, db.dbNow().Before(k.ExpiresAt), p.Hash)
			if err != nil {
				return nil, err
			}
			if replay {
				kr, err := store.DecodeKeyResult(k.Result)
				if err != nil {
					return nil, err
				}
				r, err := db.find(kind, kr.ID)
				if err != nil {
					return nil, err
				}
				return r.Clone(), nil
			}
		}
	}
	r, err := db.Registry().RunCreate(p, createSteps{parentSteps{db, kind, db.dbNow()}, kind})
	if err != nil {
		return nil, err
	}
	if p.Key != "" {
		kn := db.dbNow()
		db.keys[keyID{store.ScopeAPI, p.Key}] = &store.KeyRecord{Scope: store.ScopeAPI, Key: p.Key,
			Status: store.KeyCompleted, RequestHash: p.Hash, Result: store.CreatedResult(r).Encode(), Owner: p.Actor.Name,
			CreatedAt: kn, ExpiresAt: kn.Add(store.DefaultCompletedTTL)}
	}
	return r.Clone(), nil
}

// parentSteps are the checks of a new document's parent under the lock
// (store.ParentSteps); the lock serializes every write, so the tree needs none of its own.
type parentSteps struct {
	db   *DB
	kind store.Kind
	now  time.Time
}

func (s parentSteps) LockTree() error { return nil }

func (s parentSteps) CheckNewChild(parent int64) error { return s.db.checkNewChild(s.kind, parent) }

func (s parentSteps) Ancestors(id int64) ([]int64, error) { return s.db.ancestors(s.kind, id), nil }

func (s parentSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.kind, id, groups, token, s.now)
}

// createSteps are a create's reads and writes under the lock (store.CreateSteps).
type createSteps struct {
	parentSteps
	kind store.Kind
}

func (s createSteps) CheckFreeID(id int64) error {
	if _, taken := s.db.records[s.kind][id]; taken {
		return store.IDTakenError(s.kind, id)
	}
	return nil
}

func (s createSteps) CheckUnique(field, value string) error {
	return s.db.checkUnique(s.kind, 0, field, value)
}

func (s createSteps) RecordExists(kind store.Kind, id int64) (bool, error) {
	_, ok := s.db.records[kind][id]
	return ok, nil
}

func (s createSteps) Insert(p *store.CreatePlan) (*store.Record, error) {
	db, kind := s.db, s.kind
	id := p.ID
	if id == 0 {
		db.lastID[kind]++
		id = db.lastID[kind]
	}
	db.lastID[kind] = max(db.lastID[kind], id)
	now := db.stamp()
	r := &store.Record{Kind: kind, ID: id, Version: 1, UpdatedBy: p.Actor.Name, UpdatedAt: now, Fields: p.Values.Clone()}
	db.records[kind][r.ID] = r
	db.queueWrite(nil, r)
	if p.Keep {
		if err := db.addVersion(r, p.Actor.HistoryName(), now, p.Written, nil); err != nil {
			return nil, err
		}
	}
	db.appendChange(store.Change{Event: store.EventCreated, Kind: kind, RecordID: r.ID, Version: 1,
		Actor: p.Actor.Name, Role: p.Actor.Role, Fields: p.Written, History: p.Keep, At: now})
	return r, nil
}

// checkUnique refuses a value of kind's unique field whose key another record (not id)
// already has, as the real stores' unique index on the key does.
func (db *DB) checkUnique(kind store.Kind, id int64, field, value string) error {
	if err := store.CheckUniqueValue(field, value); err != nil {
		return err
	}
	if oid := db.uniqueHolder(kind, id, field, value); oid != 0 {
		o, _ := db.records[kind][oid].Fields[field].(string)
		return store.DuplicateKeyError(kind, field, value, oid, o)
	}
	return nil
}

// uniqueHolder returns the record of kind (not id) whose unique field has the key of value,
// 0 when there is none.
func (db *DB) uniqueHolder(kind store.Kind, id int64, field, value string) int64 {
	key := store.SKUKey(value)
	for _, oid := range slices.Sorted(maps.Keys(db.records[kind])) {
		o, _ := db.records[kind][oid].Fields[field].(string)
		if oid != id && store.SKUKey(o) == key {
			return oid
		}
	}
	return 0
}

// recordExists reports whether a record of kind with id exists.
func (db *DB) recordExists(kind store.Kind, id int64) (bool, error) {
	_, ok := db.records[kind][id]
	return ok, nil
}

// UpdateRecord applies a partial, version-checked update atomically, with the contract's
// errors: ECONFLICT (*store.ConflictError), ENOTFOUND, EINVALID, EFORBIDDEN
// (*store.OwnershipError), ELEASE (*store.LeaseError).
func (db *DB) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	if _, err := store.ActorFrom(ctx); err != nil {
		return nil, err
	}
	if err := db.begin(ctx, "UpdateRecord"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	res, err := db.update(ctx, kind, id, u)
	if err == nil && len(db.lostReply) > 0 {
		err, db.lostReply = db.lostReply[0], db.lostReply[1:]
		return nil, err
	}
	return res, err
}

// update is UpdateRecord under the lock: the working copy's check, then store.RunUpdate's
// sequence with the steps below.
func (db *DB) update(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	p, err := db.Registry().NewUpdateRequest(ctx, kind, id, u)
	if err != nil {
		return nil, err
	}
	if db.wc != nil {
		if err := db.Registry().CheckCopySave(&db.wc.meta, kind, p.Actor, u); err != nil {
			return nil, err
		}
	}
	return db.Registry().RunUpdate(p, updateSteps{saveChecks{db, kind, id}, db.dbNow()})
}

// updateSteps are a save's steps under the lock (store.UpdateSteps).
type updateSteps struct {
	saveChecks
	now time.Time // the database clock of the save
}

func (s updateSteps) Read(p *store.UpdateRequest) (store.UpdateRead, error) {
	r := s.db.records[s.kind][s.id]
	// The lease check is a few map lookups here: it always runs.
	return store.UpdateRead{Current: r, Leased: true}, nil
}

func (s updateSteps) TakeKey(p *store.UpdateRequest) (*store.KeyResult, error) {
	return s.db.savedKey(p.Update.IdempotencyKey, p.Hash, s.now)
}

func (s updateSteps) Find(id int64) (*store.Record, error) {
	r, err := s.db.find(s.kind, id)
	if err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

func (s updateSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.kind, id, groups, token, s.now)
}

func (s updateSteps) Conflict(id, base int64) error {
	r, err := s.db.find(s.kind, id)
	if err != nil {
		return err
	}
	return s.db.conflict(r, base)
}

func (s updateSteps) Write(p *store.UpdateRequest, r *store.Record, plan *store.SavePlan, done store.KeyResult) (*store.UpdateResult, error) {
	db, actor := s.db, p.Actor
	pre := db.Registry().PreImage(s.kind, store.Update{Set: plan.Set}, r, p.Keep)
	var old *store.Record // what a working copy's outbox entry says the save changed
	if db.wc != nil {
		old = r.Clone()
	}
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
	stamp := db.stamp()
	r.Version++
	r.UpdatedBy, r.UpdatedAt = actor.Name, stamp
	if old != nil {
		db.queueWrite(old, r)
	}
	names := plan.FieldNames()
	if p.Keep {
		if err := db.addVersion(r, actor.HistoryName(), stamp, names, pre); err != nil {
			return nil, err
		}
	}
	var deltas map[string]int64
	if len(plan.Add) > 0 {
		deltas = maps.Clone(plan.Add)
	}
	db.appendChange(store.Change{Event: store.EventSaved, Kind: s.kind, RecordID: s.id, Version: r.Version,
		Actor: actor.Name, Role: actor.Role, Fields: names, Deltas: deltas, History: p.Keep, At: stamp})
	if p.Update.IdempotencyKey != "" {
		if err := s.CompleteKey(p, done); err != nil {
			return nil, err
		}
	}
	return &store.UpdateResult{Record: r.Clone(), Version: r.Version}, nil
}

func (s updateSteps) CompleteKey(p *store.UpdateRequest, done store.KeyResult) error {
	s.db.keys[keyID{store.ScopeAPI, p.Update.IdempotencyKey}] = &store.KeyRecord{Scope: store.ScopeAPI,
		Key: p.Update.IdempotencyKey, Status: store.KeyCompleted, RequestHash: p.Hash, Result: done.Encode(),
		Owner: p.Actor.Name, CreatedAt: s.now, ExpiresAt: s.now.Add(store.DefaultCompletedTTL)}
	return nil
}

func (db *DB) conflict(r *store.Record, base int64) *store.ConflictError {
	e := &store.ConflictError{Kind: r.Kind, ID: r.ID, BaseVersion: base, Current: r.Clone()}
	for _, c := range db.changes {
		if c.Kind == r.Kind && c.RecordID == r.ID && c.Version > base && isRecordEvent(c.Event) {
			e.Since = append(e.Since, cloneChange(c))
		}
	}
	return e
}

// isRecordEvent reports whether e is one of the store's own record writes: not a lease event,
// nor a working copy's "pulled" change (the source's write), which the copy's operation log
// and conflicts leave out, as the SQL stores' do.
func isRecordEvent(e store.Event) bool { return store.IsRecordEvent(e) && e != store.EventPulled }

// LockedUpdate reads the record, calls fn with a copy, and applies the update fn returns,
// checked against the version read. LockedUpdate calls are serialized like a row lock; when
// another writer changed the record between the read and the write, fn is called again
// (bounded; then EBUSY). fn may call the store's read methods. Same errors as UpdateRecord.
func (db *DB) LockedUpdate(ctx context.Context, kind store.Kind, id int64, fn func(*store.Record) (store.Update, error)) (*store.UpdateResult, error) {
	if _, err := store.ActorFrom(ctx); err != nil {
		return nil, err
	}
	db.lockedMu.Lock()
	defer db.lockedMu.Unlock()
	for range lockedUpdateAttempts {
		if err := db.begin(ctx, "LockedUpdate"); err != nil {
			return nil, err
		}
		r, err := db.find(kind, id)
		if err != nil {
			db.mu.Unlock()
			return nil, err
		}
		read := r.Clone()
		db.mu.Unlock()

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
		db.mu.Lock()
		if cur, ok := db.records[kind][id]; ok && cur.Version != read.Version {
			db.mu.Unlock()
			continue // someone wrote in between: read again, as a retried transaction would
		}
		res, err := db.update(ctx, kind, id, u)
		db.mu.Unlock()
		return res, err
	}
	return nil, store.Errorf(store.EBUSY, "%s %d kept changing during a locked update; try again later", kind, id)
}

// saveChecks are a save's reads of other records under the lock (store.SaveChecks).
type saveChecks struct {
	db   *DB
	kind store.Kind
	id   int64 // the record saved, whose own value of a unique field is no clash
}

func (s saveChecks) Ancestors(id int64) ([]int64, error) { return s.db.ancestors(s.kind, id), nil }

func (s saveChecks) CheckUnique(field, value string) error {
	return s.db.checkUnique(s.kind, s.id, field, value)
}

func (s saveChecks) RecordExists(kind store.Kind, id int64) (bool, error) {
	return s.db.recordExists(kind, id)
}
