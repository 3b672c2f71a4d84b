package sqlite

import (
	"context"
	"fmt"
	"slices"

	"github.com/tandem-editor/tandem/store"
)

// DeleteRecord removes a record (with d.Subtree, also the documents below it) in one BEGIN
// IMMEDIATE transaction, leaving a tombstone in history and a deleted change per record. See
// store.Records for the order of the checks and the errors, store/delete.go for the rules.
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
	err = db.inTx(ctx, what, func(tx *tx) error {
		var err error
		res, err = db.deleteTx(ctx, tx, kind, id, d, actor)
		return err
	})
	if err != nil {
		return nil, mapErr(what, err)
	}
	return res, nil
}

func (db *DB) deleteTx(ctx context.Context, tx *tx, kind store.Kind, id int64, d store.Delete, actor store.Actor) (*store.DeleteResult, error) {
	t, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	var hash string
	if d.IdempotencyKey != "" {
		hash = store.DeleteRequestHash(kind, id, d)
		replay, err := db.checkUpdateKey(ctx, tx, d.IdempotencyKey, hash)
		if err != nil {
			return nil, err
		}
		if replay != nil {
			return replay.ReplayDelete(), nil
		}
	}
	onCopy, err := db.isCopy(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("read working copy: %w", err)
	}
	res, err := db.Registry().RunDelete(kind, id, d, actor, tx.now, deleteSteps{db, ctx, tx, kind, t, actor, onCopy})
	if err != nil {
		return nil, err
	}
	if d.IdempotencyKey != "" {
		if err := db.completeUpdateKey(ctx, tx, d.IdempotencyKey, hash, store.DeleteKeyResult(res), actor); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// deleteSteps are a delete's reads and writes in tx (store.DeleteSteps).
type deleteSteps struct {
	db    *DB
	ctx   context.Context
	tx    *tx
	kind  store.Kind
	table string
	actor store.Actor
	// onCopy says the store is a working copy: each record removed is queued in the outbox.
	onCopy bool
}

func (s deleteSteps) Ancestors(id int64) ([]int64, error) { return ancestors(s.ctx, s.tx, s.table, id) }

func (s deleteSteps) Find(id int64) (*store.Record, error) {
	return s.db.findRecord(s.ctx, s.tx, s.kind, id)
}

func (s deleteSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.ctx, s.tx, s.kind, id, groups, token)
}

func (s deleteSteps) Descendants(id int64) (map[int64]int64, error) {
	return descendants(s.ctx, s.tx, s.table, id)
}

func (s deleteSteps) Referrers(ref store.FieldOf, id int64, skip []int64, limit int) ([]int64, error) {
	return s.db.referrers(s.ctx, s.tx, ref, id, skip, limit)
}

func (s deleteSteps) Conflict(id, base int64) error {
	return s.db.conflict(s.ctx, s.tx, s.kind, id, base)
}

func (s deleteSteps) Remove(rec *store.Record, tomb store.HistoryRow) error {
	if err := insertHistoryRow(s.ctx, s.tx, rec.Kind, rec.ID, tomb); err != nil {
		return err
	}
	if _, err := s.tx.ExecContext(s.ctx, "DELETE FROM "+s.table+" WHERE id = ?", rec.ID); err != nil {
		return fmt.Errorf("delete %s %d: %w", rec.Kind, rec.ID, err)
	}
	if s.onCopy {
		if err := s.db.queueCopyDelete(s.ctx, s.tx, rec, s.actor); err != nil {
			return err
		}
	}
	return logRecordEvent(s.ctx, s.tx, rec.Kind, rec.ID, tomb, s.actor)
}

// descendants maps every record below id in the tree table t (quoted) to its parent.
func descendants(ctx context.Context, q querier, t string, id int64) (map[int64]int64, error) {
	rows, err := q.QueryContext(ctx, `WITH RECURSIVE down(id, parent_id, n) AS (
			SELECT id, parent_id, 1 FROM `+t+` WHERE parent_id = ?
			UNION ALL
			SELECT d.id, d.parent_id, down.n + 1 FROM `+t+` d JOIN down ON d.parent_id = down.id WHERE down.n < ?
		) SELECT id, parent_id FROM down`, id, maxWalk)
	if err != nil {
		return nil, fmt.Errorf("records below %d: %w", id, err)
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
func insertHistoryRow(ctx context.Context, tx *tx, kind store.Kind, id int64, h store.HistoryRow) error {
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot, event) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		string(kind), id, h.Version, h.Actor, formatTime(h.At), jsonText(h.Fields), string(h.Snapshot), string(h.Event)); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// logRecordEvent writes the change-log row of a delete or restore, which always keeps a
// history version.
func logRecordEvent(ctx context.Context, tx *tx, kind store.Kind, id int64, h store.HistoryRow, actor store.Actor) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO changes (event, kind, record_id, version, actor, role, fields, deltas, history, at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, '{}', 1, ?)`,
		string(h.Event), string(kind), id, h.Version, actor.Name, string(actor.Role), jsonText(h.Fields), formatTime(h.At))
	if err != nil {
		return fmt.Errorf("write change log: %w", err)
	}
	return nil
}

// RestoreRecord brings a deleted record back from its tombstone as the next version, in one
// BEGIN IMMEDIATE transaction. See store.Records for the errors.
func (db *DB) RestoreRecord(ctx context.Context, kind store.Kind, id int64, rq store.Restore) (*store.RestoreResult, error) {
	actor, err := db.Registry().CheckRestore(ctx, kind)
	if err != nil {
		return nil, err
	}
	var res *store.RestoreResult
	what := fmt.Sprintf("restore %s %d", kind, id)
	err = db.inTx(ctx, what, func(tx *tx) error {
		t, err := db.table(kind)
		if err != nil {
			return err
		}
		// A client opened before a schema change restores the columns it knows.
		if err := db.Registry().CheckFresh(kind, id, parentSteps{ctx, db, tx, kind}); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+" WHERE id = ?)", id).Scan(&exists); err != nil {
			return err
		}
		rows, err := queryHistoryOn(ctx, tx, "SELECT "+historyColumns+` FROM history
			WHERE kind = ? AND record_id = ? ORDER BY version DESC LIMIT 1`, string(kind), id)
		if err != nil {
			return err
		}
		var newest *store.HistoryRow
		if len(rows) == 1 {
			newest = &rows[0]
		}
		onCopy, err := db.isCopy(ctx, tx)
		if err != nil {
			return fmt.Errorf("read working copy: %w", err)
		}
		var pending int64 // the delete a restore on a working copy cancels
		if onCopy {
			if pending, err = db.copyRestore(ctx, tx, kind, id, exists); err != nil {
				return err
			}
		}
		plan, err := db.Registry().PlanRestore(kind, id, actor, exists, newest, func(p int64) (bool, error) {
			var ok bool
			err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+" WHERE id = ?)", p).Scan(&ok)
			return ok, err
		})
		if err != nil {
			return err
		}
		if pending != 0 && plan.Note != "" {
			// At the root here, under its parent on the source: the copy would differ from
			// the source with nothing in the outbox to say so.
			was, _ := db.Registry().DecodeSnapshot(kind, newest.Snapshot)
			return store.Errorf(store.EINVALID, "document %d was under document %v, which is deleted in this copy: restore document %v first, then document %d",
				id, was["parent_id"], was["parent_id"], id)
		}
		if plan.Parent != 0 {
			if err := db.Registry().CheckParent(parentSteps{ctx, db, tx, kind}, actor, kind, plan.Parent, rq.ParentLeaseToken); err != nil {
				return err
			}
		}
		for _, field := range sortedKeys(plan.Unique) {
			if err := db.checkUnique(ctx, tx, kind, id, field, plan.Unique[field]); err != nil {
				return err
			}
		}
		// A ref to a record deleted since: refused, as a save of it is.
		if err := db.Registry().CheckRefs(kind, plan.Values, func(k store.Kind, id int64) (bool, error) {
			return db.recordExists(ctx, tx, k, id)
		}); err != nil {
			return err
		}
		reg := db.Registry()
		q, args, folds, err := db.insertStatement(reg, kind, id, plan.Values, plan.Extra)
		if err != nil {
			return err
		}
		if pending != 0 {
			// The record comes back as the source still has it: no create in the outbox.
			if err := setApplying(ctx, tx, true); err != nil {
				return err
			}
		}
		rec, err := db.scanRecord(reg, kind, tx.QueryRowContext(ctx, q, append(args, plan.Version, formatTime(tx.now), actor.Name)...))
		if err != nil {
			return err
		}
		if pending != 0 {
			if err := db.cancelCopyDelete(ctx, tx, kind, id, pending); err != nil {
				return err
			}
		}
		if err := writeFolds(ctx, tx, reg, kind, id, folds); err != nil {
			return err
		}
		row, err := db.Registry().NewRestoredRow(rec, actor.Name, tx.now)
		if err != nil {
			return err
		}
		if err := insertHistoryRow(ctx, tx, kind, id, row); err != nil {
			return err
		}
		if err := logRecordEvent(ctx, tx, kind, id, row, actor); err != nil {
			return err
		}
		res = &store.RestoreResult{Record: rec, Note: plan.Note}
		return nil
	})
	if err != nil {
		return nil, mapErr(what, err)
	}
	return res, nil
}

// referrers returns up to limit ids of records of ref.Kind whose field ref.Field holds id, not
// counting those in skip, in id order.
func (db *DB) referrers(ctx context.Context, tx *tx, ref store.FieldOf, id int64, skip []int64, limit int) ([]int64, error) {
	t, err := db.table(ref.Kind)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT id FROM "+t+" WHERE "+quoteIdent(ref.Field.Name)+" = ? ORDER BY id", id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() && len(out) < limit {
		var rid int64
		if err := rows.Scan(&rid); err != nil {
			return nil, err
		}
		if !slices.Contains(skip, rid) {
			out = append(out, rid)
		}
	}
	return out, rows.Err()
}
