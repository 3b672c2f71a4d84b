package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
)

var _ store.BulkUpdater = (*DB)(nil)

// A bulk update (store.BulkUpdater) in a batch, in a savepoint of its own, takes the
// leading saves of a call that are plain, all of one kind, and makes in a few round trips
// what UpdateRecord makes in about ten each:
//
//  1. one read of the records, locked FOR NO KEY UPDATE as a save's read locks its record,
//     of their lease rows (any, of any group: a record with one is left to UpdateRecord,
//     whose lease check decides) and of which of their keys the store holds;
//  2. in Go, each save decided as store.RunUpdate decides it (PlanUpdate); the first that
//     is not a plain write (a key held, a lease row, a stale base, nothing to change, a
//     unique field or a ref written, a limited actor, a schema newer than the client's)
//     ends the run;
//  3. one pipelined batch of the runs' history tails and UPDATEs (the search tables'
//     triggers fire for each, as for a save), then COPY of the history versions, the
//     changes (ids taken in order after the row locks, next_change_ids) and the keys.
//
// A problem the plan did not foresee (a statement that fails) rolls the savepoint back:
// the call saves none, and its saves go UpdateRecord's way.

// UpdateRecords saves the leading plain updates of ups in one write of the batch ctx
// carries (store.BulkUpdater). EINVALID without a batch of db.
func (db *DB) UpdateRecords(ctx context.Context, ups []store.RecordUpdate) ([]*store.UpdateResult, error) {
	b := batchOf(ctx, db)
	if b == nil {
		return nil, store.Errorf(store.EINVALID, "update records: not in a write batch")
	}
	st := db.state()
	reqs := st.reg.PlainUpdates(ctx, ups)
	if len(reqs) == 0 {
		return nil, nil
	}
	var saved []*store.UpdateResult
	err := b.savepoint(ctx, func(tx pgx.Tx) error {
		newer, err := st.reg.StoreSchemaNewer(parentSteps{ctx, db, tx, reqs[0].Kind})
		if err != nil || newer {
			return err
		}
		saved, err = db.bulkSave(ctx, tx, st, reqs)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, db.mapErr("update records", err)
		}
		// Nothing of the call stays: UpdateRecord saves, or refuses, each in its place.
		return nil, nil
	}
	return saved, nil
}

// bulkSave reads, decides and writes the leading plain saves of reqs (all of one kind), and
// returns their results.
func (db *DB) bulkSave(ctx context.Context, tx pgx.Tx, st *schemaState, reqs []*store.UpdateRequest) ([]*store.UpdateResult, error) {
	kind := reqs[0].Kind
	t, err := st.table(kind)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(reqs))
	var keys []string
	for i, p := range reqs {
		ids[i] = p.ID
		if k := p.Update.IdempotencyKey; k != "" {
			keys = append(keys, k)
		}
	}
	// 1. The records under their row locks, their lease rows and the keys held.
	rb := &pgx.Batch{}
	rb.Queue("SELECT "+st.selectList(kind)+" FROM "+t+" WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE", ids)
	rb.Queue("SELECT DISTINCT record_id FROM leases WHERE kind = $1 AND record_id = ANY($2)", string(kind), ids)
	rb.Queue(keysQuery, store.ScopeAPI, keys)
	br := tx.SendBatch(ctx, rb)
	cur := make(map[int64]*store.Record, len(reqs))
	rows, err := br.Query()
	if err == nil {
		for rows.Next() {
			r, err := st.scanRecord(kind, rows)
			if err != nil {
				rows.Close()
				_ = br.Close()
				return nil, err
			}
			cur[r.ID] = r
		}
		err = rows.Err()
	}
	var leased map[int64]bool
	var heldKeys map[string]bool
	if err == nil {
		leased, err = scanSet[int64](br)
	}
	if err == nil {
		heldKeys, err = scanSet[string](br)
	}
	if err = errors.Join(err, br.Close()); err != nil {
		return nil, fmt.Errorf("read the records saved: %w", err)
	}

	// 2. Each save decided as RunUpdate decides it, up to the first that is not plain.
	plans := st.reg.PlanPlainSaves(reqs, cur, leased, heldKeys)
	n := len(plans)
	if n == 0 {
		return nil, nil
	}
	reqs = reqs[:n]

	// 3. The history tails and the UPDATEs, pipelined; then the logs and keys by COPY.
	now := db.txNow()
	wb := &pgx.Batch{}
	for _, p := range reqs {
		if p.Keep {
			wb.Queue(historyTailSQL, string(kind), p.ID, cur[p.ID].Version+1, recordEvents)
		}
	}
	for i, p := range reqs {
		sql, args := updateStatement(st, t, kind, cur[p.ID], plans[i], now, p.Actor.Name)
		wb.Queue(sql, args...)
	}
	wb.Queue("SELECT clock_timestamp()") // a key's times are the database's, as a claim's
	br = tx.SendBatch(ctx, wb)
	tails := make([]store.HistoryTail, n)
	for i, p := range reqs {
		if !p.Keep {
			continue
		}
		if tails[i], err = scanHistoryTail(br.QueryRow()); err != nil {
			_ = br.Close()
			return nil, fmt.Errorf("read history tail: %w", err)
		}
	}
	out := make([]*store.UpdateResult, n)
	for i, p := range reqs {
		r, err := st.scanRecord(kind, br.QueryRow())
		if err != nil {
			_ = br.Close()
			return nil, fmt.Errorf("save %s %d: %w", kind, p.ID, err)
		}
		if r.Version != cur[p.ID].Version+1 {
			_ = br.Close()
			return nil, fmt.Errorf("save %s %d: wrote version %d, want %d", kind, p.ID, r.Version, cur[p.ID].Version+1)
		}
		out[i] = &store.UpdateResult{Record: r, Version: r.Version}
	}
	var clock time.Time
	if err := br.QueryRow().Scan(&clock); err != nil {
		_ = br.Close()
		return nil, err
	}
	if err := br.Close(); err != nil {
		return nil, err
	}
	if err := db.copySaveLogs(ctx, tx, reqs, plans, cur, tails, out, now, clock); err != nil {
		return nil, err
	}
	return out, nil
}

