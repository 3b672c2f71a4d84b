package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// DeleteRecord removes a record (with d.Subtree, also the documents below it), leaving a
// tombstone in history and an EventDeleted change per record removed. See store.Records for
// the order of the checks and the errors.
func (db *DB) DeleteRecord(ctx context.Context, kind store.Kind, id int64, d store.Delete) (*store.DeleteResult, error) {
	actor, err := store.WriterFrom(ctx, fmt.Sprintf("the delete of %s %d", kind, id))
	if err != nil {
		return nil, err
	}
	if err := db.Registry().CheckDelete(kind, actor, d); err != nil {
		return nil, fmt.Errorf("delete %s %d: %w", kind, id, err)
	}
	if err := db.begin(ctx, "DeleteRecord"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	now := db.dbNow()
	var hash string
	if d.IdempotencyKey != "" {
		hash = store.DeleteRequestHash(kind, id, d)
		replay, err := db.savedKey(d.IdempotencyKey, hash, now)
		if err != nil {
			return nil, err
		}
		if replay != nil {
			return replay.ReplayDelete(), nil
		}
	}
	undo := func() {}
	if db.wc != nil {
		undo = db.snapshot() // a working copy's delete can be refused after a record went (queueDelete)
	}
	res, err := db.Registry().RunDelete(kind, id, d, actor, db.stamp(), deleteSteps{db, kind, actor, now})
	if err != nil {
		undo()
		return nil, err
	}
	if d.IdempotencyKey != "" {
		db.keys[keyID{store.ScopeAPI, d.IdempotencyKey}] = &store.KeyRecord{Scope: store.ScopeAPI, Key: d.IdempotencyKey,
			Status: store.KeyCompleted, RequestHash: hash, Result: store.DeleteKeyResult(res).Encode(), Owner: actor.Name,
			CreatedAt: now, ExpiresAt: now.Add(store.DefaultCompletedTTL)}
	}
	return res, nil
}

// deleteSteps are a delete's reads and writes under the lock (store.DeleteSteps).
type deleteSteps struct {
	db    *DB
	kind  store.Kind
	actor store.Actor
	now   time.Time
}

func (s deleteSteps) Find(id int64) (*store.Record, error) { return s.db.find(s.kind, id) }

func (s deleteSteps) Ancestors(id int64) ([]int64, error) { return s.db.ancestors(s.kind, id), nil }

func (s deleteSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.kind, id, groups, token, s.now)
}

func (s deleteSteps) Descendants(id int64) (map[int64]int64, error) {
	return s.db.descendants(s.kind, id), nil
}

func (s deleteSteps) Referrers(ref store.FieldOf, id int64, skip []int64, limit int) ([]int64, error) {
	var out []int64
	for _, rid := range slices.Sorted(maps.Keys(s.db.records[ref.Kind])) {
		if v, _ := s.db.records[ref.Kind][rid].Fields[ref.Field.Name].(int64); v == id && !slices.Contains(skip, rid) {
			if out = append(out, rid); len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

func (s deleteSteps) Conflict(id, base int64) error {
	return s.db.conflict(s.db.records[s.kind][id], base)
}

func (s deleteSteps) Remove(rec *store.Record, tomb store.HistoryRow) error {
	s.db.history = append(s.db.history, historyEntry{kind: rec.Kind, id: rec.ID, row: tomb})
	delete(s.db.records[rec.Kind], rec.ID)
	if err := s.db.queueDelete(rec, s.actor, tomb.At); err != nil {
		return err
	}
	s.db.appendChange(store.Change{Event: store.EventDeleted, Kind: rec.Kind, RecordID: rec.ID, Version: tomb.Version,
		Actor: s.actor.Name, Role: s.actor.Role, History: true, At: tomb.At})
	return nil
}

// descendants maps every record of the tree kind below id to its parent.
func (db *DB) descendants(kind store.Kind, id int64) map[int64]int64 {
	out := map[int64]int64{}
	for changed := true; changed; {
		changed = false
		for cid, c := range db.records[kind] {
			p, ok := c.Fields[store.ParentField].(int64)
			if _, seen := out[cid]; ok && !seen && cid != id && (p == id || out[p] != 0) {
				out[cid] = p
				changed = true
			}
		}
	}
	return out
}

// RestoreRecord brings a deleted record back from its tombstone as the next version. See
// store.Records for the errors.
func (db *DB) RestoreRecord(ctx context.Context, kind store.Kind, id int64, rq store.Restore) (*store.RestoreResult, error) {
	actor, err := db.Registry().CheckRestore(ctx, kind)
	if err != nil {
		return nil, err
	}
	if err := db.begin(ctx, "RestoreRecord"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	_, exists := db.records[kind][id]
	var newest *store.HistoryRow
	if rows := db.historyRows(kind, id, 0, 1<<62); len(rows) > 0 {
		newest = &rows[len(rows)-1]
	}
	pending, err := db.pendingDelete(kind, id, exists) // the delete a restore on a working copy cancels
	if err != nil {
		return nil, err
	}
	plan, err := db.Registry().PlanRestore(kind, id, actor, exists, newest, func(p int64) (bool, error) {
		_, ok := db.records[kind][p]
		return ok, nil
	})
	if err != nil {
		return nil, err
	}
	if pending != 0 && plan.Note != "" {
		// At the root here, under its parent on the source: the copy would differ from the
		// source with nothing in the outbox to say so.
		was, _ := db.Registry().DecodeSnapshot(kind, newest.Snapshot)
		return nil, store.RestoreUnderDeleted(id, was[store.ParentField])
	}
	if plan.Parent != 0 {
		if err := db.Registry().CheckParent(parentSteps{db, kind, db.dbNow()}, actor, kind, plan.Parent, rq.ParentLeaseToken); err != nil {
			return nil, err
		}
	}
	for _, field := range slices.Sorted(maps.Keys(plan.Unique)) {
		if err := db.checkUnique(kind, id, field, plan.Unique[field]); err != nil {
			return nil, err
		}
	}
	if err := db.Registry().CheckRefs(kind, plan.Values, db.recordExists); err != nil {
		return nil, err // a ref to a record deleted since: restore that one first
	}
	stamp := db.stamp()
	rec := plan.RestoredRecord(kind, id, actor.Name, stamp)
	row, err := db.Registry().NewRestoredRow(rec, actor.Name, stamp)
	if err != nil {
		return nil, err
	}
	db.records[kind][id] = rec
	if pending != 0 {
		db.cancelDelete(kind, id, pending) // back as the source still has it: no create to push
	} else {
		db.queueWrite(nil, rec)
	}
	db.history = append(db.history, historyEntry{kind: kind, id: id, row: row})
	db.appendChange(store.Change{Event: store.EventRestored, Kind: kind, RecordID: id, Version: rec.Version,
		Actor: actor.Name, Role: actor.Role, Fields: slices.Clone(row.Fields), History: true, At: stamp})
	return &store.RestoreResult{Record: rec.Clone(), Note: plan.Note}, nil
}
