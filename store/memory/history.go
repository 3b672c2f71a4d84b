package memory

import (
	"context"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// historyEntry is one stored history row of a record.
type historyEntry struct {
	kind store.Kind
	id   int64
	row  store.HistoryRow
}

// addVersion stores the history version of r as the real stores do (a snapshot or a delta,
// as store.Registry.NewHistoryRow decides). pre holds the values before the save of the
// fields store.Registry.PreImageFields named.
func (db *DB) addVersion(r *store.Record, actor string, at time.Time, fields []string, pre store.Values) error {
	h, err := db.Registry().NewHistoryRow(r, actor, at, fields, db.historyTail(r.Kind, r.ID, r.Version), pre)
	if err != nil {
		return err
	}
	db.history = append(db.history, historyEntry{kind: r.Kind, id: r.ID, row: h})
	return nil
}

// historyTail is what a real store reads before writing history version version.
func (db *DB) historyTail(kind store.Kind, id, version int64) store.HistoryTail {
	var t store.HistoryTail
	for i := len(db.history) - 1; i >= 0; i-- {
		h := db.history[i]
		if h.kind != kind || h.id != id {
			continue
		}
		if t.Version == 0 {
			t.Version, t.Base = h.row.Version, h.row.ChainBase()
		}
		if h.row.Version < t.Base {
			break
		}
		t.Chain++
		t.ChainBytes += len(h.row.Delta)
	}
	for _, c := range db.changes {
		if c.Kind == kind && c.RecordID == id && isRecordEvent(c.Event) && !c.History && c.Version > t.Version && c.Version < version {
			t.Written = append(t.Written, c.Fields...)
		}
	}
	return t
}

// historyRows returns the stored history rows of a record with from <= version <= to,
// ascending.
func (db *DB) historyRows(kind store.Kind, id, from, to int64) []store.HistoryRow {
	var out []store.HistoryRow
	for _, h := range db.history {
		if h.kind == kind && h.id == id && h.row.Version >= from && h.row.Version <= to {
			out = append(out, h.row)
		}
	}
	return out
}

// FindHistory returns every history version of a record, newest first, with snapshots
// (empty when it has none). EINVALID for an unknown kind.
func (db *DB) FindHistory(ctx context.Context, kind store.Kind, id int64) ([]store.Version, error) {
	return db.FindHistoryPage(ctx, kind, id, store.HistoryQuery{Snapshots: true})
}

// FindHistoryPage returns the history versions of a record that q selects, newest first,
// read as store.Registry.ReadHistoryPage decides. EINVALID for an unknown kind or a query
// that store.HistoryQuery.Check refuses.
func (db *DB) FindHistoryPage(ctx context.Context, kind store.Kind, id int64, q store.HistoryQuery) ([]store.Version, error) {
	if err := db.begin(ctx, "FindHistoryPage"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if err := db.checkKind(kind); err != nil {
		return nil, err
	}
	heads := func(q store.HistoryQuery) ([]store.HistoryHead, error) {
		var out []store.HistoryHead
		for i := len(db.history) - 1; i >= 0 && (q.Limit <= 0 || len(out) < q.Limit); i-- {
			h := db.history[i]
			if h.kind != kind || h.id != id || h.row.Version <= q.Since || h.row.Version >= q.Upper() {
				continue
			}
			head := store.HistoryHead{Version: h.row.Version, Actor: h.row.Actor, At: h.row.At,
				Fields: h.row.Fields, Event: h.row.Event}
			if !h.row.IsSnapshot() {
				head.Base = h.row.Base
			}
			out = append(out, head)
		}
		return out, nil
	}
	rows := func(from, to int64) ([]store.HistoryRow, error) { return db.historyRows(kind, id, from, to), nil }
	return db.Registry().ReadHistoryPage(kind, id, q, heads, rows)
}

// FindVersion returns history version v of a record, rebuilt from its chain. ENOTFOUND when
// there is no such history version, EINVALID for an unknown kind.
func (db *DB) FindVersion(ctx context.Context, kind store.Kind, id, v int64) (*store.Version, error) {
	if err := db.begin(ctx, "FindVersion"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if err := db.checkKind(kind); err != nil {
		return nil, err
	}
	from := v
	if at := db.historyRows(kind, id, v, v); len(at) == 1 {
		from = at[0].ChainBase()
	}
	return db.Registry().RebuildVersion(kind, id, v, db.historyRows(kind, id, from, v))
}

// FindOps returns the record writes that added no history version, newest first.
// EINVALID for an unknown kind.
func (db *DB) FindOps(ctx context.Context, kind store.Kind, id int64) ([]store.Change, error) {
	return db.FindOpsPage(ctx, kind, id, store.HistoryQuery{})
}

// FindOpsPage returns the record writes that added no history version whose versions q
// selects, newest first. EINVALID for an unknown kind or a query that store.HistoryQuery.Check refuses.
func (db *DB) FindOpsPage(ctx context.Context, kind store.Kind, id int64, q store.HistoryQuery) ([]store.Change, error) {
	if err := db.begin(ctx, "FindOps"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if err := db.checkKind(kind); err != nil {
		return nil, err
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	out := []store.Change{}
	for i := len(db.changes) - 1; i >= 0 && (q.Limit <= 0 || len(out) < q.Limit); i-- {
		c := db.changes[i]
		if c.Kind == kind && c.RecordID == id && isRecordEvent(c.Event) && !c.History && c.Version > q.Since && c.Version < q.Upper() {
			out = append(out, cloneChange(c))
		}
	}
	return out, nil
}