// scanSet reads the next result of br, one column of T, as a set.
func scanSet[T comparable](br pgx.BatchResults) (map[T]bool, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	vals, err := pgx.CollectRows(rows, pgx.RowTo[T])
	if err != nil {
		return nil, err
	}
	set := make(map[T]bool, len(vals))
	for _, v := range vals {
		set[v] = true
	}
	return set, nil
}

// updateStatement returns the UPDATE of plan on cur (in table t) and its arguments: the
// fields set, unique keys, folds and relative changes, the next version, the time and the
// writer, on the condition that the record is still at cur's version; it returns the record.
// A save (updateSteps.Write) and a bulk update both send it.
func updateStatement(st *schemaState, t string, kind store.Kind, cur *store.Record, plan *store.SavePlan, now time.Time, actor string) (string, []any) {
	var sets []string
	args := []any{cur.ID, cur.Version}
	next := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	for _, n := range sortedNames(plan.Set) {
		f, _ := st.reg.Field(kind, n)
		sets = append(sets, ident(n)+" = "+next(arg(f, plan.Set[n])))
	}
	for _, field := range sortedNames(plan.Keys) {
		sets = append(sets, ident(store.UniqueKeyColumn(field))+" = "+next(plan.Keys[field]))
	}
	for _, col := range sortedNames(plan.Folds) {
		sets = append(sets, ident(col)+" = "+next(plan.Folds[col]))
	}
	for _, n := range sortedNames(plan.Add) {
		sets = append(sets, ident(n)+" = "+ident(n)+" + "+next(plan.Add[n]))
	}
	sets = append(sets, "version = version + 1", "updated_at = "+next(now), "updated_by = "+next(actor))
	return "UPDATE " + t + " SET " + strings.Join(sets, ", ") + " WHERE id = $1 AND version = $2 RETURNING " + st.selectList(kind), args
}

// copySaveLogs loads the history versions (saves that keep history), the EventSaved
// changes, in order, and the completed keys of the saves reqs made (out), as
// updateSteps.Write and the key's claim write a save's.
func (db *DB) copySaveLogs(ctx context.Context, tx pgx.Tx, reqs []*store.UpdateRequest, plans []*store.SavePlan, cur map[int64]*store.Record,
	tails []store.HistoryTail, out []*store.UpdateResult, now, clock time.Time) error {
	reg := db.Registry()
	if slices.ContainsFunc(reqs, func(p *store.UpdateRequest) bool { return p.Keep }) {
		hist := lazyRows(len(reqs), func(i int) ([]any, error) {
			p, r := reqs[i], out[i].Record
			if !p.Keep {
				return nil, nil
			}
			pre := reg.PreImage(p.Kind, store.Update{Set: plans[i].Set}, cur[p.ID], p.Keep)
			h, err := reg.NewHistoryRow(r, p.Actor.HistoryName(), now, plans[i].FieldNames(), tails[i], pre)
			if err != nil {
				return nil, err
			}
			var base *int64
			var snap, delta []byte
			if h.IsSnapshot() {
				snap = h.Snapshot
			} else {
				base, delta = &h.Base, h.Delta
			}
			return []any{string(r.Kind), r.ID, h.Version, h.Actor, h.At, h.Fields, base, jsonArg(snap), jsonArg(delta)}, nil
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"history"}, []string{"kind", "record_id", "version", "actor", "at", "fields", "base", "snapshot", "delta"},
			hist); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
	}
	ids, err := changeIDs(ctx, tx, len(reqs))
	if err != nil {
		return err
	}
	changes := lazyRows(len(reqs), func(i int) ([]any, error) {
		p := reqs[i]
		return append([]any{ids[i]}, changeArgs(store.Change{Event: store.EventSaved, Kind: p.Kind, RecordID: p.ID, Version: out[i].Version,
			Actor: p.Actor.Name, Role: p.Actor.Role, Fields: plans[i].FieldNames(), History: p.Keep, At: now})...), nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"changes"}, []string{"id", "event", "kind", "record_id", "version", "actor", "role", "fields", "deltas", "history", "grp", "fence", "at"},
		changes); err != nil {
		return fmt.Errorf("write change log: %w", err)
	}
	if !slices.ContainsFunc(reqs, func(p *store.UpdateRequest) bool { return p.Update.IdempotencyKey != "" }) {
		return nil
	}
	keys := lazyRows(len(reqs), func(i int) ([]any, error) {
		p := reqs[i]
		if p.Update.IdempotencyKey == "" {
			return nil, nil
		}
		done := store.KeyResult{Kind: p.Kind, ID: p.ID, Version: out[i].Version}
		return []any{store.ScopeAPI, p.Update.IdempotencyKey, "COMPLETED", p.Hash, done.Encode(),
			p.Actor.Name, clock, clock.Add(store.DefaultCompletedTTL)}, nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"idempotency"}, []string{"scope", "key", "status", "request_hash", "result", "owner", "created_at", "expires_at"},
		keys); err != nil {
		return fmt.Errorf("record idempotency keys: %w", err)
	}
	return nil
}
