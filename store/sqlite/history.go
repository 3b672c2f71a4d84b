package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// recordEvents are the change events of the store's own record writes (as opposed to lease
// events, and to a working copy's "pulled" rows: the source's writes, which the copy's
// history and operation log leave out).
const recordEvents = "('created', 'saved', 'moved', 'deleted', 'restored')"

// insertChange writes a change-log row (logWrite, relativeSave).
const insertChange = `INSERT INTO changes (event, kind, record_id, version, actor, role, fields, deltas, history, at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// logWrite records a committed record write inside its transaction: a history version for an
// editor write that keeps history, and in every case a change-log row (the operation log when
// no history version was written). pre holds the values before the write of the fields
// store.Registry.PreImageFields named (nil when none were read).
func (db *DB) logWrite(ctx context.Context, tx *tx, rec *store.Record, ev store.Event, actor store.Actor, keep bool, fields []string, deltas map[string]int64, pre store.Values) error {
	history := keep && actor.Role == store.RoleEditor
	at := formatTime(tx.now)
	if fields == nil {
		fields = []string{}
	}
	if history {
		if err := db.insertVersion(ctx, tx, rec, actor, fields, pre); err != nil {
			return err
		}
	}
	if deltas == nil {
		deltas = map[string]int64{}
	}
	_, err := tx.ExecContext(ctx, insertChange,
		string(ev), string(rec.Kind), rec.ID, rec.Version, actor.Name, string(actor.Role),
		jsonText(fields), jsonText(deltas), history, at)
	if err != nil {
		return fmt.Errorf("write change log: %w", err)
	}
	return nil
}

// historyArgs returns the values of history's columns (kind, record_id, version, actor, at,
// fields, base, snapshot, delta) for h, the version of record id of kind: base and delta
// NULL for a snapshot, snapshot NULL for a delta.
func historyArgs(kind store.Kind, id int64, h store.HistoryRow) []any {
	var base, snap, delta any
	if h.IsSnapshot() {
		snap = string(h.Snapshot)
	} else {
		base, delta = h.Base, string(h.Delta)
	}
	return []any{string(kind), id, h.Version, h.Actor, formatTime(h.At), jsonText(h.Fields), base, snap, delta}
}

// insertVersion adds the history version of rec, stored as store.Registry.NewHistoryRow
// decides: a snapshot or a delta on top of the record's previous history version.
func (db *DB) insertVersion(ctx context.Context, tx *tx, rec *store.Record, actor store.Actor, fields []string, pre store.Values) error {
	tail, err := db.historyTail(ctx, tx, rec.Kind, rec.ID, rec.Version)
	if err != nil {
		return fmt.Errorf("read history tail: %w", err)
	}
	h, err := db.Registry().NewHistoryRow(rec, actor.HistoryName(), tx.now, fields, tail, pre)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO history (kind, record_id, version, actor, at, fields, base, snapshot, delta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		historyArgs(rec.Kind, rec.ID, h)...); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// historyTail reads where the record's history ends: its newest history version, the length
// and size of that version's chain, and the fields written since by writes without history
// (before version, the write being logged). octet_length reads a length without the text.
func (db *DB) historyTail(ctx context.Context, q querier, kind store.Kind, id, version int64) (store.HistoryTail, error) {
	var t store.HistoryTail
	var written sql.NullString
	err := q.QueryRowContext(ctx, `SELECT h.version, coalesce(h.base, h.version),
			(SELECT count(*) FROM history c WHERE c.kind = h.kind AND c.record_id = h.record_id
				AND c.version >= coalesce(h.base, h.version)),
			(SELECT coalesce(sum(octet_length(c.delta)), 0) FROM history c WHERE c.kind = h.kind
				AND c.record_id = h.record_id AND c.version > coalesce(h.base, h.version)),
			(SELECT group_concat(o.fields, ' ') FROM changes o WHERE o.kind = h.kind AND o.record_id = h.record_id
				AND o.version > h.version AND o.version < ? AND o.history = 0 AND o.event IN `+recordEvents+`)
		FROM history h WHERE h.kind = ? AND h.record_id = ? ORDER BY h.version DESC LIMIT 1`,
		version, string(kind), id).Scan(&t.Version, &t.Base, &t.Chain, &t.ChainBytes, &written)
	if errors.Is(err, sql.ErrNoRows) {
		return store.HistoryTail{}, nil
	}
	if err != nil {
		return t, err
	}
	// group_concat joined the JSON arrays with spaces: a stream of arrays to decode in turn.
	dec := json.NewDecoder(strings.NewReader(written.String))
	for dec.More() {
		var fs []string
		if err := dec.Decode(&fs); err != nil {
			return t, fmt.Errorf("fields of the operation log: %w", err)
		}
		t.Written = append(t.Written, fs...)
	}
	return t, nil
}

// logLease records a lease event in the change log.
func logLease(ctx context.Context, tx *tx, ev store.Event, l store.Lease, actor string, role store.Role) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO changes (event, kind, record_id, actor, role, grp, fence, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		string(ev), string(l.Kind), l.RecordID, actor, string(role), l.Group, l.Fence, formatTime(tx.now))
	if err != nil {
		return fmt.Errorf("write change log: %w", err)
	}
	return nil
}

const changeColumns = "id, event, kind, record_id, version, actor, role, fields, deltas, history, grp, fence, at"

func scanChange(sc scanner) (store.Change, error) {
	var (
		c              store.Change
		ev, kind, role string
		fields, deltas string
		at             string
	)
	if err := sc.Scan(&c.ID, &ev, &kind, &c.RecordID, &c.Version, &c.Actor, &role, &fields, &deltas,
		&c.History, &c.Group, &c.Fence, &at); err != nil {
		return c, err
	}
	c.Event, c.Kind, c.Role = store.Event(ev), store.Kind(kind), store.Role(role)
	if err := json.Unmarshal([]byte(fields), &c.Fields); err != nil {
		return c, fmt.Errorf("change %d fields: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(deltas), &c.Deltas); err != nil {
		return c, fmt.Errorf("change %d deltas: %w", c.ID, err)
	}
	if len(c.Deltas) == 0 {
		c.Deltas = nil
	}
	var err error
	c.At, err = parseTime(at)
	return c, err
}

func queryChanges(ctx context.Context, q querier, query string, args ...any) ([]store.Change, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Change
	for rows.Next() {
		c, err := scanChange(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// changesSince returns the record writes after version base, oldest first.
func (db *DB) changesSince(ctx context.Context, q querier, kind store.Kind, id, base int64) ([]store.Change, error) {
	return queryChanges(ctx, q, "SELECT "+changeColumns+` FROM changes
		WHERE kind = ? AND record_id = ? AND version > ? AND event IN `+recordEvents+` ORDER BY id`,
		string(kind), id, base)
}

const historyColumns = "version, actor, at, fields, base, snapshot, delta, event"

// queryHistory reads history rows, ascending by version.
func (db *DB) queryHistory(ctx context.Context, query string, args ...any) ([]store.HistoryRow, error) {
	return queryHistoryOn(ctx, db.read, query, args...)
}

// queryHistoryOn reads history rows with q (the read pool or a write transaction).
func queryHistoryOn(ctx context.Context, q querier, query string, args ...any) ([]store.HistoryRow, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.HistoryRow
	for rows.Next() {
		var (
			h               store.HistoryRow
			at, fields      string
			base            sql.NullInt64
			snap, deltaText sql.NullString
			event           string
		)
		if err := rows.Scan(&h.Version, &h.Actor, &at, &fields, &base, &snap, &deltaText, &event); err != nil {
			return nil, err
		}
		h.Event = store.Event(event)
		if h.At, err = parseTime(at); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(fields), &h.Fields); err != nil {
			return nil, fmt.Errorf("history version %d fields: %w", h.Version, err)
		}
		h.Base = base.Int64
		if snap.Valid {
			h.Snapshot = []byte(snap.String)
		}
		if deltaText.Valid {
			h.Delta = []byte(deltaText.String)
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
// read as store.Registry.ReadHistoryPage decides. EINVALID for a query that store.HistoryQuery.Check refuses.
func (db *DB) FindHistoryPage(ctx context.Context, kind store.Kind, id int64, q store.HistoryQuery) ([]store.Version, error) {
	if _, err := db.table(kind); err != nil {
		return nil, err // a kind the schema does not have, named with the kinds it has
	}
	what := fmt.Sprintf("history of %s %d", kind, id)
	heads := func(q store.HistoryQuery) ([]store.HistoryHead, error) {
		hs, err := queryHeads(ctx, db.read, `SELECT version, actor, at, fields, coalesce(base, 0), event FROM history
			WHERE kind = ? AND record_id = ? AND version > ? AND version < ? ORDER BY version DESC LIMIT ?`,
			string(kind), id, q.Since, q.Upper(), sqlLimit(q.Limit))
		return hs, mapErr(what, err)
	}
	rows := func(from, to int64) ([]store.HistoryRow, error) {
		rs, err := db.queryHistory(ctx, "SELECT "+historyColumns+` FROM history
			WHERE kind = ? AND record_id = ? AND version >= ? AND version <= ? ORDER BY version`,
			string(kind), id, from, to)
		return rs, mapErr(what, err)
	}
	return db.Registry().ReadHistoryPage(kind, id, q, heads, rows)
}

// sqlLimit is a LIMIT for n rows, 0 meaning all of them (SQLite reads -1 as no limit).
func sqlLimit(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// queryHeads reads history rows without their snapshots and deltas.
func queryHeads(ctx context.Context, q querier, query string, args ...any) ([]store.HistoryHead, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.HistoryHead
	for rows.Next() {
		var (
			h          store.HistoryHead
			at, fields string
			event      string
		)
		if err := rows.Scan(&h.Version, &h.Actor, &at, &fields, &h.Base, &event); err != nil {
			return nil, err
		}
		h.Event = store.Event(event)
		if h.At, err = parseTime(at); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(fields), &h.Fields); err != nil {
			return nil, fmt.Errorf("history version %d fields: %w", h.Version, err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// FindVersion returns history version v of a record, rebuilt from its chain.
func (db *DB) FindVersion(ctx context.Context, kind store.Kind, id, v int64) (*store.Version, error) {
	what := fmt.Sprintf("version %d of %s %d", v, kind, id)
	rows, err := db.queryHistory(ctx, "SELECT "+historyColumns+` FROM history
		WHERE kind = ? AND record_id = ? AND version <= ? AND version >= (SELECT coalesce(base, version) FROM history
			WHERE kind = ? AND record_id = ? AND version = ?)
		ORDER BY version`, string(kind), id, v, string(kind), id, v)
	if err != nil {
		return nil, mapErr(what, err)
	}
	return db.Registry().RebuildVersion(kind, id, v, rows)
}

// FindOps returns the operation log of a record (writes without a history version), newest first.
func (db *DB) FindOps(ctx context.Context, kind store.Kind, id int64) ([]store.Change, error) {
	return db.FindOpsPage(ctx, kind, id, store.HistoryQuery{})
}

// FindOpsPage returns the operation-log entries of a record whose versions q selects,
// newest first. EINVALID for a query that store.HistoryQuery.Check refuses.
func (db *DB) FindOpsPage(ctx context.Context, kind store.Kind, id int64, q store.HistoryQuery) ([]store.Change, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	out, err := queryChanges(ctx, db.read, "SELECT "+changeColumns+` FROM changes
		WHERE kind = ? AND record_id = ? AND history = 0 AND event IN `+recordEvents+`
			AND version > ? AND version < ? ORDER BY id DESC LIMIT ?`,
		string(kind), id, q.Since, q.Upper(), sqlLimit(q.Limit))
	if err != nil {
		return nil, mapErr(fmt.Sprintf("operation log of %s %d", kind, id), err)
	}
	return out, nil
}
