package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// DeleteRecord removes a record (with d.Subtree, also the documents below it) in one
// transaction, leaving a tombstone in history and a deleted change per record. A document
// delete is a hierarchy change: it takes the tree lock first, so no create or move puts a
// document under one being deleted. See store.Records for the order of the checks and the
// errors, store/delete.go for the rules.
func (db *DB) DeleteRecord(ctx context.Context, kind store.Kind, id int64, d store.Delete) (*store.DeleteResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := db.reg.CheckDelete(kind, actor, d); err != nil {
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
	t, err := table(kind)
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
	if kind == store.KindDocument {
		if err := db.lockTree(ctx, tx); err != nil {
			return nil, err
		}
	}
	cur, err := db.findRecord(ctx, tx, kind, id, true)
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
			if rec, err = db.findRecord(ctx, tx, kind, did, true); err != nil {
				return nil, err
			}
		}
		tomb, err := db.reg.NewTombstone(rec, actor.Name, now)
		if err != nil {
			return nil, err
		}
		if err := insertHistoryRow(ctx, tx, kind, did, tomb); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM "+t+" WHERE id = $1", did); err != nil {
			return nil, fmt.Errorf("delete %s %d: %w", kind, did, err)
		}
		if _, err := db.insertChange(ctx, tx, store.Change{Event: store.EventDeleted, Kind: kind, RecordID: did,
			Version: tomb.Version, Actor: actor.Name, Role: actor.Role, History: true, At: now}); err != nil {
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
		if _, err := tx.Exec(ctx, `UPDATE idempotency SET result = $3 WHERE scope = $1 AND key = $2`,
			store.ScopeAPI, d.IdempotencyKey, store.DeleteKeyResult(res).Encode()); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// descendants maps every document below id to its parent.
func descendants(ctx context.Context, q querier, id int64) (map[int64]int64, error) {
	rows, err := q.Query(ctx, `WITH RECURSIVE down (id, parent_id, depth) AS (
			SELECT id, parent_id, 1 FROM documents WHERE parent_id = $1
			UNION ALL
			SELECT d.id, d.parent_id, down.depth + 1 FROM documents d JOIN down ON d.parent_id = down.id
			WHERE down.depth < $2
		)
		SELECT id, parent_id FROM down`, id, walkLimit)
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
// transaction. A document restore takes the tree lock, as a create under a parent does. See
// store.Records for the errors.
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
	var res *store.RestoreResult
	what := fmt.Sprintf("restore %s %d", kind, id)
	err = db.inTx(ctx, what, false, func(tx pgx.Tx) error {
		now := db.txNow()
		if kind == store.KindDocument {
			if err := db.lockTree(ctx, tx); err != nil {
				return err
			}
		}
		// Two restores of one record: the second waits on the first's lock of the tombstone,
		// then (READ COMMITTED: a new snapshot per statement) finds the record there.
		rows, err := queryHistory(ctx, tx, "SELECT "+historyColumns+` FROM history
			WHERE kind = $1 AND record_id = $2 ORDER BY version DESC LIMIT 1 FOR UPDATE`, string(kind), id)
		if err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+" WHERE id = $1)", id).Scan(&exists); err != nil {
			return err
		}
		var newest *store.HistoryRow
		if len(rows) == 1 {
			newest = &rows[0]
		}
		plan, err := db.reg.PlanRestore(kind, id, exists, newest, func(p int64) (bool, error) {
			var ok bool
			err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM documents WHERE id = $1)", p).Scan(&ok)
			return ok, err
		})
		if err != nil {
			return err
		}
		if plan.Parent != 0 {
			if err := db.checkNewChild(ctx, tx, plan.Parent); err != nil {
				return err
			}
			if err := db.checkLeases(ctx, tx, store.KindDocument, plan.Parent, []string{db.reg.TreeGroup()}, rq.ParentLeaseToken); err != nil {
				return err
			}
		}
		if err := db.checkUnique(ctx, tx, kind, id, plan.SKU); err != nil {
			return err
		}
		rec, err := db.insertRecord(ctx, tx, plan.RestoredRecord(kind, id, actor.Name, now))
		if err != nil {
			return err
		}
		row, err := db.reg.NewRestoredRow(rec, actor.Name, now)
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

// insertRecord inserts r as it is, id and version included, with its sku key and folded
// columns, and returns the row as stored.
func (db *DB) insertRecord(ctx context.Context, tx pgx.Tx, r *store.Record) (*store.Record, error) {
	t, err := table(r.Kind)
	if err != nil {
		return nil, err
	}
	cols := []string{"id"}
	args := []any{r.ID}
	add := func(col string, v any) {
		cols = append(cols, col)
		args = append(args, v)
	}
	for _, f := range db.reg.Fields(r.Kind) {
		add(ident(f.Name), arg(f, r.Fields[f.Name]))
	}
	if r.Kind == store.KindProduct {
		sku, _ := r.Fields["sku"].(string)
		add("sku_key", store.SKUKey(sku))
	}
	folds := store.Folds(r.Kind, r.Fields)
	for _, col := range sortedNames(folds) {
		add(ident(col), folds[col])
	}
	add("version", r.Version)
	add("updated_at", r.UpdatedAt)
	add("updated_by", r.UpdatedBy)
	ph := make([]string, len(cols))
	for i := range ph {
		ph[i] = "$" + strconv.Itoa(i+1)
	}
	sql := "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(ph, ", ") +
		") RETURNING " + db.selectList(r.Kind)
	rec, err := db.scanRecord(r.Kind, tx.QueryRow(ctx, sql, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.Errorf(store.EINTERNAL, "insert %s %d returned no row", r.Kind, r.ID)
	}
	return rec, err
}
