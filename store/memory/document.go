package memory

import (
	"context"
	"slices"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// MoveRecord puts record id of a tree kind under m.Parent (nil: the root), version-incrementing it, with
// a history version for an editor move that keeps history and an EventMoved change. A move to
// the current parent writes nothing (Unchanged). EFORBIDDEN when the actor's role may not
// write parent_id; ENOTFOUND for a missing document or parent; ELEASE when a live lease on
// the tree group of the document or the new parent is not presented (the token binds, not the
// holder's name); EINVALID naming the path for a cycle or a tree deeper than store.MaxDepth.
func (db *DB) MoveRecord(ctx context.Context, kind store.Kind, id int64, m store.Move) (*store.UpdateResult, error) {
	p, err := db.Registry().PlanMove(ctx, kind, m)
	if err != nil {
		return nil, err
	}
	if err := db.begin(ctx, "MoveRecord"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	res, err := db.Registry().RunMove(id, m, p, moveSteps{db, kind, db.dbNow()})
	if err != nil {
		return nil, err
	}
	res.Record = res.Record.Clone()
	return res, nil
}

// moveSteps are a move's reads and writes under the lock (store.MoveSteps); the lock
// serializes every write, so the tree needs none of its own.
type moveSteps struct {
	db   *DB
	kind store.Kind
	now  time.Time
}

func (s moveSteps) LockTree() error { return nil }

func (s moveSteps) Find(id int64) (*store.Record, error) { return s.db.find(s.kind, id) }

func (s moveSteps) Ancestors(id int64) ([]int64, error) { return s.db.ancestors(s.kind, id), nil }

func (s moveSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.kind, id, groups, token, s.now)
}

func (s moveSteps) CheckMove(id, parent int64) error { return s.db.checkMove(s.kind, id, parent) }

func (s moveSteps) Write(p *store.MovePlan, id int64, parent any) (*store.Record, error) {
	r := s.db.records[s.kind][id]
	old := r.Clone()
	stamp := s.db.stamp()
	r.Fields[p.Field] = parent
	r.Version++
	r.UpdatedBy, r.UpdatedAt = p.Actor.Name, stamp
	s.db.queueWrite(old, r)
	names := []string{p.Field}
	if p.Keep {
		if err := s.db.addVersion(r, p.Actor.HistoryName(), stamp, names, nil); err != nil {
			return nil, err
		}
	}
	s.db.appendChange(store.Change{Event: store.EventMoved, Kind: s.kind, RecordID: id, Version: r.Version,
		Actor: p.Actor.Name, Role: p.Actor.Role, Fields: slices.Clone(names), History: p.Keep, At: stamp})
	return r, nil
}

// checkMove runs the cycle and depth checks of moving id under parent.
func (db *DB) checkMove(kind store.Kind, id, parent int64) error {
	up := db.ancestors(kind, parent)
	if err := store.CheckMoveCycle(id, parent, up); err != nil {
		return err
	}
	return store.CheckMoveDepth(id, parent, up, db.deepestPath(kind, id))
}

// checkNewChild checks that a new document may be created under parent.
func (db *DB) checkNewChild(kind store.Kind, parent int64) error {
	return store.CheckNewChild(parent, db.ancestors(kind, parent))
}

// ancestors returns document id and its ancestors, nearest first (id, its parent, ..., the
// root); empty when id does not exist. It stops at a repeated id, which only a corrupted tree
// could have.
func (db *DB) ancestors(kind store.Kind, id int64) []int64 {
	var up []int64
	for cur := id; !slices.Contains(up, cur); {
		r, ok := db.records[kind][cur]
		if !ok {
			break
		}
		up = append(up, cur)
		p, ok := r.Fields[store.ParentField].(int64)
		if !ok {
			break
		}
		cur = p
	}
	return up
}

// deepestPath returns the longest downward path from id (id first) to a leaf of its subtree;
// of equally long paths, the one ending in the smallest id (as the SQL stores order them).
func (db *DB) deepestPath(kind store.Kind, id int64) []int64 {
	children := map[int64][]int64{}
	for cid, c := range db.records[kind] {
		if p, ok := c.Fields[store.ParentField].(int64); ok && p != cid {
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
