package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
)

var _ store.BulkCreator = (*DB)(nil)

// A bulk create (store.BulkCreator) in a batch, in a savepoint of its own: the leading
// records of a call that need no read of their own (no id asked for, no parent) are planned
// as CreateRecord plans them (Registry.PlanBulk) and checked set-wise (their keys, unique
// values and refs, a statement each for the run, the refs' records held FOR KEY SHARE as a
// create's are); then their ids are taken from the kind's sequence in order, as one create
// after the other takes them, and the rows are loaded with COPY: the records (read back in
// one statement, as the database holds them), their history versions (a new id has no
// history tail), their changes (whose ids, from the column's default, follow the rows'
// order) and their keys. The first record a check refuses ends the run: the caller creates
// it with CreateRecord, which refuses it in its usual words (or creates it).

// CreateRecords creates the leading records of recs in one write of the batch ctx carries
// (store.BulkCreator). EINVALID without a batch of db.
func (db *DB) CreateRecords(ctx context.Context, recs []store.NewRecord) ([]*store.Record, error) {
	b := batchOf(ctx, db)
	if b == nil {
		return nil, store.Errorf(store.EINVALID, "create records: not in a write batch")
	}
	st := db.state()
	plans := st.reg.PlanBulk(ctx, recs)
	if len(plans) == 0 {
		return nil, nil
	}
	var created []*store.Record
	err := b.savepoint(ctx, func(tx pgx.Tx) error {
		newer, err := st.reg.StoreSchemaNewer(parentSteps{ctx, db, tx, plans[0].Kind})
		if err != nil || newer {
			return err
		}
		created, err = store.CreateInRuns(plans, func(run []*store.CreatePlan) ([]*store.Record, error) {
			n, err := db.bulkChecked(ctx, tx, st.reg, run)
			if err != nil {
				return nil, err
			}
			return db.bulkInsert(ctx, tx, st, run[:n])
		})
		return err
	})
	if err != nil {
		return nil, db.mapErr("create records", err)
	}
	return created, nil
}

// bulkChecked returns how many of the leading plans (all of one kind) pass the checks a
// create makes in its transaction, made set-wise: the key not held, each unique value free
// in the table and among the plans before, each ref to an existing record. It is 0 when
// the kind's unique keys wait to be refolded (checkUnique refolds them first).
func (db *DB) bulkChecked(ctx context.Context, tx pgx.Tx, reg *store.Registry, plans []*store.CreatePlan) (int, error) {
	kind := plans[0].Kind
	keys := make([]string, 0, len(plans))
	for _, p := range plans {
		if p.Key != "" {
			keys = append(keys, p.Key)
		}
	}
	held, err := presentAmong[string](ctx, tx, keysQuery, store.ScopeAPI, keys)
	if err != nil {
		return 0, fmt.Errorf("read idempotency keys: %w", err)
	}
	n := store.FirstTaken(plans, held, store.KeyOf)
	if n == 0 {
		return 0, nil
	}
	if len(reg.UniqueFields(kind)) > 0 {
		var queued bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM outside_refold WHERE kind = $1)", string(kind)).Scan(&queued); err != nil {
			return 0, err
		}
		if queued {
			return 0, nil
		}
	}
	t, err := db.table(kind)
	if err != nil {
		return 0, err
	}
	for _, f := range reg.UniqueFields(kind) {
		col := ident(store.UniqueKeyColumn(f.Name))
		vals := make([]string, n)
		for i, p := range plans[:n] {
			vals[i] = store.SKUKey(p.Unique[f.Name])
		}
		held, err := presentAmong[string](ctx, tx, "SELECT "+col+" FROM "+t+" WHERE "+col+" = ANY($1)", vals)
		if err != nil {
			return 0, fmt.Errorf("read unique %s: %w", f.Name, err)
		}
		if n = store.FirstTaken(plans[:n], held, store.UniqueKeyOf(f.Name)); n == 0 {
			return 0, nil
		}
	}
	found := map[store.Kind]map[int64]bool{}
	for k, ids := range reg.RefTargets(plans[:n]) {
		rt, err := db.table(k)
		if err != nil {
			return 0, err
		}
		if found[k], err = presentAmong[int64](ctx, tx, "SELECT id FROM "+rt+" WHERE id = ANY($1) FOR KEY SHARE", ids); err != nil {
			return 0, fmt.Errorf("read %ss: %w", k, err)
		}
	}
	return reg.FirstMissingRef(plans[:n], found), nil
}

