package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// A schema change in place (store.SchemaApplier): store.RunApply's sequence, with the steps
// below, in one write transaction (BEGIN IMMEDIATE, so two applies, or an apply and any
// save, never interleave); the DB's registry is swapped once it commits. A handle that
// opened before keeps its registry until it opens again; its saves of fields that still
// exist work, and new columns get their defaults.
//
// The SQLite store applies the additive changes (new kinds and fields, renames, search and
// sort switched on or off, labels, limits widened, enum values added) and, when allowed,
// the destructive ones but a dropped kind and a dropped or retyped ref field (unapplied). A rename rewrites the keys of
// the kind's history and the change log's field lists, as PostgreSQL's does. A new default
// changes what tandem writes for new records; the column's own default (what another
// program's insert without the field gets) stays the one it was made with.

var _ store.SchemaApplier = (*DB)(nil)

// errDryRun ends a dry run's transaction (rolled back).
var errDryRun = errors.New("dry run")

// ApplySchema makes next the store's schema (see store.SchemaApplier), as store.RunApply
// decides, with applySteps in one write transaction.
func (db *DB) ApplySchema(ctx context.Context, next *store.Registry, o store.ApplyOptions) (*store.ApplyResult, error) {
	actor, err := store.CheckApply(ctx, next)
	if err != nil {
		return nil, err
	}
	var (
		res      *store.ApplyResult
		exported bool
	)
	err = db.inTx(ctx, "apply schema", func(t *tx) error {
		var err error
		res, err = store.RunApply(next, o, actor, t.now, &applySteps{db: db, ctx: ctx, t: t}, &exported)
		if err == nil && o.DryRun {
			return errDryRun
		}
		return err
	})
	if o.DryRun && errors.Is(err, errDryRun) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	if res.Applied {
		db.reg.Store(next.WithVersion(res.ToVersion))
	}
	return res, nil
}

// applySteps are the SQLite store's steps of a schema change (store.ApplySteps), in t.
type applySteps struct {
	db  *DB
	ctx context.Context
	t   *tx
}

var _ store.ApplySteps = (*applySteps)(nil)

// Current reads the newest recorded schema; EINVALID on a working copy.
func (s *applySteps) Current() (*store.Registry, error) {
	if wc, err := s.db.isCopy(s.ctx, s.t); err != nil {
		return nil, err
	} else if wc {
		return nil, store.Errorf(store.EINVALID, "%s", store.CopySchemaRefusal)
	}
	cur, err := s.db.readSchema(s.ctx, s.t.Tx)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, store.Errorf(store.EINTERNAL, "apply schema: the store has no schema recorded")
	}
	return cur, nil
}

func (s *applySteps) CountAffected(d *store.SchemaDiff) error { return countAffected(s.ctx, s.t, d) }

func (s *applySteps) Unapplied(d *store.SchemaDiff) []store.SchemaChange { return unapplied(d) }

// DeletedRecords reads the tombstones of kind's deleted records (store.ApplySteps).
func (s *applySteps) DeletedRecords(kind store.Kind, table string) ([]store.DeletedRecord, error) {
	rows, err := s.t.QueryContext(s.ctx, `SELECT h.record_id, h.snapshot FROM history h
		WHERE h.kind = ? AND h.event = ? AND h.snapshot IS NOT NULL
		AND h.version = (SELECT max(version) FROM history WHERE kind = h.kind AND record_id = h.record_id)
		AND NOT EXISTS (SELECT 1 FROM `+quoteIdent(table)+` r WHERE r.id = h.record_id)
		ORDER BY h.record_id`, string(kind), string(store.EventDeleted))
	if err != nil {
		return nil, fmt.Errorf("read the deleted %ss: %w", kind, err)
	}
	defer rows.Close()
	var out []store.DeletedRecord
	for rows.Next() {
		var r store.DeletedRecord
		var snap string
		if err := rows.Scan(&r.ID, &snap); err != nil {
			return nil, fmt.Errorf("read the deleted %ss: %w", kind, err)
		}
		r.Snapshot = []byte(snap)
		out = append(out, r)
	}
	return out, rows.Err()
}

// LockTables: the write transaction (BEGIN IMMEDIATE) holds the whole file already.
func (s *applySteps) LockTables(*store.SchemaDiff) error { return nil }

func (s *applySteps) ExportLost(d *store.SchemaDiff, w io.Writer) (int64, error) {
	return exportLost(s.ctx, s.t, d, w)
}

// ChangeTables drops the outside-write triggers (they name the fields), changes the tables,
// makes the new kinds' tables and installs the triggers again for the new schema.
func (s *applySteps) ChangeTables(d *store.SchemaDiff, v int64, actor store.Actor) error {
	if err := dropOutside(s.ctx, s.t, d.From); err != nil {
		return fmt.Errorf("apply schema: %w", err)
	}
	if err := applyChanges(s.ctx, s.t, d, v, actor); err != nil {
		return err
	}
	if _, err := createKindTables(s.ctx, s.t.Tx, d.To); err != nil {
		return err
	}
	return installOutside(s.ctx, s.t, d.To)
}

func (s *applySteps) RenameInHistory(kind store.Kind, from, to string) error {
	return renameHistoryKey(s.ctx, s.t, kind, from, to)
}

// RetireKind is not asked while the SQLite store drops no kind (unapplied).
func (s *applySteps) RetireKind(kind store.Kind, retired string) error {
	if _, err := s.t.ExecContext(s.ctx, "UPDATE history SET kind = ? WHERE kind = ?", retired, string(kind)); err != nil {
		return fmt.Errorf("retire kind %s in history: %w", kind, err)
	}
	return nil
}

