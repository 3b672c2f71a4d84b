package sqlite

import (
	"context"
	"errors"
	"fmt"
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
		res     *store.ApplyResult
		applied *store.Registry
		dry     bool
	)
	err = db.inTx(ctx, "apply schema", func(t *tx) error {
		res, applied, dry = nil, nil, false
		if wc, err := db.isCopy(ctx, t); err != nil {
			return err
		} else if wc {
			return store.Errorf(store.EINVALID, "apply schema: a working copy has its source's schema; change the source's")
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
		if err := store.RefuseDestructive(d); err != nil {
			if o.AllowDestructive {
				return store.Errorf(store.EINVALID, "schema change refused: the SQLite store does not apply destructive changes yet, allowed or not:\n  %s",
					strings.Join(changeLines(d.Of(store.ChangeDestructive)), "\n  "))
			}
			return err
		}
		if d.Empty() && string(next.YAML()) == string(cur.YAML()) {
			return nil // nothing to record
		}
		if err := dropOutside(ctx, t, cur); err != nil {
			return fmt.Errorf("apply schema: %w", err)
		}
		if err := applyChanges(ctx, t, d); err != nil {
			return err
		}
		if _, err := createKindTables(ctx, t.Tx, next); err != nil {
			return err
		}
		if err := installOutside(ctx, t, next); err != nil {
			return err
		}
		v := cur.Version() + 1
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

// countAffected fills Affected and AffectedDesc of d's destructive changes.
func countAffected(ctx context.Context, t *tx, d *store.SchemaDiff) error {
	for i, c := range d.Changes {
		if c.Class != store.ChangeDestructive {
			continue
		}
		table, err := d.From.Table(c.Kind)
		if err != nil {
			return err
		}
		cond, args := "1", []any(nil)
		if c.Op != store.OpDropKind {
			name := c.Field
			if c.Op != store.OpDropField {
				name = oldName(d, c.Kind, c.Field)
			}
			f, err := d.From.Field(c.Kind, name)
			if err != nil {
				return err
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
				return fmt.Errorf("%s is not destructive", c.Desc)
			}
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
