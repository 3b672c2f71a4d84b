package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// MoveRecord puts record id of a tree kind under m.Parent (nil: at the root). The write transaction is
// BEGIN IMMEDIATE, so it holds SQLite's single writer lock before the lease, cycle and depth
// checks read the tree: no other move (or any write) can slip in between check and write.
// A live lease on the tree group of the document, or of the new parent, must be presented
// with its token (m.LeaseToken, m.ParentLeaseToken): the token binds, not the holder's name.
func (db *DB) MoveRecord(ctx context.Context, kind store.Kind, id int64, m store.Move) (*store.UpdateResult, error) {
	p, err := db.Registry().PlanMove(ctx, kind, m)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("move %s %d", kind, id)
	t, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	var res *store.UpdateResult
	err = db.inTx(ctx, what, func(tx *tx) error {
		var err error
		res, err = db.Registry().RunMove(id, m, p, moveSteps{ctx, db, tx, kind, t})
		return err
	})
	if err != nil {
		return nil, mapErr(what, err)
	}
	return res, nil
}

// moveSteps are a move's reads and writes inside its transaction (store.MoveSteps). The
// transaction holds SQLite's one writer lock, so the tree needs no lock of its own.
type moveSteps struct {
	ctx   context.Context
	db    *DB
	tx    *tx
	kind  store.Kind // a tree kind
	table string     // its table, quoted
}

func (s moveSteps) LockTree() error { return nil }

func (s moveSteps) Ancestors(id int64) ([]int64, error) { return ancestors(s.ctx, s.tx, s.table, id) }

func (s moveSteps) Find(id int64) (*store.Record, error) {
	return s.db.findRecord(s.ctx, s.tx, s.kind, id)
}

func (s moveSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.ctx, s.tx, s.kind, id, groups, token)
}

func (s moveSteps) CheckMove(id, parent int64) error {
	return s.db.checkMove(s.ctx, s.tx, s.table, id, parent)
}

func (s moveSteps) Write(p *store.MovePlan, id int64, parent any) (*store.Record, error) {
	reg := s.db.Registry()
	rec, err := s.db.scanRecord(reg, s.kind, s.tx.QueryRowContext(s.ctx,
		`UPDATE `+s.table+` SET parent_id = ?, version = version + 1, updated_at = ?, updated_by = ?
		 WHERE id = ? RETURNING `+s.db.selectList(reg, s.kind),
		parent, formatTime(s.tx.now), p.Actor.Name, id))
	if err != nil {
		return nil, err
	}
	return rec, s.db.logWrite(s.ctx, s.tx, rec, store.EventMoved, p.Actor, p.Keep, []string{p.Field}, nil, nil)
}

// checkMove runs the cycle and depth checks of moving id under parent on the locked tree
// in table t (quoted).
func (db *DB) checkMove(ctx context.Context, tx *tx, t string, id, parent int64) error {
	up, err := ancestors(ctx, tx, t, parent)
	if err != nil {
		return err
	}
	if err := store.CheckMoveCycle(id, parent, up); err != nil {
		return err
	}
	down, err := deepestPath(ctx, tx, t, id)
	if err != nil {
		return err
	}
	return store.CheckMoveDepth(id, parent, up, down)
}

// checkNewChild checks that a new record of the tree kind kind may be created under parent.
func (db *DB) checkNewChild(ctx context.Context, tx *tx, kind store.Kind, parent int64) error {
	t, err := db.table(kind)
	if err != nil {
		return err
	}
	up, err := ancestors(ctx, tx, t, parent)
	if err != nil {
		return err
	}
	return store.CheckNewChild(parent, up)
}

// maxWalk bounds the recursive queries, so a damaged tree cannot make them loop forever.
const maxWalk = 64

// ancestorsOf returns record id of the tree kind and its ancestors (see ancestors), for a
// write's permission check (store.PathReader).
func (db *DB) ancestorsOf(ctx context.Context, q querier, kind store.Kind, id int64) ([]int64, error) {
	t, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	return ancestors(ctx, q, t, id)
}

// ancestors returns id and its ancestors in the tree table t (quoted), nearest first (id,
// its parent, ..., the root); empty when id does not exist.
func ancestors(ctx context.Context, q querier, t string, id int64) ([]int64, error) {
	rows, err := q.QueryContext(ctx, `WITH RECURSIVE up(id, parent_id, n) AS (
			SELECT id, parent_id, 1 FROM `+t+` WHERE id = ?
			UNION ALL
			SELECT d.id, d.parent_id, up.n + 1 FROM `+t+` d JOIN up ON d.id = up.parent_id WHERE up.n < ?
		) SELECT id FROM up ORDER BY n`, id, maxWalk)
	if err != nil {
		return nil, fmt.Errorf("ancestors of %d: %w", id, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var x int64
		if err := rows.Scan(&x); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// deepestPath returns the longest downward path from id (id first) to a leaf of its subtree
// in the tree table t (quoted).
func deepestPath(ctx context.Context, q querier, t string, id int64) ([]int64, error) {
	var path string
	err := q.QueryRowContext(ctx, `WITH RECURSIVE down(id, n, path) AS (
			SELECT id, 1, CAST(id AS TEXT) FROM `+t+` WHERE id = ?
			UNION ALL
			SELECT d.id, down.n + 1, down.path || ',' || d.id FROM `+t+` d JOIN down ON d.parent_id = down.id
			WHERE down.n < ?
		) SELECT path FROM down ORDER BY n DESC, id LIMIT 1`, id, maxWalk).Scan(&path)
	if err != nil {
		return nil, fmt.Errorf("subtree of %d: %w", id, err)
	}
	var out []int64
	for _, s := range strings.Split(path, ",") {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("subtree of %d: %w", id, err)
		}
		out = append(out, n)
	}
	return out, nil
}