func (s *applySteps) Record(next *store.Registry, v int64, ch store.Change) error {
	if err := insertSchema(s.ctx, s.t, next, v); err != nil {
		return err
	}
	if _, err := s.t.ExecContext(s.ctx, insertChange, string(ch.Event), "", 0, v, ch.Actor, string(ch.Role),
		jsonText(ch.Fields), "{}", false, formatTime(ch.At)); err != nil {
		return fmt.Errorf("write change log: %w", err)
	}
	return nil
}

// nonZero is the SQL condition that the column of f holds something other than the empty
// value of its type.
func nonZero(f *store.Field) string {
	c := quoteIdent(f.Name)
	switch f.Type {
	case store.TypeInt, store.TypeMoney:
		return c + " <> 0"
	case store.TypeSet:
		return "json_array_length(" + c + ") > 0"
	case store.TypeTime, store.TypeRef:
		return c + " IS NOT NULL"
	}
	return c + " <> ''"
}

// lostWhere returns, for a destructive change, the table (of the current schema), the field
// of the current schema whose values are lost (nil: every field, a dropped kind) and the
// condition that picks the rows the change affects, with its arguments.
func lostWhere(d *store.SchemaDiff, c store.SchemaChange) (table string, f *store.Field, cond string, args []any, err error) {
	if table, err = d.From.Table(c.Kind); err != nil {
		return "", nil, "", nil, err
	}
	if c.Op == store.OpDropKind {
		return table, nil, "1", nil, nil
	}
	name := c.Field
	if c.Op != store.OpDropField {
		name = store.OldFieldName(d, c.Kind, c.Field)
	}
	if f, err = d.From.Field(c.Kind, name); err != nil {
		return "", nil, "", nil, err
	}
	col := quoteIdent(f.Name)
	switch c.Op {
	case store.OpDropField, store.OpRetypeField:
		cond = nonZero(f)
	case store.OpRemoveValues:
		cond = col + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(c.Values)), ", ") + ")"
		for _, v := range c.Values {
			args = append(args, v)
		}
	case store.OpNarrowLimit:
		measure := map[string]string{"max_chars": "length(%s)", "max_bytes": "length(CAST(%s AS BLOB))"}[c.Limit]
		switch {
		case c.Limit == "max_items":
			cond = "json_array_length(" + col + ") > ?"
		case f.Type == store.TypeSet:
			cond = "EXISTS (SELECT 1 FROM json_each(" + col + ") WHERE " + fmt.Sprintf(measure, "value") + " > ?)"
		default:
			cond = fmt.Sprintf(measure, col) + " > ?"
		}
		args = []any{c.New}
	default:
		return "", nil, "", nil, fmt.Errorf("%s is not destructive", c.Desc)
	}
	return table, f, cond, args, nil
}

// countAffected fills Affected and AffectedDesc of d's destructive changes.
func countAffected(ctx context.Context, t *tx, d *store.SchemaDiff) error {
	for i, c := range d.Changes {
		if c.Class != store.ChangeDestructive {
			continue
		}
		table, _, cond, args, err := lostWhere(d, c)
		if err != nil {
			return err
		}
		var n int64
		if err := t.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(table)+" WHERE "+cond, args...).Scan(&n); err != nil {
			return err
		}
		c.Affected = n
		c.AffectedDesc = store.AffectedText(c.Op, n)
		d.Changes[i] = c
	}
	return nil
}

// unapplied returns d's destructive changes the SQLite store cannot apply yet: a dropped
// kind, and a dropped or retyped ref field (SQLite drops no column a foreign key names).
func unapplied(d *store.SchemaDiff) []store.SchemaChange {
	var out []store.SchemaChange
	for _, c := range d.Of(store.ChangeDestructive) {
		switch c.Op {
		case store.OpRemoveValues, store.OpNarrowLimit:
			continue
		case store.OpDropField, store.OpRetypeField:
			name := c.Field
			if c.Op != store.OpDropField {
				name = store.OldFieldName(d, c.Kind, c.Field)
			}
			if f, err := d.From.Field(c.Kind, name); err == nil && f.Type != store.TypeRef {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// exportLost writes to w, as JSON lines, the values d's destructive changes drop or replace
// (a narrowed limit drops none), and returns how many.
func exportLost(ctx context.Context, t *tx, d *store.SchemaDiff, w io.Writer) (int64, error) {
	enc := json.NewEncoder(w)
	var n int64
	for _, c := range d.Of(store.ChangeDestructive) {
		if c.Op == store.OpNarrowLimit {
			continue
		}
		table, f, cond, args, err := lostWhere(d, c)
		if err != nil {
			return n, err
		}
		fields := []*store.Field{f}
		if f == nil {
			fields = d.From.Fields(c.Kind)
		}
		cols := []string{"id"}
		for _, f := range fields {
			cols = append(cols, quoteIdent(f.Name))
		}
		rows, err := t.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+quoteIdent(table)+" WHERE "+cond+" ORDER BY id", args...)
		if err != nil {
			return n, err
		}
		var lines []store.LostValue
		for rows.Next() {
			var id int64
			raw := make([]any, len(fields))
			dest := []any{&id}
			for i := range raw {
				dest = append(dest, &raw[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return n, err
			}
			for i, f := range fields {
				v, err := decodeColumn(f, raw[i])
				if err != nil {
					rows.Close()
					return n, fmt.Errorf("%s %d: %w", c.Kind, id, err)
				}
				lines = append(lines, store.LostValue{Kind: c.Kind, ID: id, Field: f.Name, Value: f.Export(v)})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return n, err
		}
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
