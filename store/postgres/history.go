package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// recordEvents are the change-log events that write a record (not lease events).
var recordEvents = []string{string(store.EventCreated), string(store.EventSaved), string(store.EventMoved)}

const changeColumns = "id, event, kind, record_id, version, actor, role, fields, deltas, history, grp, fence, at"

// insertVersion adds a history version with a full snapshot of r.
func (db *DB) insertVersion(ctx context.Context, tx pgx.Tx, r *store.Record, actor store.Actor, fields []string, now time.Time) error {
	snap, err := db.encodeSnapshot(r.Kind, r.Fields)
	if err != nil {
		return err
	}
	if fields == nil {
		fields = []string{}
	}
	_, err = tx.Exec(ctx, `INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, string(r.Kind), r.ID, r.Version, actor.Name, now, fields, snap)
	return err
}

// insertChange appends c to the change log and notifies the schema's channel, as the last
// step of a write transaction. The id comes from change_counter, whose row stays locked until
// commit: ids are therefore handed out in commit order, and a subscriber that has seen id n
// has seen every change below n. The lock is taken last and held only until COMMIT, so it
// cannot take part in a deadlock.
func (db *DB) insertChange(ctx context.Context, tx pgx.Tx, c store.Change) (int64, error) {
	var deltas []byte
	if len(c.Deltas) > 0 {
		deltas, _ = json.Marshal(c.Deltas)
	}
	fields := c.Fields
	if fields == nil {
		fields = []string{}
	}
	var id int64
	err := tx.QueryRow(ctx, `WITH n AS (
			UPDATE change_counter SET last_id = last_id + 1 RETURNING last_id
		), c AS (
			INSERT INTO changes (id, event, kind, record_id, version, actor, role, fields, deltas, history, grp, fence, at)
			SELECT last_id, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 FROM n
			RETURNING id
		)
		SELECT id, pg_notify($13, id::text) FROM c`,
		string(c.Event), string(c.Kind), c.RecordID, c.Version, c.Actor, string(c.Role), fields, deltas, c.History,
		c.Group, c.Fence, c.At, db.channel).Scan(&id, nil)
	return id, err
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
		WHERE kind = $1 AND record_id = $2 AND version > $3 AND event = ANY($4) ORDER BY id`,
		string(kind), id, base, recordEvents)
}

// FindHistory returns the history versions of a record, newest first.
func (db *DB) FindHistory(ctx context.Context, kind store.Kind, id int64) ([]store.Version, error) {
	if _, err := table(kind); err != nil {
		return nil, err
	}
	var out []store.Version
	err := db.read(ctx, fmt.Sprintf("history of %s %d", kind, id), func(q querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, `SELECT version, actor, at, fields, snapshot FROM history
			WHERE kind = $1 AND record_id = $2 ORDER BY version DESC`, string(kind), id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v := store.Version{Kind: kind, RecordID: id}
			var snap []byte
			if err := rows.Scan(&v.Version, &v.Actor, &v.At, &v.Fields, &snap); err != nil {
				return err
			}
			v.At = v.At.UTC()
			if v.Snapshot, err = db.decodeSnapshot(kind, snap); err != nil {
				return fmt.Errorf("version %d: %w", v.Version, err)
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}

// FindOps returns the operation log of a record: the writes that added no history version,
// newest first.
func (db *DB) FindOps(ctx context.Context, kind store.Kind, id int64) ([]store.Change, error) {
	if _, err := table(kind); err != nil {
		return nil, err
	}
	var out []store.Change
	err := db.read(ctx, fmt.Sprintf("operation log of %s %d", kind, id), func(q querier) (err error) {
		out, err = queryChanges(ctx, q, "SELECT "+changeColumns+` FROM changes
			WHERE kind = $1 AND record_id = $2 AND NOT history AND event = ANY($3) ORDER BY id DESC`,
			string(kind), id, recordEvents)
		return err
	})
	return out, err
}

// encodeSnapshot writes every field in tandem's JSON export form (money as "29.99", times as
// RFC 3339), so other programs can read history without knowing tandem's Go types.
func (db *DB) encodeSnapshot(kind store.Kind, vals store.Values) ([]byte, error) {
	out := make(map[string]any, len(vals))
	for _, f := range db.reg.Fields(kind) {
		out[f.Name] = f.Export(vals[f.Name])
	}
	return json.Marshal(out)
}

// decodeSnapshot reads a snapshot back into Go values without re-checking limits: a value
// that was valid when written stays readable when a registry file tightens a limit later.
func (db *DB) decodeSnapshot(kind store.Kind, data []byte) (store.Values, error) {
	raw := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	out := make(store.Values, len(raw))
	for _, f := range db.reg.Fields(kind) {
		x, ok := raw[f.Name]
		if !ok {
			out[f.Name] = f.Zero()
			continue
		}
		v, err := snapshotValue(f, x)
		if err != nil {
			return nil, fmt.Errorf("snapshot field %s: %w", f.Name, err)
		}
		out[f.Name] = v
	}
	return out, nil
}

func snapshotValue(f *store.Field, x any) (any, error) {
	if x == nil {
		return nil, nil
	}
	switch f.Type {
	case store.TypeString, store.TypeText, store.TypeEnum:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %T", x)
		}
		return s, nil
	case store.TypeInt, store.TypeRef:
		n, ok := x.(json.Number)
		if !ok {
			return nil, fmt.Errorf("want a number, got %T", x)
		}
		return strconv.ParseInt(n.String(), 10, 64)
	case store.TypeMoney:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("want an amount, got %T", x)
		}
		return store.ParseMoney(s)
	case store.TypeSet:
		items, ok := x.([]any)
		if !ok {
			return nil, fmt.Errorf("want an array, got %T", x)
		}
		ss := make([]string, 0, len(items))
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("want strings, got %T", it)
			}
			ss = append(ss, s)
		}
		return store.NormalizeSet(ss), nil
	case store.TypeTime:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("want a time, got %T", x)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC(), err
	}
	return nil, fmt.Errorf("unknown type %s", f.Type)
}