// presentAmong returns the values of type T the query with args finds.
func presentAmong[T comparable](ctx context.Context, q querier, query string, args ...any) (map[T]bool, error) {
	found := map[T]bool{}
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		found[v] = true
	}
	return found, rows.Err()
}

// bulkInsert writes the records plans describe (all of one kind, checked) with the next
// ids of the kind's sequence, their history versions, changes and keys, and returns the
// records.
func (db *DB) bulkInsert(ctx context.Context, tx pgx.Tx, st *schemaState, plans []*store.CreatePlan) ([]*store.Record, error) {
	if len(plans) == 0 {
		return nil, nil
	}
	kind := plans[0].Kind
	name, err := st.reg.Table(kind)
	if err != nil {
		return nil, err
	}
	ids, clock, err := nextIDs(ctx, tx, ident(name), len(plans))
	if err != nil {
		return nil, err
	}
	now := db.txNow()
	cols, rows := recordRows(st.reg, kind, ids, plans, now)
	// The search tables' triggers are off for the COPY alone (loadSetting): the writes
	// after it in the transaction (a batch's next rows) are the triggers' again.
	folded := len(st.reg.FoldedFields(kind)) > 0
	if folded {
		if _, err := tx.Exec(ctx, "SELECT set_config($1, 'on', true)", loadSetting); err != nil {
			return nil, fmt.Errorf("load %ss: %w", kind, err)
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{name}, cols, pgx.CopyFromRows(rows)); err != nil {
		return nil, fmt.Errorf("load %ss: %w", kind, err)
	}
	if folded {
		if _, err := tx.Exec(ctx, "SELECT set_config($1, 'off', true)", loadSetting); err != nil {
			return nil, fmt.Errorf("load %ss: %w", kind, err)
		}
		if err := copySearch(ctx, tx, st.reg, kind, ids, plans); err != nil {
			return nil, err
		}
	}
	recs, err := db.readBack(ctx, tx, st, kind, ids)
	if err != nil {
		return nil, err
	}
	if err := db.copyLogs(ctx, tx, recs, plans, now); err != nil {
		return nil, err
	}
	if err := copyKeys(ctx, tx, recs, plans, clock); err != nil {
		return nil, err
	}
	return recs, nil
}

// nextIDs takes n ids from the sequence of table t, in the order creates one after the
// other would, and reads the database clock (a key's times are the database's).
func nextIDs(ctx context.Context, tx pgx.Tx, t string, n int) ([]int64, time.Time, error) {
	// The sequence is looked up once, not per row: pg_get_serial_sequence reads the catalog
	// on every call, which took twice as long as the nextval calls themselves.
	rows, err := tx.Query(ctx, "SELECT nextval(s.seq), clock_timestamp() FROM (SELECT pg_get_serial_sequence($1, 'id')::regclass AS seq) s, generate_series(1, $2)", t, n)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("take ids: %w", err)
	}
	ids := make([]int64, 0, n)
	var clock time.Time
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id, &clock); err != nil {
			rows.Close()
			return nil, time.Time{}, fmt.Errorf("take ids: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("take ids: %w", err)
	}
	slices.Sort(ids)
	return ids, clock, nil
}

// recordRows returns the columns and the rows of the records plans describe, with ids, at
// version 1, written at now: the columns insertStatement writes.
func recordRows(reg *store.Registry, kind store.Kind, ids []int64, plans []*store.CreatePlan, now time.Time) ([]string, [][]any) {
	fields := reg.Fields(kind)
	cols := []string{"id"}
	for _, f := range fields {
		cols = append(cols, f.Name)
	}
	for _, c := range plans[0].Extra {
		cols = append(cols, c.Name)
	}
	cols = append(cols, "version", "updated_at", "updated_by")
	rows := make([][]any, len(plans))
	for i, p := range plans {
		row := make([]any, 0, len(cols))
		row = append(row, ids[i])
		for _, f := range fields {
			row = append(row, arg(f, p.Values[f.Name]))
		}
		for _, c := range p.Extra {
			row = append(row, c.Value)
		}
		rows[i] = append(row, int64(1), now, p.Actor.Name)
	}
	return cols, rows
}

