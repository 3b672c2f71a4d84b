package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

var _ store.BulkUpdater = (*DB)(nil)

// A bulk update (store.BulkUpdater) in a batch takes the leading saves of a call that are
// plain, all of one kind, and makes them with a few statements for the run where
// UpdateRecord makes about ten each (and, on a batch's second run, a savepoint each):
//
//  1. one read of the records' versions and of the fields the saves name (as findFields
//     reads a save's), of their unreleased lease rows (a record with one is left to
//     UpdateRecord, whose lease check decides) and of which of their keys the store holds,
//     a few hundred records to a statement;
//  2. in Go, each save decided as store.RunUpdate decides it (PlanUpdate); the first that
//     is not a plain write (a key held, a lease row, a stale base, nothing to change, a
//     unique field or a ref written) ends the run;
//  3. the history tails of the saves that keep history, a statement for many records; an
//     UPDATE per record (from the write connection's statement cache: SQLite has no round
//     trips, so the statements saved are the others); the search folds of the written
//     fields into their side tables (whose triggers keep the FTS5 indexes), many records
//     to a statement as a batch writes its creates' folds; then the history versions, the
//     changes (in order) and the keys, many rows to an INSERT.
//
// The write runs as any write of the batch does (batch.savepoint): on the batch's first run
// a failure makes the batch run again; on the second, in a savepoint, it rolls the call back
// and leaves its saves to UpdateRecord.

// UpdateRecords saves the leading plain updates of ups in one write of the batch ctx
// carries (store.BulkUpdater). EINVALID without a batch of db; other errors are the
// store's write errors.
func (db *DB) UpdateRecords(ctx context.Context, ups []store.RecordUpdate) ([]*store.UpdateResult, error) {
	b := batchOf(ctx, db)
	if b == nil {
		return nil, store.Errorf(store.EINVALID, "update records: not in a write batch")
	}
	reg := db.Registry()
	reqs := reg.PlainUpdates(ctx, ups)
	if len(reqs) == 0 {
		return nil, nil
	}
	var saved []*store.UpdateResult
	err := b.savepoint(ctx, db, func(t *tx) error {
		saved = nil
		ok, err := db.bulkAllowed(ctx, t, reg, reqs[0].Kind)
		if err != nil || !ok {
			return err
		}
		saved, err = db.bulkSave(ctx, t, reg, reqs)
		return err
	})
	if err != nil {
		if ctx.Err() != nil || !b.savepoints {
			// The first run's failure runs the batch again, with savepoints.
			return nil, mapErr("update records", err)
		}
		// Rolled back: UpdateRecord saves, or refuses, each in its place.
		return nil, nil
	}
	return saved, nil
}

// bulkSave reads, decides and writes in t the leading plain saves of reqs (all of one
// kind), and returns their results.
func (db *DB) bulkSave(ctx context.Context, t *tx, reg *store.Registry, reqs []*store.UpdateRequest) ([]*store.UpdateResult, error) {
	kind := reqs[0].Kind
	ids := make([]any, len(reqs))
	var keys []any
	for i, p := range reqs {
		ids[i] = p.ID
		if k := p.Update.IdempotencyKey; k != "" {
			keys = append(keys, k)
		}
	}
	// 1. The records, their lease rows and the keys held.
	cur, err := db.readSaved(ctx, t, reg, reqs)
	if err != nil {
		return nil, fmt.Errorf("read the records saved: %w", err)
	}
	leased, err := presentAmong[int64](ctx, t, "SELECT record_id FROM leases WHERE kind = ? AND released = 0 AND record_id IN ", []any{string(kind)}, ids)
	if err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	held, err := presentAmong[string](ctx, t, "SELECT key FROM idempotency WHERE scope = ? AND key IN ", []any{store.ScopeAPI}, keys)
	if err != nil {
		return nil, fmt.Errorf("read idempotency keys: %w", err)
	}

	// 2. Each save decided as RunUpdate decides it, up to the first that is not plain.
	plans := reg.PlanPlainSaves(reqs, cur, leased, held)
	n := len(plans)
	if n == 0 {
		return nil, nil
	}
	reqs = reqs[:n]

	// 3. The history tails, the UPDATEs, the folds, then the logs and the keys.
	tails, err := db.historyTails(ctx, t, kind, reqs, cur)
	if err != nil {
		return nil, fmt.Errorf("read history tails: %w", err)
	}
	out := make([]*store.UpdateResult, n)
	for i, p := range reqs {
		q, args, err := db.updateStatement(reg, kind, cur[p.ID], plans[i], t, p.Actor.Name)
		if err != nil {
			return nil, err
		}
		r, err := db.scanRecord(reg, kind, t.QueryRowContext(ctx, q, args...))
		if err != nil {
			return nil, fmt.Errorf("save %s %d: %w", kind, p.ID, err)
		}
		out[i] = &store.UpdateResult{Record: r, Version: r.Version}
	}
	for i, p := range reqs {
		if len(plans[i].Folds) > 0 {
			t.batch.folds = append(t.batch.folds, pendingFolds{reg, kind, p.ID, plans[i].Folds})
		}
	}
	if err := t.batch.flushFolds(ctx); err != nil {
		return nil, err
	}
	if err := db.saveLogs(ctx, t, reg, reqs, plans, cur, tails, out); err != nil {
		return nil, err
	}
	return out, nil
}

