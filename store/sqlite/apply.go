package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// A schema change in place (store.SchemaApplier), as the PostgreSQL store makes it: one
// write transaction (BEGIN IMMEDIATE, so two applies, or an apply and any save, never
// interleave) reads the newest recorded schema, diffs, counts what the destructive changes
// would lose, changes the tables, records the new schema as version+1 and logs an
// EventSchemaChanged change; the DB's registry is swapped once it commits. A handle that
// opened before keeps its registry until it opens again; its saves of fields that still
// exist work, and new columns get their defaults.
//
// The SQLite store applies the additive changes (new kinds and fields, renames, search and
// sort switched on or off, labels, limits widened, enum values added) and refuses the
// destructive ones, counted, even when they are allowed. A rename rewrites the keys of
// the kind's history and the change log's field lists, as PostgreSQL's does. A new default
// changes what tandem writes for new records; the column's own default (what another
// program's insert without the field gets) stays the one it was made with.

var _ store.SchemaApplier = (*DB)(nil)

// errDryRun ends a dry run's transaction (rolled back).
var errDryRun = errors.New("dry run")

// ApplySchema makes next the store's schema (see store.SchemaApplier).
func (db *DB) ApplySchema(ctx context.Context, next *store.Registry, o store.ApplyOptions) (*store.ApplyResult, error) {
	if next == nil || next.Legacy() {
		return nil, store.Errorf(store.EINVALID, "apply schema: want a schema with kinds: (a field registry of the older form changes no tables)")
	}
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		actor = store.Actor{Name: "tandem", Role: store.RoleSystem}
	}
	var (
		res      *store.ApplyResult
		applied  *store.Registry
		dry      bool
		exported bool
	)
	err = db.inTx(ctx, "apply schema", func(t *tx) error {
		res, applied, dry = nil, nil, false
		if wc, err := db.isCopy(ctx, t); err != nil {
			return err
		} else if wc {
			return store.Errorf(store.EINVALID, "%s", store.CopySchemaRefusal)
		}
		cur, err := db.readSchema(ctx, t.Tx)
		if err != nil {
			return err
		}
		if cur == nil {
			return store.Errorf(store.EINTERNAL, "apply schema: the store has no schema recorded")
		}
		res = &store.ApplyResult{FromVersion: cur.Version(), ToVersion: cur.Version()}
		if o.BaseVersion != 0 && o.BaseVersion != cur.Version() {
			return store.Errorf(store.ECONFLICT, "apply schema: the store's schema is version %d now, not version %d the change was made against; "+
				"diff the schema again", cur.Version(), o.BaseVersion)
		}
		d, err := store.DiffSchema(cur, next)
		if err != nil {
			return err
		}
		res.Diff = d
		if err := store.RefuseUnsupported(d); err != nil {
			return err
		}
		if err := countAffected(ctx, t, d); err != nil {
			return fmt.Errorf("count the values a change affects: %w", err)
		}
		if o.DryRun {
			dry = true
			return errDryRun
		}
		if !o.AllowDestructive {
			if err := store.RefuseDestructive(d); err != nil {
				return err
			}
		}
		if un := unapplied(d); len(un) > 0 {
			return store.Errorf(store.EINVALID, "schema change refused: the SQLite store does not apply these destructive changes yet, allowed or not:\n  %s",
				strings.Join(changeLines(un), "\n  "))
		}
		if d.Empty() && string(next.YAML()) == string(cur.YAML()) {
			return nil // nothing to record
		}
		if o.ExportTo != nil && len(d.Of(store.ChangeDestructive)) > 0 {
			if exported {
				// An earlier attempt wrote the values and failed after: another attempt
				// would write them twice.
				return store.Errorf(store.EBUSY, "apply schema: the values to be dropped were exported but the change was not applied; "+
					"nothing changed, try again")
			}
			exported = true
			if res.Exported, err = exportLost(ctx, t, d, o.ExportTo); err != nil {
				return fmt.Errorf("export the values to be dropped: %w", err)
			}
		}
		if err := dropOutside(ctx, t, cur); err != nil {
			return fmt.Errorf("apply schema: %w", err)
		}
		v := cur.Version() + 1
		if err := applyChanges(ctx, t, d, v, actor); err != nil {
			return err
		}
		if _, err := createKindTables(ctx, t.Tx, next); err != nil {
			return err
		}
		if err := installOutside(ctx, t, next); err != nil {
			return err
		}
		if err := insertSchema(ctx, t, next, v); err != nil {
			return err
		}
		var kinds []string
		for _, c := range d.Changes {
			if !slices.Contains(kinds, string(c.Kind)) {
				kinds = append(kinds, string(c.Kind))
			}
		}
		slices.Sort(kinds)
		if kinds == nil {
			kinds = []string{}
		}
		if _, err := t.ExecContext(ctx, insertChange, string(store.EventSchemaChanged), "", 0, v, actor.Name, string(actor.Role),
			jsonText(kinds), "{}", false, formatTime(t.now)); err != nil {
			return fmt.Errorf("write change log: %w", err)
		}
		res.ToVersion, res.Applied = v, true
		applied = next.WithVersion(v)
		return nil
	})
	if dry {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	if applied != nil {
		db.reg.Store(applied)
	}
	return res, nil
}

// changeLines returns each change in one line, with its count.
func changeLines(cs []store.SchemaChange) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
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

// oldName returns the current name of the field of kind that the new schema names name.
func oldName(d *store.SchemaDiff, kind store.Kind, name string) string {
	for _, c := range d.Changes {
		if c.Op == store.OpRenameField && c.Kind == kind && c.Field == name {
			return c.From
		}
	}
	return name
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
		name = oldName(d, c.Kind, c.Field)
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
				name = oldName(d, c.Kind, c.Field)
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
