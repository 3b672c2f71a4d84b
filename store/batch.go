package store

import "context"

// Batcher is a store that runs many writes in one transaction of the database: a bulk
// import's rows, a few thousand to a commit instead of one each.
//
// WriteBatch runs fn with a context that every write of the store made with it (or a
// context derived from it) joins: each such write runs as it always does (the same
// sequence, checks, history version and change), inside a savepoint of the batch's
// transaction, so a write that fails leaves nothing of itself and the others stay. (A store
// may first run fn without the savepoints, which cost a statement or two per write, and run
// it again from the start with them, after rolling everything back, when a write of that
// first run failed: so fn may run twice, and what it keeps outside the store it must reset
// when it starts.) The transaction commits when fn returns nil; when fn returns an error, or
// the commit fails, nothing of the batch stays and that error is returned. The store's reads (FindRecord,
// FindKey, FindVersion…) do not see the batch's writes before it commits: a caller that
// must read what it wrote ends the batch first. fn runs on any goroutine and must not start
// another batch; other writers of the database wait for the batch (SQLite) or
// for the rows and change log it holds (PostgreSQL) until it commits, so a batch is kept
// to a second or so of writes.
type Batcher interface {
	WriteBatch(ctx context.Context, fn func(ctx context.Context) error) error
}

// KeyLister is a store that tells, in one read, which of many idempotency keys it holds (of
// any status): a bulk import looks up a batch's keys at once and reads one by one
// (FindKey) only those the store holds. Errors are the store's read errors.
type KeyLister interface {
	ListKeys(ctx context.Context, scope string, keys []string) (map[string]bool, error)
}

// NewRecord is one record of a bulk create (BulkCreator): what CreateRecord takes.
type NewRecord struct {
	Kind    Kind
	Values  Values
	Options CreateOptions
}

// BulkCreator is a store that creates many new records at once in a batch (Batcher): their
// checks made set-wise (a statement for all their unique values, refs and idempotency keys)
// and their rows, history versions, changes and keys written many to a statement, with the
// result CreateRecord would give each, one after the other.
//
// CreateRecords creates the leading records of recs, in order, as far as its set-based
// checks let it, and returns them (n = len(created)). recs[n], when n < len(recs), is one it
// did not create: one a check refuses (a unique value taken, a missing ref), or one it
// leaves to CreateRecord (an id asked for, a parent, a key the store holds, a schema newer
// than the client's, a working copy): the caller creates it with CreateRecord, which gives
// its record or its refusal in the usual words, and then asks for the rest. EINVALID
// when ctx carries no batch of the store; other errors are the store's write errors, and
// nothing of the call stays then.
type BulkCreator interface {
	CreateRecords(ctx context.Context, recs []NewRecord) ([]*Record, error)
}

// RecordUpdate is one save of a bulk update (BulkUpdater): what UpdateRecord takes.
type RecordUpdate struct {
	Kind   Kind
	ID     int64
	Update Update
}

// BulkUpdater is a store that saves many records at once in a batch (Batcher): the plain
// saves (absolute changes from the current version, no lease token, no unique field or
// ref written, no lease row on the record, a key the store does not hold) read, written
// and logged many to a statement, with the result UpdateRecord would give each, one after
// the other: the same record, version, history version, change (in order) and key.
//
// UpdateRecords saves the leading updates of ups, in order, as far as they are plain, and
// returns their results (n = len(saved)). ups[n], when n < len(ups), is one it did not
// save: the caller saves it with UpdateRecord, which gives its result or its refusal
// (conflict, lease, unique value…) in the usual words, and then asks for the rest. A
// problem the store did not foresee leaves nothing of the call and saves none. EINVALID
// when ctx carries no batch of the store; other errors are the store's write errors.
type BulkUpdater interface {
	UpdateRecords(ctx context.Context, ups []RecordUpdate) ([]*UpdateResult, error)
}

// PlainUpdates returns the requests of the leading updates of ups that a BulkUpdater may
// take: all of the first's kind, each record once, absolute changes from a base version,
// no lease token, an actor whose rights do not depend on the record's place, and a request
// NewUpdateRequest accepts. The first that is not ends them.
func (r *Registry) PlainUpdates(ctx context.Context, ups []RecordUpdate) []*UpdateRequest {
	var reqs []*UpdateRequest
	seen := map[int64]bool{}
	for _, up := range ups {
		u := up.Update
		if up.Kind != ups[0].Kind || seen[up.ID] || len(u.Add) > 0 || len(u.Set) == 0 || u.BaseVersion == 0 || u.LeaseToken != "" {
			break
		}
		p, err := r.NewUpdateRequest(ctx, up.Kind, up.ID, u)
		if err != nil || p.Actor.LimitsPlace(up.Kind) {
			break
		}
		seen[up.ID] = true
		reqs = append(reqs, p)
	}
	return reqs
}

// PlanPlainSaves decides the leading saves of reqs (PlainUpdates) as RunUpdate decides
// each (PlanUpdate), from what a BulkUpdater read: the records (cur, by id), the ids with a
// lease row and the keys the store holds. The first that is not a plain write (a record
// missing, a lease row, a key held, a stale base, nothing to change, a unique field or a ref
// written, a refusal) ends them: UpdateRecord is the caller's for that one.
func (r *Registry) PlanPlainSaves(reqs []*UpdateRequest, cur map[int64]*Record, leased map[int64]bool, held map[string]bool) []*SavePlan {
	plans := make([]*SavePlan, 0, len(reqs))
	for _, p := range reqs {
		c := cur[p.ID]
		if c == nil || leased[p.ID] || held[p.Update.IdempotencyKey] {
			break
		}
		plan, err := r.PlanUpdate(c, p.Update)
		if err != nil || plan.Stale || plan.Unchanged || plan.Keys != nil || r.writesRef(p.Kind, plan.Set) {
			break
		}
		plans = append(plans, plan)
	}
	return plans
}

// writesRef reports whether set writes a ref field of kind (a value CheckRefs would look up).
func (r *Registry) writesRef(kind Kind, set Values) bool {
	found := false
	_ = r.CheckRefs(kind, set, func(Kind, int64) (bool, error) {
		found = true
		return true, nil
	})
	return found
}
