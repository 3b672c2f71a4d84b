package memory

import (
	"context"
	"slices"

	"github.com/tandem-editor/tandem/store"
)

// MoveDocument puts document id under m.Parent (nil: the root), version-incrementing it, with
// a history version for an editor move that keeps history and an EventMoved change. A move to
// the current parent writes nothing (Unchanged). EFORBIDDEN when the actor's role may not
// write parent_id; ENOTFOUND for a missing document or parent; ELEASE when a live lease on
// the tree group of the document or the new parent is not presented (the token binds, not the
// holder's name); EINVALID naming the path for a cycle or a tree deeper than store.MaxDepth.
func (db *DB) MoveDocument(ctx context.Context, id int64, m store.Move) (*store.UpdateResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	const kind = store.KindDocument
	fd, err := db.reg.Field(kind, "parent_id")
	if err != nil {
		return nil, err
	}
	if !fd.Writable(actor.Role) {
		return nil, &store.OwnershipError{Kind: kind, Field: fd.Name, Owner: fd.Owner, Role: actor.Role}
	}
	if err := db.begin(ctx, "MoveDocument"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	r, err := db.find(kind, id)
	if err != nil {
		return nil, err
	}
	now := db.dbNow()
	group := db.reg.TreeGroup()
	if err := db.checkLeases(kind, id, []string{group}, m.LeaseToken, now); err != nil {
		return nil, err
	}
	if m.Parent != nil {
		if err := db.checkLeases(kind, *m.Parent, []string{group}, m.ParentLeaseToken, now); err != nil {
			return nil, err
		}
	}
	if store.MoveChangesNothing(r, m.Parent) {
		return store.Unchanged(r.Clone()), nil
	}
	var newParent any
	if m.Parent != nil {
		if err := db.checkMove(id, *m.Parent); err != nil {
			return nil, err
		}
		newParent = *m.Parent
	}
	stamp := db.stamp()
	r.Fields["parent_id"] = newParent
	r.Version++
	r.UpdatedBy, r.UpdatedAt = actor.Name, stamp
	keep := store.KeepsHistory(ctx, actor)
	names := []string{fd.Name}
	if keep {
		if err := db.addVersion(r, actor.HistoryName(), stamp, names, nil); err != nil {
			return nil, err
		}
	}
	db.appendChange(store.Change{Event: store.EventMoved, Kind: kind, RecordID: id, Version: r.Version,
		Actor: actor.Name, Role: actor.Role, Fields: slices.Clone(names), History: keep, At: stamp})
	return &store.UpdateResult{Record: r.Clone(), Version: r.Version}, nil
}

// checkMove runs the cycle and depth checks of moving id under parent.
func (db *DB) checkMove(id, parent int64) error {
	up := db.ancestors(parent)
	if err := store.CheckMoveCycle(id, parent, up); err != nil {
		return err
	}
	return store.CheckMoveDepth(id, parent, up, db.deepestPath(id))
}

// checkNewChild checks that a new document may be created under parent.
func (db *DB) checkNewChild(parent int64) error {
	return store.CheckNewChild(parent, db.ancestors(parent))
}

// ancestors returns document id and its ancestors, nearest first (id, its parent, ..., the
// root); empty when id does not exist. It stops at a repeated id, which only a corrupted tree
// could have.
func (db *DB) ancestors(id int64) []int64 {
	var up []int64
	for cur := id; !slices.Contains(up, cur); {
		r, ok := db.records[store.KindDocument][cur]
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
func (db *DB) deepestPath(id int64) []int64 {
	children := map[int64][]int64{}
	for cid, c := range db.records[store.KindDocument] {
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
