package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// DeleteRecord removes a record (with d.Subtree, also the documents below it) in one BEGIN
// IMMEDIATE transaction, leaving a tombstone in history and a deleted change per record. See
// store.Records for the order of the checks and the errors, store/delete.go for the rules.
func (db *DB) DeleteRecord(ctx context.Context, kind store.Kind, id int64, d store.Delete) (*store.DeleteResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := db.reg.CheckDelete(kind, actor, d); err != nil {
		return nil, err
	}
	if err := db.refuseDeleteOnCopy(ctx, "delete"); err != nil {
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
	t, err := table(kind)
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
	cur, err := db.findRecord(ctx, tx, kind, id)
	if err != nil {
		return nil, err
	}
	groups := db.reg.DeleteGroups(kind)
	if err := db.checkLeases(ctx, tx, kind, id, groups, d.LeaseToken); err != nil {
		return nil, err
	}
	below := map[int64]int64{}
	if kind == store.KindDocument {
		if below, err = descendants(ctx, tx, id); err != nil {
			return nil, err
		}
	}
	var children []int64
	for c, p := range below {
		if p == id {
			children = append(children, c)
		}
	}
	slices.Sort(children)
	stale, err := store.PlanDelete(cur, d, children)
	if err != nil {
		return nil, err
	}
	if stale {
		return nil, db.conflict(ctx, tx, kind, id, d.ExpectVersion)
	}
	order := store.DeleteOrder(id, below)
	for _, c := range order[:len(order)-1] {
		if err := db.checkLeases(ctx, tx, kind, c, groups, ""); err != nil {
			return nil, err
		}
	}
	res := &store.DeleteResult{}
	for _, did := range order {
		rec := cur
		if did != id {
			if rec, err = db.findRecord(ctx, tx, kind, did); err != nil {
				return nil, err
			}
		}
		tomb, err := db.reg.NewTombstone(rec, actor.Name, tx.now)
		if err != nil {
			return nil, err
		}
		if err := insertHistoryRow(ctx, tx, kind, did, tomb); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE id = ?", did); err != nil {
			return nil, fmt.Errorf("delete %s %d: %w", kind, did, err)
		}
		if err := logRecordEvent(ctx, tx, kind, did, tomb, actor); err != nil {
			return nil, err
		}
		ts := store.Tombstone{Kind: kind, ID: did, Version: tomb.Version, Title: rec.Title()}
		if did == id {
			res.Deleted = append([]store.Tombstone{ts}, res.Deleted...)
		} else {
			res.Deleted = append(res.Deleted, ts)
		}
	}
	if d.IdempotencyKey != "" {
		if err := db.completeUpdateKey(ctx, tx, d.IdempotencyKey, hash, store.DeleteKeyResult(res), actor); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// descendants maps every document below id to its parent.
func descendants(ctx context.Context, q querier, id int64) (map[int64]int64, error) {
	rows, err := q.QueryContext(ctx, `WITH RECURSIVE down(id, parent_id, n) AS (
			SELECT id, parent_id, 1 FROM documents WHERE parent_id = ?
			UNION ALL
			SELECT d.id, d.parent_id, down.n + 1 FROM documents d JOIN down ON d.parent_id = down.id WHERE down.n < ?
		) SELECT id, parent_id FROM down`, id, maxWalk)
	if err != nil {
		return nil, fmt.Errorf("documents below %d: %w", id, err)
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
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	t, err := table(kind)
	if err != nil {
		return nil, err
	}
	if err := store.CheckDeleter(kind, actor); err != nil {
		return nil, err
	}
	if err := db.refuseDeleteOnCopy(ctx, "restore"); err != nil {
		return nil, err
	}
	var res *store.RestoreResult
	what := fmt.Sprintf("restore %s %d", kind, id)
	err = db.inTx(ctx, what, func(tx *tx) error {
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
		plan, err := db.reg.PlanRestore(kind, id, exists, newest, func(p int64) (bool, error) {
			var ok bool
			err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM documents WHERE id = ?)", p).Scan(&ok)
			return ok, err
		})
		if err != nil {
			return err
		}
		if plan.Parent != 0 {
			if err := db.checkLeases(ctx, tx, store.KindDocument, plan.Parent, []string{db.reg.TreeGroup()}, rq.ParentLeaseToken); err != nil {
				return err
			}
			if err := db.checkNewChild(ctx, tx, plan.Parent); err != nil {
				return err
			}
		}
		if err := db.checkUnique(ctx, tx, kind, id, plan.SKU); err != nil {
			return err
		}
		want := plan.RestoredRecord(kind, id, actor.Name, tx.now)
		rec, err := db.insertRecord(ctx, tx, want)
		if err != nil {
			return err
		}
		row, err := db.reg.NewRestoredRow(rec, actor.Name, tx.now)
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

// insertRecord inserts r as it is, id and version included, with its sku key and folded
// columns, and returns the row as stored.
func (db *DB) insertRecord(ctx context.Context, tx *tx, r *store.Record) (*store.Record, error) {
	t, err := table(r.Kind)
	if err != nil {
		return nil, err
	}
	cols := []string{"id"}
	args := []any{r.ID}
	for _, f := range db.reg.Fields(r.Kind) {
		v, err := encodeColumn(f, r.Fields[f.Name])
		if err != nil {
			return nil, err
		}
		cols = append(cols, f.Name)
		args = append(args, v)
	}
	if r.Kind == store.KindProduct {
		sku, _ := r.Fields["sku"].(string)
		cols = append(cols, "sku_key")
		args = append(args, store.SKUKey(sku))
	}
	folds := store.Folds(r.Kind, r.Fields)
	for _, col := range sortedKeys(folds) {
		cols = append(cols, col)
		args = append(args, folds[col])
	}
	cols = append(cols, "version", "updated_at", "updated_by")
	args = append(args, r.Version, formatTime(r.UpdatedAt), r.UpdatedBy)
	q := "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") VALUES (" +
		strings.Repeat("?, ", len(cols)-1) + "?) RETURNING " + db.selectList(r.Kind)
	rec, err := db.scanRecord(r.Kind, tx.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.EINTERNAL, "insert %s %d returned no row", r.Kind, r.ID)
	}
	return rec, err
}

// refuseDeleteOnCopy refuses a delete or restore on a working copy: the outbox carries saves,
// moves and creates, not deletes, so one made here would never reach the source. Refusing
// keeps the promise that nothing done offline is lost silently.
func (db *DB) refuseDeleteOnCopy(ctx context.Context, what string) error {
	ok, err := db.isCopy(ctx, db.read)
	if err != nil {
		return mapErr("read working copy", err)
	}
	if ok {
		return store.Errorf(store.EINVALID, "%s is not available on a working copy (%s): sync does not carry it yet; %s on the source, then sync", what, db.path, what)
	}
	return nil
}
