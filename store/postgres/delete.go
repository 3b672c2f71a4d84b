package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// DeleteRecord removes a record (with d.Subtree, also the records below it in its tree) in
// one transaction, leaving a tombstone in history and a deleted change per record. A delete
// of a tree kind's record is a hierarchy change: it takes the tree lock first, so no create
// or move puts a record under one being deleted. See store.Records for the order of the checks and the
// errors, store/delete.go for the rules.
func (db *DB) DeleteRecord(ctx context.Context, kind store.Kind, id int64, d store.Delete) (*store.DeleteResult, error) {
	actor, err := store.WriterFrom(ctx, fmt.Sprintf("the delete of %s %d", kind, id))
	if err != nil {
		return nil, err
	}
	if err := db.Registry().CheckDelete(kind, actor, d); err != nil {
		return nil, err
	}
	var res *store.DeleteResult
	what := fmt.Sprintf("delete %s %d", kind, id)
	err = db.inTx(ctx, what, d.IdempotencyKey != "", func(tx pgx.Tx) (err error) {
		res, err = db.deleteTx(ctx, tx, kind, id, d, actor)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (db *DB) deleteTx(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64, d store.Delete, actor store.Actor) (*store.DeleteResult, error) {
	t, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	now := db.txNow()
	var hash string
	if d.IdempotencyKey != "" {
		hash = store.DeleteRequestHash(kind, id, d)
		tag, err := tx.Exec(ctx, claimKeySQL, store.ScopeAPI, d.IdempotencyKey, hash, actor.Name, store.DefaultCompletedTTL.Microseconds())
		if err != nil {
			if pgCode(err) == sqlstateUniqueViolation {
				return nil, errRetry
			}
			return nil, err
		}
		if tag.RowsAffected() == 0 {
			replay, err := db.takeSaveKey(ctx, tx, d.IdempotencyKey, hash, actor)
			if err != nil {
				return nil, err
			}
			if replay != nil {
				return replay.ReplayDelete(), nil
			}
		}
	}
	if db.Registry().Tree(kind) {
		if err := db.lockTree(ctx, tx); err != nil {
			return nil, err
		}
	}
	res, err := db.Registry().RunDelete(kind, id, d, actor, now, deleteSteps{db, ctx, tx, kind, t, actor, now})
	if err != nil {
		return nil, err
	}
	if d.IdempotencyKey != "" {
		if _, err := tx.Exec(ctx, `UPDATE idempotency SET result = $3 WHERE scope = $1 AND key = $2`,
			store.ScopeAPI, d.IdempotencyKey, store.DeleteKeyResult(res).Encode()); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// deleteSteps are a delete's reads and writes in tx (store.DeleteSteps).
type deleteSteps struct {
	db    *DB
	ctx   context.Context
	tx    pgx.Tx
	kind  store.Kind
	table string
	actor store.Actor
	now   time.Time
}

func (s deleteSteps) Ancestors(id int64) ([]int64, error) {
	return s.db.placedAncestors(s.ctx, s.tx, s.table, id)
}

func (s deleteSteps) Find(id int64) (*store.Record, error) {
	return s.db.findRecord(s.ctx, s.tx, s.kind, id, true)
}

func (s deleteSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.ctx, s.tx, s.kind, id, groups, token)
}

func (s deleteSteps) Descendants(id int64) (map[int64]int64, error) {
	return descendants(s.ctx, s.tx, s.kind, s.table, id)
}

func (s deleteSteps) Referrers(ref store.FieldOf, id int64, skip []int64, limit int) ([]int64, error) {
	t, err := s.db.table(ref.Kind)
	if err != nil {
		return nil, err
	}
	rows, _ := s.tx.Query(s.ctx, "SELECT id FROM "+t+" WHERE "+ident(ref.Field.Name)+" = $1 AND NOT (id = ANY($2)) ORDER BY id LIMIT $3",
		id, append([]int64{}, skip...), limit) // never a NULL array: NOT (id = ANY(NULL)) is never true
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

func (s deleteSteps) Conflict(id, base int64) error {
	return s.db.conflict(s.ctx, s.tx, s.kind, id, base)
}

func (s deleteSteps) Remove(rec *store.Record, tomb store.HistoryRow) error {
	if err := insertHistoryRow(s.ctx, s.tx, rec.Kind, rec.ID, tomb); err != nil {
		return err
	}
	if _, err := s.tx.Exec(s.ctx, "DELETE FROM "+s.table+" WHERE id = $1", rec.ID); err != nil {
		return fmt.Errorf("delete %s %d: %w", rec.Kind, rec.ID, err)
	}
	_, err := s.db.insertChange(s.ctx, s.tx, store.Change{Event: store.EventDeleted, Kind: rec.Kind, RecordID: rec.ID,
		Version: tomb.Version, Actor: s.actor.Name, Role: s.actor.Role, History: true, At: s.now})
	return err
}

// descendants maps every record below id in table (the tree kind's, quoted) to its parent.
func descendants(ctx context.Context, q querier, kind store.Kind, table string, id int64) (map[int64]int64, error) {
	rows, err := q.Query(ctx, `WITH RECURSIVE down (id, parent_id, depth) AS (
			SELECT id, parent_id, 1 FROM `+table+` WHERE parent_id = $1
			UNION ALL
			SELECT d.id, d.parent_id, down.depth + 1 FROM `+table+` d JOIN down ON d.parent_id = down.id
			WHERE down.depth < $2
		)
		SELECT id, parent_id FROM down`, id, walkLimit)
	if err != nil {
		return nil, fmt.Errorf("%s records below %d: %w", kind, id, err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var c, p int64
		if err := rows.Scan(&c, &p); err != nil {
			return nil, err
		}
		out[c] = p
	}
	return out, rows.Err()
}

// insertHistoryRow writes a snapshot history row with its event (tombstones and restores).
func insertHistoryRow(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64, h store.HistoryRow) error {
	_, err := tx.Exec(ctx, `INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot, event)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, string(kind), id, h.Version, h.Actor, h.At, h.Fields,
		jsonArg(h.Snapshot), string(h.Event))
	if err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// RestoreRecord brings a deleted record back from its tombstone as the next version, in one
// transaction. A restore of a tree kind's record takes the tree lock, as a create under a
// parent does. See
// store.Records for the errors.
func (db *DB) RestoreRecord(ctx context.Context, kind store.Kind, id int64, rq store.Restore) (*store.RestoreResult, error) {
	actor, err := db.Registry().CheckRestore(ctx, kind)
	if err != nil {
		return nil, err
	}
	var res *store.RestoreResult
	what := fmt.Sprintf("restore %s %d", kind, id)
	err = db.inTx(ctx, what, false, func(tx pgx.Tx) error {
		st := db.state()
		t, err := db.table(kind)
		if err != nil {
			return err
		}
		// A client opened before a schema change restores the columns it knows.
		if err := db.Registry().CheckFresh(kind, id, parentSteps{ctx, db, tx, kind}); err != nil {
			return err
		}
		now := db.txNow()
		if db.Registry().Tree(kind) {
			if err := db.lockTree(ctx, tx); err != nil {
				return err
			}
		}
		// Two restores of one record: the second waits on the first's lock of the tombstone,
		// then (READ COMMITTED: a new snapshot per statement) finds the record there. A delete
		// that commits between the two statements leaves the record gone but its tombstone
		// unseen by the first: read both again, so the restore meets the delete it races.
		var (
			exists bool
			newest *store.HistoryRow
		)
		for range 3 {
			rows, err := queryHistory(ctx, tx, "SELECT "+historyColumns+` FROM history
				WHERE kind = $1 AND record_id = $2 ORDER BY version DESC LIMIT 1 FOR UPDATE`, string(kind), id)
			if err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+" WHERE id = $1)", id).Scan(&exists); err != nil {
				return err
			}
			newest = nil
			if len(rows) == 1 {
				newest = &rows[0]
			}
			if exists || newest == nil || newest.Event == store.EventDeleted {
				break
			}
		}
		plan, err := db.Registry().PlanRestore(kind, id, actor, exists, newest, func(p int64) (bool, error) {
			var ok bool
			err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+" WHERE id = $1)", p).Scan(&ok)
			return ok, err
		})
		if err != nil {
			return err
		}
		if plan.Parent != 0 {
			if err := db.Registry().CheckParent(parentSteps{ctx, db, tx, kind}, actor, kind, plan.Parent, rq.ParentLeaseToken); err != nil {
				return err
			}
		}
		for _, field := range sortedNames(plan.Unique) {
			if err := db.checkUnique(ctx, tx, kind, id, field, plan.Unique[field]); err != nil {
				return err
			}
		}
		if err := db.Registry().CheckRefs(kind, plan.Values, func(k store.Kind, id int64) (bool, error) {
			return db.recordExists(ctx, tx, k, id)
		}); err != nil {
			return err
		}
		q, args, err := db.insertStatement(st, kind, id, plan.Values, plan.Extra)
		if err != nil {
			return err
		}
		rec, err := st.scanRecord(kind, tx.QueryRow(ctx, q, append(args, plan.Version, now, actor.Name)...))
		if err != nil {
			return err
		}
		row, err := db.Registry().NewRestoredRow(rec, actor.Name, now)
		if err != nil {
			return err
		}
		if err := insertHistoryRow(ctx, tx, kind, id, row); err != nil {
			return err
		}
		if _, err := db.insertChange(ctx, tx, store.Change{Event: store.EventRestored, Kind: kind, RecordID: id,
			Version: rec.Version, Actor: actor.Name, Role: actor.Role, Fields: row.Fields, History: true, At: now}); err != nil {
			return err
		}
		res = &store.RestoreResult{Record: rec, Note: plan.Note}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