// readBack reads the records of kind with ids, in the order of ids.
func (db *DB) readBack(ctx context.Context, tx pgx.Tx, st *schemaState, kind store.Kind, ids []int64) ([]*store.Record, error) {
	t, err := st.table(kind)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, "SELECT "+st.selectList(kind)+" FROM "+t+" WHERE id = ANY($1)", ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[int64]*store.Record, len(ids))
	for rows.Next() {
		r, err := st.scanRecord(kind, rows)
		if err != nil {
			return nil, err
		}
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*store.Record, len(ids))
	for i, id := range ids {
		if out[i] = byID[id]; out[i] == nil {
			return nil, fmt.Errorf("create %s %d: not found after its load", kind, id)
		}
	}
	return out, nil
}

// copyLogs loads the history versions (creates that keep history) and the EventCreated
// changes of recs, in order, as Insert writes a create's. The rows are made as each COPY
// sends them (lazyRows).
func (db *DB) copyLogs(ctx context.Context, tx pgx.Tx, recs []*store.Record, plans []*store.CreatePlan, now time.Time) error {
	written := func(p *store.CreatePlan) []string {
		if p.Written == nil {
			return []string{}
		}
		return p.Written
	}
	if slices.ContainsFunc(plans, func(p *store.CreatePlan) bool { return p.Keep }) {
		hist := lazyRows(len(recs), func(i int) ([]any, error) {
			r, p := recs[i], plans[i]
			if !p.Keep {
				return nil, nil
			}
			h, err := db.Registry().NewHistoryRow(r, p.Actor.HistoryName(), now, written(p), store.HistoryTail{}, nil)
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
	ids, err := changeIDs(ctx, tx, len(recs))
	if err != nil {
		return err
	}
	changes := lazyRows(len(recs), func(i int) ([]any, error) {
		r, p := recs[i], plans[i]
		return append([]any{ids[i]}, changeArgs(store.Change{Event: store.EventCreated, Kind: r.Kind, RecordID: r.ID, Version: r.Version,
			Actor: p.Actor.Name, Role: p.Actor.Role, Fields: p.Written, History: p.Keep, At: now})...), nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"changes"}, []string{"id", "event", "kind", "record_id", "version", "actor", "role", "fields", "deltas", "history", "grp", "fence", "at"},
		changes); err != nil {
		return fmt.Errorf("write change log: %w", err)
	}
	return nil
}

// changeIDs takes n change ids in order, as n change rows taking theirs from the column's
// default one after the other would (next_change_ids, migration 0015: the change log's
// writer lock first, see feed.go), in one call instead of a function call per row.
func changeIDs(ctx context.Context, tx pgx.Tx, n int) ([]int64, error) {
	rows, err := tx.Query(ctx, "SELECT id FROM next_change_ids($1) AS id", n)
	if err != nil {
		return nil, fmt.Errorf("take change ids: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("take change ids: %w", err)
	}
	if len(ids) != n {
		return nil, fmt.Errorf("take change ids: %d ids for %d changes", len(ids), n)
	}
	slices.Sort(ids)
	return ids, nil
}

// copyKeys loads the keys of plans as COMPLETED with the records created, at clock (the
// database's), as a create's claim and result write one.
func copyKeys(ctx context.Context, tx pgx.Tx, recs []*store.Record, plans []*store.CreatePlan, clock time.Time) error {
	if !slices.ContainsFunc(plans, func(p *store.CreatePlan) bool { return p.Key != "" }) {
		return nil
	}
	rows := lazyRows(len(plans), func(i int) ([]any, error) {
		p := plans[i]
		if p.Key == "" {
			return nil, nil
		}
		return []any{store.ScopeAPI, p.Key, "COMPLETED", p.Hash, store.CreatedResult(recs[i]).Encode(),
			p.Actor.Name, clock, clock.Add(store.DefaultCompletedTTL)}, nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"idempotency"}, []string{"scope", "key", "status", "request_hash", "result", "owner", "created_at", "expires_at"},
		rows); err != nil {
		return fmt.Errorf("record idempotency keys: %w", err)
	}
	return nil
}

// lazyRows returns the COPY source of the rows row makes of 0 … n-1, in order, each made
// as the COPY sends it (row returns nil for an index without a row): pgx encodes a COPY's
// rows on a goroutine of its own while the server inserts those sent before, so making
// them there (a history version's JSON snapshot, a key's encoded result) overlaps the
// server's work instead of coming before it. An error of row ends the COPY with it.
func lazyRows(n int, row func(i int) ([]any, error)) pgx.CopyFromSource {
	i := 0
	return pgx.CopyFromFunc(func() ([]any, error) {
		for ; i < n; i++ {
			r, err := row(i)
			if err != nil || r != nil {
				i++
				return r, err
			}
		}
		return nil, nil
	})
}
