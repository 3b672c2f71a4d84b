package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tandem-editor/tandem/store"
)

// recordEvents are the change events that write a record (as opposed to lease events).
const recordEvents = "('created', 'saved', 'moved')"

// logWrite records a committed record write inside its transaction: a history version for an
// editor write that keeps history, and in every case a change-log row (the operation log when
// no history version was written).
func (db *DB) logWrite(ctx context.Context, tx *tx, rec *store.Record, ev store.Event, actor store.Actor, keep bool, fields []string, deltas map[string]int64) error {
	history := keep && actor.Role == store.RoleEditor
	at := formatTime(tx.now)
	if fields == nil {
		fields = []string{}
	}
	if history {
		snap, err := db.encodeSnapshot(rec)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			string(rec.Kind), rec.ID, rec.Version, actor.Name, at, jsonText(fields), snap); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
	}
	if deltas == nil {
		deltas = map[string]int64{}
	}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO changes (event, kind, record_id, version, actor, role, fields, deltas, history, at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(ev), string(rec.Kind), rec.ID, rec.Version, actor.Name, string(actor.Role),
		jsonText(fields), jsonText(deltas), history, at)
	if err != nil {
		return fmt.Errorf("write change log: %w", err)
	}
	return nil
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

func queryChanges(ctx context.Context, q queryer, query string, args ...any) ([]store.Change, error) {
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
func (db *DB) changesSince(ctx context.Context, q queryer, kind store.Kind, id, base int64) ([]store.Change, error) {
	return queryChanges(ctx, q, "SELECT "+changeColumns+` FROM changes
		WHERE kind = ? AND record_id = ? AND version > ? AND event IN `+recordEvents+` ORDER BY id`,
		string(kind), id, base)
}

// FindHistory returns the history versions of a record, newest first.
func (db *DB) FindHistory(ctx context.Context, kind store.Kind, id int64) ([]store.Version, error) {
	what := fmt.Sprintf("history of %s %d", kind, id)
	rows, err := db.read.QueryContext(ctx, `SELECT version, actor, at, fields, snapshot FROM history
		WHERE kind = ? AND record_id = ? ORDER BY version DESC`, string(kind), id)
	if err != nil {
		return nil, mapErr(what, err)
	}
	defer rows.Close()
	var out []store.Version
	for rows.Next() {
		v := store.Version{Kind: kind, RecordID: id}
		var at, fields, snap string
		if err := rows.Scan(&v.Version, &v.Actor, &at, &fields, &snap); err != nil {
			return nil, mapErr(what, err)
		}
		if v.At, err = parseTime(at); err != nil {
			return nil, mapErr(what, err)
		}
		if err := json.Unmarshal([]byte(fields), &v.Fields); err != nil {
			return nil, mapErr(what, err)
		}
		if v.Snapshot, err = db.decodeSnapshot(kind, snap); err != nil {
			return nil, mapErr(what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(what, err)
	}
	return out, nil
}

// FindOps returns the operation log of a record (writes without a history version), newest first.
func (db *DB) FindOps(ctx context.Context, kind store.Kind, id int64) ([]store.Change, error) {
	out, err := queryChanges(ctx, db.read, "SELECT "+changeColumns+` FROM changes
		WHERE kind = ? AND record_id = ? AND history = 0 AND event IN `+recordEvents+` ORDER BY id DESC`,
		string(kind), id)
	if err != nil {
		return nil, mapErr(fmt.Sprintf("operation log of %s %d", kind, id), err)
	}
	return out, nil
}
