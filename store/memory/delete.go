package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/tandem-editor/tandem/store"
)

// DeleteRecord removes a record (with d.Subtree, also the documents below it), leaving a
// tombstone in history and an EventDeleted change per record removed. See store.Records for
// the order of the checks and the errors.
func (db *DB) DeleteRecord(ctx context.Context, kind store.Kind, id int64, d store.Delete) (*store.DeleteResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := db.reg.CheckDelete(kind, actor, d); err != nil {
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
		if k, ok := db.keys[keyID{store.ScopeAPI, d.IdempotencyKey}]; ok {
			replay, err := store.CheckSaveKey(*k, now.Before(k.ExpiresAt), hash)
			if err != nil {
				return nil, err
			}
			if replay {
				kr, err := store.DecodeKeyResult(k.Result)
				if err != nil {
					return nil, err
				}
				return kr.ReplayDelete(), nil
			}
		}
	}
	r, err := db.find(kind, id)
	if err != nil {
		return nil, err
	}
	groups := db.reg.DeleteGroups(kind)
	if err := db.checkLeases(kind, id, groups, d.LeaseToken, now); err != nil {
		return nil, err
	}
	below := map[int64]int64{}
	if kind == store.KindDocument {
		below = db.descendants(id)
	}
	var children []int64
	for c, p := range below {
		if p == id {
			children = append(children, c)
		}
	}
	slices.Sort(children)
	stale, err := store.PlanDelete(r, d, children)
	if err != nil {
		return nil, err
	}
	if stale {
		return nil, db.conflict(r, d.ExpectVersion)
	}
	for _, c := range slices.Sorted(maps.Keys(below)) {
		if err := db.checkLeases(kind, c, groups, "", now); err != nil {
			return nil, err
		}
	}
	stamp := db.stamp()
	res := &store.DeleteResult{}
	for _, did := range store.DeleteOrder(id, below) {
		rec := db.records[kind][did]
		tomb, err := db.reg.NewTombstone(rec, actor.Name, stamp)
		if err != nil {
			return nil, err
		}
		db.history = append(db.history, historyEntry{kind: kind, id: did, row: tomb})
		delete(db.records[kind], did)
		db.appendChange(store.Change{Event: store.EventDeleted, Kind: kind, RecordID: did, Version: tomb.Version,
			Actor: actor.Name, Role: actor.Role, History: true, At: stamp})
		t := store.Tombstone{Kind: kind, ID: did, Version: tomb.Version, Title: rec.Title()}
		if did == id {
			res.Deleted = append([]store.Tombstone{t}, res.Deleted...)
		} else {
			res.Deleted = append(res.Deleted, t)
		}
	}
	if d.IdempotencyKey != "" {
		db.keys[keyID{store.ScopeAPI, d.IdempotencyKey}] = &store.KeyRecord{Scope: store.ScopeAPI, Key: d.IdempotencyKey,
			Status: store.KeyCompleted, RequestHash: hash, Result: store.DeleteKeyResult(res).Encode(), Owner: actor.Name,
			CreatedAt: now, ExpiresAt: now.Add(store.DefaultCompletedTTL)}
	}
	return res, nil
}

// descendants maps every document below id to its parent.
func (db *DB) descendants(id int64) map[int64]int64 {
	out := map[int64]int64{}
	for changed := true; changed; {
		changed = false
		for cid, c := range db.records[store.KindDocument] {
			p, ok := c.Fields["parent_id"].(int64)
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
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := store.CheckDeleter(kind, actor); err != nil {
		return nil, err
	}
	if err := db.begin(ctx, "RestoreRecord"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if err := db.checkKind(kind); err != nil {
		return nil, err
	}
	_, exists := db.records[kind][id]
	var newest *store.HistoryRow
	if rows := db.historyRows(kind, id, 0, 1<<62); len(rows) > 0 {
		newest = &rows[len(rows)-1]
	}
	plan, err := db.reg.PlanRestore(kind, id, exists, newest, func(p int64) (bool, error) {
		_, ok := db.records[store.KindDocument][p]
		return ok, nil
	})
	if err != nil {
		return nil, err
	}
	if plan.Parent != 0 {
		if err := db.checkLeases(store.KindDocument, plan.Parent, []string{db.reg.TreeGroup()}, rq.ParentLeaseToken, db.dbNow()); err != nil {
			return nil, err
		}
		if err := db.checkNewChild(plan.Parent); err != nil {
			return nil, err
		}
	}
	if kind == store.KindProduct {
		if err := db.checkSKU(id, plan.SKU); err != nil {
			return nil, err
		}
	}
	stamp := db.stamp()
	rec := plan.RestoredRecord(kind, id, actor.Name, stamp)
	row, err := db.reg.NewRestoredRow(rec, actor.Name, stamp)
	if err != nil {
		return nil, err
	}
	db.records[kind][id] = rec
	db.history = append(db.history, historyEntry{kind: kind, id: id, row: row})
	db.appendChange(store.Change{Event: store.EventRestored, Kind: kind, RecordID: id, Version: rec.Version,
		Actor: actor.Name, Role: actor.Role, Fields: slices.Clone(row.Fields), History: true, At: stamp})
	return &store.RestoreResult{Record: rec.Clone(), Note: plan.Note}, nil
}
