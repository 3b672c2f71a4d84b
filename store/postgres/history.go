package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// recordEvents are the change-log events that write a record (not lease events).
var recordEvents = func() []string {
	var out []string
	for _, e := range store.RecordEvents {
		out = append(out, string(e))
	}
	return out
}()

const changeColumns = "id, event, kind, record_id, version, actor, role, fields, deltas, history, grp, fence, at"

// insertVersion adds the history version of r, stored as store.Registry.NewHistoryRow decides:
// a snapshot or a delta on top of the record's previous history version. pre holds the values
// before the save of the fields store.Registry.PreImageFields named (nil when none were read).
func (db *DB) insertVersion(ctx context.Context, tx pgx.Tx, r *store.Record, actor store.Actor, fields []string, now time.Time, pre store.Values) error {
	tail, err := db.historyTail(ctx, tx, r.Kind, r.ID, r.Version)
	if err != nil {
		return fmt.Errorf("read history tail: %w", err)
	}
	h, err := db.Registry().NewHistoryRow(r, actor.HistoryName(), now, fields, tail, pre)
	if err != nil {
		return err
	}
	var base *int64
	var snap, delta []byte // nil is NULL
	if h.IsSnapshot() {
		snap = h.Snapshot
	} else {
		base, delta = &h.Base, h.Delta
	}
	_, err = tx.Exec(ctx, `INSERT INTO history (kind, record_id, version, actor, at, fields, base, snapshot, delta)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, string(r.Kind), r.ID, h.Version, h.Actor, h.At, h.Fields, base,
		jsonArg(snap), jsonArg(delta))
	return err
}

// jsonArg passes JSON bytes to a jsonb column, nil as NULL.
func jsonArg(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// historyTail reads where the record's history ends: its newest history version, the length
// and size of that version's chain (pg_column_size: as stored, without reading the values),
// and the fields written since by writes without history (before version, the write being
// logged).
func (db *DB) historyTail(ctx context.Context, q querier, kind store.Kind, id, version int64) (store.HistoryTail, error) {
	return scanHistoryTail(q.QueryRow(ctx, historyTailSQL, string(kind), id, version, recordEvents))
}

// historyTailSQL reads a record's history tail (historyTail): kind, id, the version being
// written, recordEvents.
const historyTailSQL = `SELECT h.version, coalesce(h.base, h.version),
			(SELECT count(*) FROM history c WHERE c.kind = h.kind AND c.record_id = h.record_id
				AND c.version >= coalesce(h.base, h.version)),
			(SELECT coalesce(sum(pg_column_size(c.delta)), 0) FROM history c WHERE c.kind = h.kind
				AND c.record_id = h.record_id AND c.version > coalesce(h.base, h.version)),
			array(SELECT DISTINCT unnest(o.fields) FROM changes o WHERE o.kind = h.kind AND o.record_id = h.record_id
				AND o.version > h.version AND o.version < $3 AND NOT o.history AND o.event = ANY($4))
		FROM history h WHERE h.kind = $1 AND h.record_id = $2 ORDER BY h.version DESC LIMIT 1`

// scanHistoryTail scans row of historyTailSQL; a record without history has an empty tail.
func scanHistoryTail(row pgx.Row) (store.HistoryTail, error) {
	var t store.HistoryTail
	err := row.Scan(&t.Version, &t.Base, &t.Chain, &t.ChainBytes, &t.Written)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.HistoryTail{}, nil
	}
	return t, err
}

// insertChange appends c to the change log as a step of a write transaction and returns its
// id. The id is next_change_id()'s sequence value (see feed.go for why readers may rely on
// it): take it last, after the write it logs holds its row locks, so that a later write of
// the same record or lease always gets a higher id. There is no NOTIFY here: a NOTIFY makes
// every committing transaction of the server take one lock in turn, so subscribers are woken
// after the commit instead (DB.committed).
func (db *DB) insertChange(ctx context.Context, tx pgx.Tx, c store.Change) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, insertChangeSQL+" RETURNING id", changeArgs(c)...).Scan(&id)
	return id, err
}

// insertChangeSQL appends a change row; its id comes from the column default. A save queues
// it in a batch after the UPDATE that holds the record's row lock (see insertChange).
const insertChangeSQL = `INSERT INTO changes (event, kind, record_id, version, actor, role, fields, deltas, history, grp, fence, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

// changeArgs returns the arguments of insertChangeSQL for c.
func changeArgs(c store.Change) []any {
	var deltas []byte
	if len(c.Deltas) > 0 {
		deltas, _ = json.Marshal(c.Deltas)
	}
	fields := c.Fields
	if fields == nil {
		fields = []string{}
	}
	return []any{string(c.Event), string(c.Kind), c.RecordID, c.Version, c.Actor, string(c.Role), fields, deltas, c.History,
		c.Group, c.Fence, c.At}
}

func scanChange(row scanner) (store.Change, error) {
	var c store.Change
	var event, kind, role string
	var deltas []byte
	err := row.Scan(&c.ID, &event, &kind, &c.RecordID, &c.Version, &c.Actor, &role, &c.Fields, &deltas, &c.History,
		&c.Group, &c.Fence, &c.At)
	if err != nil {
		return c, err
	}
	c.Event, c.Kind, c.Role = store.Event(event), store.Kind(kind), store.Role(role)
	c.At = c.At.UTC()
	if len(c.Fields) == 0 {
		c.Fields = nil
	}
	if len(deltas) > 0 {
		if err := json.Unmarshal(deltas, &c.Deltas); err != nil {
			return c, fmt.Errorf("change %d: deltas: %w", c.ID, err)
		}
	}
	return c, nil
}

func queryChanges(ctx context.Context, q querier, sql string, args ...any) ([]store.Change, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Change, error) { return scanChange(row) })
	if len(out) == 0 {
		out = nil // as a read of no rows answers everywhere else
	}
	return out, err
}

// changesSince returns the record writes after version base, oldest first.
func (db *DB) changesSince(ctx context.Context, q querier, kind store.Kind, id, base int64) ([]store.Change, error) {
	return queryChanges(ctx, q, "SELECT "+changeColumns+` FROM changes
		WHERE kind = $1 AND record_id = $2 AND version > $3 AND event = ANY($4) ORDER BY id`,
		string(kind), id, base, recordEvents)
}

const historyColumns = "version, actor, at, fields, base, snapshot, delta, event"

// queryHistory reads history rows, ascending by version.
func queryHistory(ctx context.Context, q querier, sql string, args ...any) ([]store.HistoryRow, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.HistoryRow
	for rows.Next() {
		var h store.HistoryRow
		var base *int64
		var event string
		if err := rows.Scan(&h.Version, &h.Actor, &h.At, &h.Fields, &base, &h.Snapshot, &h.Delta, &event); err != nil {
			return nil, err
		}
		h.Event = store.Event(event)
		h.At = h.At.UTC()
		if base != nil {
			h.Base = *base
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// FindHistory returns every history version of a record, newest first, with snapshots.
func (db *DB) FindHistory(ctx context.Context, kind store.Kind, id int64) ([]store.Version, error) {
	return db.FindHistoryPage(ctx, kind, id, store.HistoryQuery{Snapshots: true})
}

// FindHistoryPage returns the history versions of a record that q selects, newest first,
// read as store.Registry.ReadHistoryPage decides. EINVALID for an unknown kind or a query
// that store.HistoryQuery.Check refuses.
func (db *DB) FindHistoryPage(ctx context.Context, kind store.Kind, id int64, q store.HistoryQuery) ([]store.Version, error) {
	if _, err := db.table(kind); err != nil {
		return nil, err
	}
	what := fmt.Sprintf("history of %s %d", kind, id)
	heads := func(q store.HistoryQuery) (hs []store.HistoryHead, err error) {
		err = db.read(ctx, what, func(qr querier) (err error) {
			hs, err = queryHeads(ctx, qr, `SELECT version, actor, at, fields, coalesce(base, 0), event FROM history
				WHERE kind = $1 AND record_id = $2 AND version > $3 AND version < $4 ORDER BY version DESC LIMIT $5`,
				string(kind), id, q.Since, q.Upper(), pgLimit(q.Limit))
			return err
		})
		return hs, err
	}
	rows := func(from, to int64) (rs []store.HistoryRow, err error) {
		err = db.read(ctx, what, func(qr querier) (err error) {
			rs, err = queryHistory(ctx, qr, "SELECT "+historyColumns+` FROM history
				WHERE kind = $1 AND record_id = $2 AND version >= $3 AND version <= $4 ORDER BY version`,
				string(kind), id, from, to)
			return err
		})
		return rs, err
	}
	return db.Registry().ReadHistoryPage(kind, id, q, heads, rows)
}

// pgLimit is a LIMIT for n rows, 0 meaning all of them (LIMIT NULL reads every row).
func pgLimit(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

// queryHeads reads history rows without their snapshots and deltas.
func queryHeads(ctx context.Context, q querier, sql string, args ...any) ([]store.HistoryHead, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.HistoryHead
	for rows.Next() {
		var h store.HistoryHead
		var event string
		if err := rows.Scan(&h.Version, &h.Actor, &h.At, &h.Fields, &h.Base, &event); err != nil {
			return nil, err
		}
		h.Event = store.Event(event)
		h.At = h.At.UTC()
		out = append(out, h)
	}
	return out, rows.Err()
}

// FindVersion returns history version v of a record, rebuilt from its chain.
func (db *DB) FindVersion(ctx context.Context, kind store.Kind, id, v int64) (*store.Version, error) {
	if _, err := db.table(kind); err != nil {
		return nil, err
	}
	var rows []store.HistoryRow
	err := db.read(ctx, fmt.Sprintf("version %d of %s %d", v, kind, id), func(q querier) (err error) {
		rows, err = queryHistory(ctx, q, "SELECT "+historyColumns+` FROM history
			WHERE kind = $1 AND record_id = $2 AND version <= $3 AND version >= (SELECT coalesce(base, version)
				FROM history WHERE kind = $1 AND record_id = $2 AND version = $3)
			ORDER BY version`, string(kind), id, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return db.Registry().RebuildVersion(kind, id, v, rows)
}

// FindOps returns the operation log of a record: the writes that added no history version,
// newest first.
func (db *DB) FindOps(ctx context.Context, kind store.Kind, id int64) ([]store.Change, error) {
	return db.FindOpsPage(ctx, kind, id, store.HistoryQuery{})
}

// FindOpsPage returns the operation-log entries of a record whose versions q selects,
// newest first. EINVALID for an unknown kind or a query that store.HistoryQuery.Check refuses.
func (db *DB) FindOpsPage(ctx context.Context, kind store.Kind, id int64, q store.HistoryQuery) ([]store.Change, error) {
	if _, err := db.table(kind); err != nil {
		return nil, err
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	var out []store.Change
	err := db.read(ctx, fmt.Sprintf("operation log of %s %d", kind, id), func(qr querier) (err error) {
		out, err = queryChanges(ctx, qr, "SELECT "+changeColumns+` FROM changes
			WHERE kind = $1 AND record_id = $2 AND NOT history AND event = ANY($3)
				AND version > $4 AND version < $5 ORDER BY id DESC LIMIT $6`,
			string(kind), id, recordEvents, q.Since, q.Upper(), pgLimit(q.Limit))
		return err
	})
	return out, err
}
