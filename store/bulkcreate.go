package store

import "context"

// What the stores' bulk creates (BulkCreator) share: which leading records of a call they
// take, and the set-wise checks' answers turned into how many of them pass.

// PlanBulk plans (PlanCreate) the leading records of recs that a bulk create may take: up
// to the first with an id asked for, a parent (whose checks read the tree and its leases)
// or values PlanCreate refuses; CreateRecord decides those one by one.
func (r *Registry) PlanBulk(ctx context.Context, recs []NewRecord) []*CreatePlan {
	plans := make([]*CreatePlan, 0, len(recs))
	for _, rec := range recs {
		if rec.Options.ID != 0 {
			break
		}
		p, err := r.PlanCreate(ctx, rec.Kind, rec.Values, []CreateOptions{rec.Options})
		if err != nil || p.Parent != 0 {
			break
		}
		plans = append(plans, p)
	}
	return plans
}

// SameKind returns the leading plans of the kind of the first (none of none).
func SameKind(plans []*CreatePlan) []*CreatePlan {
	n := min(len(plans), 1)
	for n < len(plans) && plans[n].Kind == plans[0].Kind {
		n++
	}
	return plans[:n]
}

// CreateInRuns creates plans a run of one kind at a time with create, which returns the
// records it made of a run's leading plans, in order; it stops after a run not made whole
// (the rest are CreateRecord's, from the first not created) and returns every record made.
func CreateInRuns(plans []*CreatePlan, create func(run []*CreatePlan) ([]*Record, error)) ([]*Record, error) {
	var created []*Record
	for len(plans) > 0 {
		run := SameKind(plans)
		recs, err := create(run)
		if err != nil {
			return nil, err
		}
		created = append(created, recs...)
		if len(recs) < len(run) {
			break
		}
		plans = plans[len(run):]
	}
	return created, nil
}

// FirstTaken returns the index of the first plan whose value (of, when it has one) is in
// held or is an earlier plan's; len(plans) when there is none. A bulk create's check of
// keys and of unique values.
func FirstTaken(plans []*CreatePlan, held map[string]bool, of func(*CreatePlan) (string, bool)) int {
	seen := make(map[string]bool, len(plans))
	for i, p := range plans {
		v, ok := of(p)
		if !ok {
			continue
		}
		if held[v] || seen[v] {
			return i
		}
		seen[v] = true
	}
	return len(plans)
}

// UniqueKeyOf returns a function giving a plan's key (SKUKey) of the unique field, for
// FirstTaken.
func UniqueKeyOf(field string) func(*CreatePlan) (string, bool) {
	return func(p *CreatePlan) (string, bool) { return SKUKey(p.Unique[field]), true }
}

// KeyOf gives a plan's idempotency key, when it has one, for FirstTaken.
func KeyOf(p *CreatePlan) (string, bool) { return p.Key, p.Key != "" }

// RefTargets returns the records the plans' refs name (CheckRefs), by kind.
func (r *Registry) RefTargets(plans []*CreatePlan) map[Kind][]int64 {
	targets := map[Kind][]int64{}
	for _, p := range plans {
		_ = r.CheckRefs(p.Kind, p.Values, func(k Kind, id int64) (bool, error) {
			targets[k] = append(targets[k], id)
			return true, nil
		})
	}
	return targets
}

// FirstMissingRef returns the index of the first plan with a ref to a record not in found
// (by kind, the RefTargets a store found); len(plans) when there is none.
func (r *Registry) FirstMissingRef(plans []*CreatePlan, found map[Kind]map[int64]bool) int {
	for i, p := range plans {
		if r.CheckRefs(p.Kind, p.Values, func(k Kind, id int64) (bool, error) { return found[k][id], nil }) != nil {
			return i
		}
	}
	return len(plans)
}

// BulkLoader is a store whose bulk creates may also run outside any batch, each call in a
// transaction of its own on a connection made for loads (as a clone's load): the same
// records, ids, history versions, changes, keys and search index as CreateRecords in a
// batch, written set-wise instead of through the store's per-row triggers.
type BulkLoader interface {
	// OpenLoader returns a Loader, or nil (and no error) when the store cannot load now
	// (read-only, a working copy): its creates then go through batches.
	OpenLoader(ctx context.Context) (Loader, error)
}

// A Loader creates records as BulkCreator does, each call committed on its own (its ctx
// carries no batch); a refused record (recs[len(created)]) is the caller's to create with
// CreateRecord, as BulkCreator's. One goroutine at a time; Close lets it go.
type Loader interface {
	BulkCreator
	Close() error
}
