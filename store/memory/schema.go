package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/tandem-editor/tandem/store"
)

// ApplySchema makes next the store's schema (store.SchemaApplier), as store.RunApply
// decides, with applySteps under the store's lock: renamed fields keep their values and
// history, dropped and retyped fields leave history under "<name>~v<version>", records
// holding a removed enum value get the field's default as a system write. Not on a working
// copy: its schema is its source's.
func (db *DB) ApplySchema(ctx context.Context, next *store.Registry, o store.ApplyOptions) (*store.ApplyResult, error) {
	actor, err := store.CheckApply(ctx, next)
	if err != nil {
		return nil, err
	}
	if err := db.begin(ctx, "ApplySchema"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	var exported bool
	return store.RunApply(next, o, actor, db.dbNow(), &applySteps{db: db}, &exported)
}

var _ store.SchemaApplier = (*DB)(nil)

// applySteps are the in-memory store's steps of a schema change (store.ApplySteps), under
// its lock. lost holds what CountAffected found the destructive changes drop.
type applySteps struct {
	db   *DB
	lost []store.LostValue
}

var _ store.ApplySteps = (*applySteps)(nil)

func (s *applySteps) Current() (*store.Registry, error) {
	if s.db.wc != nil {
		return nil, store.Errorf(store.EINVALID, "%s", store.CopySchemaRefusal)
	}
	return s.db.Registry(), nil
}

func (s *applySteps) CountAffected(d *store.SchemaDiff) error {
	s.lost = s.db.countAffected(d)
	return nil
}

func (s *applySteps) Unapplied(*store.SchemaDiff) []store.SchemaChange { return nil }

// DeletedRecords returns the tombstones of kind's deleted records (store.ApplySteps).
func (s *applySteps) DeletedRecords(kind store.Kind, _ string) ([]store.DeletedRecord, error) {
	newest := map[int64]store.HistoryRow{}
	for _, h := range s.db.history {
		if h.kind == kind && h.row.Version > newest[h.id].Version {
			newest[h.id] = h.row
		}
	}
	var out []store.DeletedRecord
	for id, h := range newest {
		if _, live := s.db.records[kind][id]; !live && h.Event == store.EventDeleted && h.IsSnapshot() {
			out = append(out, store.DeletedRecord{ID: id, Snapshot: h.Snapshot})
		}
	}
	slices.SortFunc(out, func(a, b store.DeletedRecord) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

func (s *applySteps) LockTables(*store.SchemaDiff) error { return nil }

func (s *applySteps) ExportLost(_ *store.SchemaDiff, w io.Writer) (int64, error) {
	enc := json.NewEncoder(w)
	var n int64
	for _, l := range s.lost {
		if err := enc.Encode(l); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ChangeTables changes the records: renamed fields move, dropped ones go, new ones get
// their zero value, removed enum values the field's zero value (a write by actor).
func (s *applySteps) ChangeTables(d *store.SchemaDiff, v int64, actor store.Actor) error {
	db, next := s.db, d.To
	now := db.dbNow()
	for _, c := range d.Changes {
		if c.Op == store.OpRenameField {
			for _, r := range db.records[c.Kind] {
				r.Fields[c.Field] = r.Fields[c.From]
				delete(r.Fields, c.From)
			}
		}
	}
	for _, c := range d.Changes {
		switch c.Op {
		case store.OpDropField, store.OpRetypeField:
			for _, r := range db.records[c.Kind] {
				delete(r.Fields, c.Field)
			}
		case store.OpDropKind:
			delete(db.records, c.Kind)
		case store.OpAddKind:
			db.records[c.Kind] = map[int64]*store.Record{}
		}
	}
	for _, c := range d.Changes {
		recs := db.records[c.Kind]
		switch c.Op {
		case store.OpAddField, store.OpRetypeField:
			f, _ := next.Field(c.Kind, c.Field)
			for _, r := range recs {
				r.Fields[c.Field] = f.Zero()
			}
		case store.OpRemoveValues:
			f, _ := next.Field(c.Kind, c.Field)
			for _, id := range sortedIDs(recs) {
				r := recs[id]
				if s, _ := r.Fields[c.Field].(string); slices.Contains(c.Values, s) {
					r.Fields[c.Field] = f.Zero()
					r.Version++
					r.UpdatedAt, r.UpdatedBy = now, actor.Name
					db.appendChange(store.Change{Event: store.EventSaved, Kind: c.Kind, RecordID: id, Version: r.Version,
						Actor: actor.Name, Role: store.RoleSystem, Fields: []string{c.Field}, At: now})
				}
			}
		}
	}
	return nil
}

func (s *applySteps) RenameInHistory(kind store.Kind, from, to string) error {
	return s.db.renameHistoryKey(kind, from, to)
}

func (s *applySteps) RetireKind(kind store.Kind, retired string) error {
	for i := range s.db.history {
		if s.db.history[i].kind == kind {
			s.db.history[i].kind = store.Kind(retired)
		}
	}
	return nil
}

func (s *applySteps) Record(next *store.Registry, v int64, ch store.Change) error {
	s.db.reg.Store(next.WithVersion(v))
	s.db.appendChange(ch)
	return nil
}

func sortedIDs(recs map[int64]*store.Record) []int64 {
	ids := make([]int64, 0, len(recs))
	for id := range recs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// countAffected fills the counts of d's destructive changes and returns the values they
// drop or replace, in the order the PostgreSQL store exports them.
func (db *DB) countAffected(d *store.SchemaDiff) []store.LostValue {
	var lost []store.LostValue
	for i, c := range d.Changes {
		if c.Class != store.ChangeDestructive {
			continue
		}
		recs := db.records[c.Kind]
		name := c.Field
		if c.Op != store.OpDropField {
			name = store.OldFieldName(d, c.Kind, c.Field)
		}
		f, _ := d.From.Field(c.Kind, name)
		var n int64
		for _, id := range sortedIDs(recs) {
			r := recs[id]
			switch c.Op {
			case store.OpDropKind:
				n++
				for _, kf := range d.From.Fields(c.Kind) {
					lost = append(lost, store.LostValue{Kind: c.Kind, ID: id, Field: kf.Name, Value: kf.Export(r.Fields[kf.Name])})
				}
			case store.OpDropField, store.OpRetypeField:
				if !isZero(r.Fields[name]) {
					n++
					lost = append(lost, store.LostValue{Kind: c.Kind, ID: id, Field: name, Value: f.Export(r.Fields[name])})
				}
			case store.OpRemoveValues:
				if s, _ := r.Fields[name].(string); slices.Contains(c.Values, s) {
					n++
					lost = append(lost, store.LostValue{Kind: c.Kind, ID: id, Field: name, Value: s})
				}
			case store.OpNarrowLimit:
				if overLimit(r.Fields[name], c.Limit, c.New) {
					n++
				}
			}
		}
		c.Affected = n
		c.AffectedDesc = store.AffectedText(c.Op, n)
		d.Changes[i] = c
	}
	return lost
}

// isZero reports whether v is the empty value of its type (as the SQL stores' nonZero).
func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case int64:
		return v == 0
	case []string:
		return len(v) == 0
	}
	return false
}

// overLimit reports whether v is over the limit n of kind limit.
func overLimit(v any, limit string, n int) bool {
	measure := func(s string) int {
		if limit == "max_bytes" {
			return len(s)
		}
		return utf8.RuneCountInString(s)
	}
	switch v := v.(type) {
	case string:
		return limit != "max_items" && measure(v) > n
	case []string:
		if limit == "max_items" {
			return len(v) > n
		}
		return slices.ContainsFunc(v, func(s string) bool { return measure(s) > n })
	}
	return false
}

// renameHistoryKey renames field from to to in kind's stored history (snapshots, deltas'
// set and patch, the fields each version wrote) and in the change log's fields and deltas.
func (db *DB) renameHistoryKey(kind store.Kind, from, to string) error {
	rename := func(obj map[string]json.RawMessage) {
		if v, ok := obj[from]; ok {
			obj[to] = v
			delete(obj, from)
		}
	}
	for i := range db.history {
		h := &db.history[i]
		if h.kind != kind {
			continue
		}
		h.row.Fields = replaceName(slices.Clone(h.row.Fields), from, to)
		if h.row.Snapshot != nil {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(h.row.Snapshot, &m); err != nil {
				return fmt.Errorf("apply schema: history of %s %d: %w", kind, h.id, err)
			}
			rename(m)
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			h.row.Snapshot = b
		}
		if h.row.Delta != nil {
			var m map[string]map[string]json.RawMessage
			if err := json.Unmarshal(h.row.Delta, &m); err != nil {
				return fmt.Errorf("apply schema: history of %s %d: %w", kind, h.id, err)
			}
			for _, part := range m {
				rename(part)
			}
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			h.row.Delta = b
		}
	}
	for i := range db.changes {
		c := &db.changes[i]
		if c.Kind != kind || !slices.Contains(c.Fields, from) {
			continue
		}
		c.Fields = replaceName(slices.Clone(c.Fields), from, to)
		if d, ok := c.Deltas[from]; ok {
			deltas := make(map[string]int64, len(c.Deltas))
			for k, v := range c.Deltas {
				deltas[k] = v
			}
			delete(deltas, from)
			deltas[to] = d
			c.Deltas = deltas
		}
	}
	return nil
}

func replaceName(names []string, from, to string) []string {
	for i, n := range names {
		if n == from {
			names[i] = to
		}
	}
	return names
}

// ReloadSchema returns the store's schema (store.SchemaReloader): every client of a memory
// store shares it, so an apply is seen at once and there is nothing to read again.
func (db *DB) ReloadSchema(ctx context.Context) (*store.Registry, error) {
	return db.reg.Load(), nil
}

// changeSchema makes d.To the store's schema as version v, its records and history changed
// as a schema change does (applySteps), and logs the EventSchemaChanged change: a working
// copy taking its source's schema (TakeSchema). The caller holds the lock.
func (db *DB) changeSchema(d *store.SchemaDiff, v int64, actor store.Actor) error {
	s := &applySteps{db: db}
	if err := s.ChangeTables(d, v, actor); err != nil {
		return err
	}
	if err := store.RenameHistory(d, v, s); err != nil {
		return err
	}
	return s.Record(d.To, v, store.SchemaChanged(d, v, actor, db.dbNow()))
}