// readSaved reads the records of reqs (all of one kind) as findFields reads a save's: the
// version and the fields the saves name, a few hundred records to a statement. A record
// that does not exist is not in the map.
func (db *DB) readSaved(ctx context.Context, t *tx, reg *store.Registry, reqs []*store.UpdateRequest) (map[int64]*store.Record, error) {
	kind := reqs[0].Kind
	tbl, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range reqs {
		for _, name := range p.Update.FieldNames() {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	fields := make([]*store.Field, len(names))
	cols := "id, version"
	for i, name := range names {
		if fields[i], err = reg.Field(kind, name); err != nil {
			return nil, err
		}
		cols += ", " + quoteIdent(name)
	}
	cur := make(map[int64]*store.Record, len(reqs))
	for left := reqs; len(left) > 0; {
		k := min(len(left), bulkLookup)
		args := make([]any, k)
		for i, p := range left[:k] {
			args[i] = p.ID
		}
		rows, err := t.QueryContext(ctx, "SELECT "+cols+" FROM "+tbl+" WHERE id IN ("+placeholders(k)+")", args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			r := &store.Record{Kind: kind, Fields: make(store.Values, len(names))}
			raw := make([]any, len(names))
			dest := []any{&r.ID, &r.Version}
			for i := range raw {
				dest = append(dest, &raw[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, err
			}
			for i, f := range fields {
				if r.Fields[f.Name], err = decodeColumn(f, raw[i]); err != nil {
					rows.Close()
					return nil, fmt.Errorf("%s %d: %w", kind, r.ID, err)
				}
			}
			cur[r.ID] = r
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		left = left[k:]
	}
	return cur, nil
}

// keepsVersion reports whether the save p writes a history version, as logWrite decides.
func keepsVersion(p *store.UpdateRequest) bool {
	return p.Keep && p.Actor.Role == store.RoleEditor
}

// tailChunk is how many records' history tails one statement reads at most: a power of two
// (the statement cache holds a few sizes), two arguments a record.
const tailChunk = 256

// historyTails returns the history tails (as historyTail reads one) of the saves of reqs
// that write a history version, each before the version cur's record has next; the others'
// are empty. A statement reads many records' tails.
func (db *DB) historyTails(ctx context.Context, t *tx, kind store.Kind, reqs []*store.UpdateRequest, cur map[int64]*store.Record) ([]store.HistoryTail, error) {
	tails := make([]store.HistoryTail, len(reqs))
	var at []int // the saves whose tails are read
	for i, p := range reqs {
		if keepsVersion(p) {
			at = append(at, i)
		}
	}
	for len(at) > 0 {
		n := 1 << (bits.Len(uint(min(len(at), tailChunk))) - 1)
		args := make([]any, 0, 2*n+1)
		byID := make(map[int64]int, n)
		for _, i := range at[:n] {
			id := reqs[i].ID
			args = append(args, id, cur[id].Version+1)
			byID[id] = i
		}
		args = append(args, string(kind))
		// historyTail's query, for each record of w: w.v is the version being logged.
		rows, err := t.QueryContext(ctx, `WITH w(id, v) AS (VALUES `+rowsOf(n, 2)+`)
			SELECT h.record_id, h.version, coalesce(h.base, h.version),
				(SELECT count(*) FROM history c WHERE c.kind = h.kind AND c.record_id = h.record_id
					AND c.version >= coalesce(h.base, h.version)),
				(SELECT coalesce(sum(octet_length(c.delta)), 0) FROM history c WHERE c.kind = h.kind
					AND c.record_id = h.record_id AND c.version > coalesce(h.base, h.version)),
				(SELECT group_concat(o.fields, ' ') FROM changes o WHERE o.kind = h.kind AND o.record_id = h.record_id
					AND o.version > h.version AND o.version < w.v AND o.history = 0 AND o.event IN `+recordEvents+`)
			FROM w JOIN history h ON h.kind = ? AND h.record_id = w.id
				AND h.version = (SELECT max(m.version) FROM history m WHERE m.kind = h.kind AND m.record_id = w.id)`,
			args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var (
				id      int64
				tl      store.HistoryTail
				written sql.NullString
			)
			if err := rows.Scan(&id, &tl.Version, &tl.Base, &tl.Chain, &tl.ChainBytes, &written); err != nil {
				rows.Close()
				return nil, err
			}
			if written.Valid {
				// group_concat joined the JSON arrays with spaces: a stream of arrays.
				dec := json.NewDecoder(strings.NewReader(written.String))
				for dec.More() {
					var fs []string
					if err := dec.Decode(&fs); err != nil {
						rows.Close()
						return nil, fmt.Errorf("fields of the operation log: %w", err)
					}
					tl.Written = append(tl.Written, fs...)
				}
			}
			tails[byID[id]] = tl
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		at = at[n:]
	}
	return tails, nil
}

// updateStatement returns the UPDATE of plan on cur, RETURNING the row, and its arguments,
// as updateSteps.Write makes it for a save of absolute changes.
func (db *DB) updateStatement(reg *store.Registry, kind store.Kind, cur *store.Record, plan *store.SavePlan, t *tx, actor string) (string, []any, error) {
	tbl, err := db.table(kind)
	if err != nil {
		return "", nil, err
	}
	var q strings.Builder
	args := make([]any, 0, len(plan.Set)+4)
	q.WriteString("UPDATE " + tbl + " SET ")
	for _, name := range sortedKeys(plan.Set) {
		f, err := reg.Field(kind, name)
		if err != nil {
			return "", nil, err
		}
		v, err := encodeColumn(f, plan.Set[name])
		if err != nil {
			return "", nil, err
		}
		q.WriteString(quoteIdent(name) + " = ?, ")
		args = append(args, v)
	}
	q.WriteString("version = version + 1, updated_at = ?, updated_by = ? WHERE id = ? AND version = ? RETURNING " + db.selectList(reg, kind))
	args = append(args, formatTime(t.now), actor, cur.ID, cur.Version)
	return q.String(), args, nil
}

// saveLogs writes the history versions (saves that keep history), the EventSaved changes,
// in order, and the completed keys of the saves reqs made (out), as logWrite and
// completeUpdateKey write a save's, many rows to a statement.
func (db *DB) saveLogs(ctx context.Context, t *tx, reg *store.Registry, reqs []*store.UpdateRequest, plans []*store.SavePlan,
	cur map[int64]*store.Record, tails []store.HistoryTail, out []*store.UpdateResult) error {
	at := formatTime(t.now)
	noDeltas := jsonText(map[string]int64{})
	var hist, changes, keys []any
	for i, p := range reqs {
		r, fields := out[i].Record, plans[i].FieldNames()
		if fields == nil {
			fields = []string{}
		}
		history := keepsVersion(p)
		if history {
			pre := reg.PreImage(p.Kind, store.Update{Set: plans[i].Set}, cur[p.ID], p.Keep)
			h, err := reg.NewHistoryRow(r, p.Actor.HistoryName(), t.now, fields, tails[i], pre)
			if err != nil {
				return err
			}
			hist = append(hist, historyArgs(r.Kind, r.ID, h)...)
		}
		changes = append(changes, string(store.EventSaved), string(r.Kind), r.ID, r.Version, p.Actor.Name,
			string(p.Actor.Role), jsonText(fields), noDeltas, history, at)
	}
	if err := execRows(ctx, t, historyInsert, 9, hist); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	if err := execRows(ctx, t, changesInsert, 10, changes); err != nil {
		return fmt.Errorf("write change log: %w", err)
	}
	if !slices.ContainsFunc(reqs, func(p *store.UpdateRequest) bool { return p.Update.IdempotencyKey != "" }) {
		return nil
	}
	now, err := t.clock(ctx)
	if err != nil {
		return err
	}
	created, expires := formatTime(now), formatTime(now.Add(store.DefaultCompletedTTL))
	for i, p := range reqs {
		if k := p.Update.IdempotencyKey; k != "" {
			done := store.KeyResult{Kind: p.Kind, ID: p.ID, Version: out[i].Version}
			keys = append(keys, store.ScopeAPI, k, "COMPLETED", p.Hash, done.Encode(), p.Actor.Name, created, expires)
		}
	}
	if err := execRows(ctx, t, keysInsert, 8, keys); err != nil {
		return fmt.Errorf("record idempotency keys: %w", err)
	}
	return nil
}
