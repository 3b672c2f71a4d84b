package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// Tree moves are serialized by a transaction-scoped advisory lock per schema (DESIGN.md point
// 7): locking the moved row and the new parent is not enough, because moving A under a
// descendant of B while B moves under a descendant of A locks four different rows, both
// cycle checks pass, and the two commits form a cycle. With the advisory lock held, the
// WITH RECURSIVE checks see every earlier move committed (READ COMMITTED: each statement
// takes a fresh snapshot after the lock was granted).

// walkLimit stops a recursive walk in a damaged tree instead of running forever.
const walkLimit = 4 * store.MaxDepth

// lockTree takes this schema's hierarchy lock until the transaction ends. One lock serves
// every tree kind of the store: moves of different kinds never wait long for each other,
// and documents keep the key they always had.
func (db *DB) lockTree(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", db.treeKey)
	return err
}

// placedAncestors returns record id of the tree table (quoted) and its ancestors, for a
// write's permission check (store.PathReader), holding the tree lock shared until the
// transaction ends: no move (which holds it exclusively) changes where the record sits
// before the write commits. A transaction that holds it exclusively already gets it at once.
func (db *DB) placedAncestors(ctx context.Context, tx pgx.Tx, table string, id int64) ([]int64, error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock_shared($1)", db.treeKey); err != nil {
		return nil, err
	}
	return ancestors(ctx, tx, table, id)
}

// placedAncestorsOf is placedAncestors of a tree kind.
func (db *DB) placedAncestorsOf(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64) ([]int64, error) {
	t, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	return db.placedAncestors(ctx, tx, t, id)
}

// ancestors returns id and its ancestors in table (a tree kind's, quoted), nearest first
// (id, its parent, ..., the root); empty when id does not exist.
func ancestors(ctx context.Context, q querier, table string, id int64) ([]int64, error) {
	var path []int64
	err := q.QueryRow(ctx, `WITH RECURSIVE up (id, parent_id, depth) AS (
			SELECT id, parent_id, 1 FROM `+table+` WHERE id = $1
			UNION ALL
			SELECT d.id, d.parent_id, up.depth + 1 FROM `+table+` d JOIN up ON d.id = up.parent_id
			WHERE up.depth < $2
		)
		SELECT coalesce(array_agg(id ORDER BY depth), '{}') FROM up`, id, walkLimit).Scan(&path)
	return path, err
}

// deepestBelow returns the longest downward path in table starting at id (id first).
func deepestBelow(ctx context.Context, q querier, table string, id int64) ([]int64, error) {
	var path []int64
	err := q.QueryRow(ctx, `WITH RECURSIVE down (id, path) AS (
			SELECT id, ARRAY[id] FROM `+table+` WHERE id = $1
			UNION ALL
			SELECT d.id, down.path || d.id FROM `+table+` d JOIN down ON d.parent_id = down.id
			WHERE cardinality(down.path) < $2
		)
		SELECT path FROM down ORDER BY cardinality(path) DESC, id LIMIT 1`, id, walkLimit).Scan(&path)
	return path, err
}

// checkNewChild checks that a new record of the tree kind may be created under parent: the
// parent exists and is not at the deepest level. The caller holds the tree lock (lockTree).
func (db *DB) checkNewChild(ctx context.Context, tx pgx.Tx, kind store.Kind, parent int64) error {
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

// checkMove runs the cycle and depth checks of moving id of the tree kind under parent on
// the locked tree.
func (db *DB) checkMove(ctx context.Context, tx pgx.Tx, kind store.Kind, id, parent int64) error {
	t, err := db.table(kind)
	if err != nil {
		return err
	}
	up, err := ancestors(ctx, tx, t, parent)
	if err != nil {
		return err
	}
	if err := store.CheckMoveCycle(id, parent, up); err != nil {
		return err
	}
	down, err := deepestBelow(ctx, tx, t, id)
	if err != nil {
		return err
	}
	return store.CheckMoveDepth(id, parent, up, down)
}

// MoveRecord puts record id of a tree kind under m.Parent (nil: at the root): under the
// tree lock, the lease checks (a live lease on the tree group of the record or of the new
// parent must be presented with its token: the token binds, not the holder's name), nothing
// more when the record is there already, else the cycle and depth checks, the UPDATE, a
// history version for an editor (as any editor write) and the change-log entry. See
// store.Records for the error codes.
func (db *DB) MoveRecord(ctx context.Context, kind store.Kind, id int64, m store.Move) (*store.UpdateResult, error) {
	p, err := db.Registry().PlanMove(ctx, kind, m)
	if err != nil {
		return nil, err
	}
	var res *store.UpdateResult
	t, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	err = db.inTx(ctx, fmt.Sprintf("move %s %d", kind, id), false, func(tx pgx.Tx) error {
		var err error
		res, err = db.Registry().RunMove(id, m, p, moveSteps{ctx, db, tx, kind, t, db.txNow()})
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// moveSteps are a move's reads and writes inside its transaction (store.MoveSteps).
type moveSteps struct {
	ctx   context.Context
	db    *DB
	tx    pgx.Tx
	kind  store.Kind
	table string // the kind's, quoted
	now   time.Time
}

// LockTree takes the tree lock (see the top of this file).
func (s moveSteps) LockTree() error { return s.db.lockTree(s.ctx, s.tx) }

func (s moveSteps) Ancestors(id int64) ([]int64, error) {
	return s.db.placedAncestors(s.ctx, s.tx, s.table, id)
}

func (s moveSteps) Find(id int64) (*store.Record, error) {
	return s.db.findRecord(s.ctx, s.tx, s.kind, id, true)
}

func (s moveSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.ctx, s.tx, s.kind, id, groups, token)
}

func (s moveSteps) CheckMove(id, parent int64) error {
	return s.db.checkMove(s.ctx, s.tx, s.kind, id, parent)
}

func (s moveSteps) Write(p *store.MovePlan, id int64, parent any) (*store.Record, error) {
	ctx, tx := s.ctx, s.tx
	st := s.db.state()
	r, err := st.scanRecord(s.kind, tx.QueryRow(ctx, `UPDATE `+s.table+` SET parent_id = $2, version = version + 1,
		updated_at = $3, updated_by = $4 WHERE id = $1 RETURNING `+st.selectList(s.kind), id, parent, s.now, p.Actor.Name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.Errorf(store.ENOTFOUND, "%s %d not found", s.kind, id)
	}
	if err != nil {
		return nil, err
	}
	if p.Keep {
		if err := s.db.insertVersion(ctx, tx, r, p.Actor, []string{p.Field}, s.now, nil); err != nil {
			return nil, err
		}
	}
	_, err = s.db.insertChange(ctx, tx, store.Change{Event: store.EventMoved, Kind: s.kind, RecordID: id,
		Version: r.Version, Actor: p.Actor.Name, Role: p.Actor.Role, Fields: []string{p.Field}, History: p.Keep, At: s.now})
	return r, err
}
