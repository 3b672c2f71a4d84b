package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// A schema change in place (store.SchemaApplier). One transaction, under the advisory lock
// that opens take to record a schema and create tables (so two applies, or an apply and a
// first open, never interleave): it reads the newest recorded schema, diffs, counts what the
// destructive changes would lose, changes the tables, records the new schema as version+1
// and logs an EventSchemaChanged change. DDL takes its tables' ACCESS EXCLUSIVE locks: saves
// of those kinds wait for the commit (up to lock_timeout, then they are retried), and find
// the new columns with their defaults. A client that opened before keeps its registry until
// it opens again; its saves of fields that still exist work.
//
// History is JSON keyed by field name. A rename rewrites, in the same transaction, the keys
// of the kind's history snapshots and deltas and the field lists of history and the change
// log, so history reads under the new name with no knowledge of old names. A field dropped
// or retyped keeps its old values in history under "<name>~v<version>" (the schema version
// it was dropped from), which no field can be named: DecodeSnapshot skips them, and a later
// field of the same name never meets values of another type.

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
		exported bool
		dry      bool
	)
	err = db.inTx(ctx, "apply schema", false, func(tx pgx.Tx) error {
		res, applied, dry = nil, nil, false
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(migrationLockPurpose+db.schema)); err != nil {
			return err
		}
		rec, err := readSchema(ctx, tx)
		if err != nil {
			return err
		}
		if rec == nil {
			return store.Errorf(store.EINTERNAL, "apply schema: the store has no schema recorded")
		}
		cur := db.Registry()
		if !bytes.Equal(cur.YAML(), rec.text) {
			if cur, err = rec.parse(); err != nil {
				return err
			}
		}
		res = &store.ApplyResult{FromVersion: rec.version, ToVersion: rec.version}
		if o.BaseVersion != 0 && o.BaseVersion != rec.version {
			return store.Errorf(store.ECONFLICT, "apply schema: the store's schema is version %d now, not version %d the change was made against; "+
				"diff the schema again", rec.version, o.BaseVersion)
		}
		d, err := store.DiffSchema(cur, next)
		if err != nil {
			return err
		}
		res.Diff = d
		if err := store.RefuseUnsupported(d); err != nil {
			return err
		}
		if err := countAffected(ctx, tx, d); err != nil {
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
		if d.Empty() && bytes.Equal(next.YAML(), rec.text) {
			return nil // nothing to record
		}
		// Every table the change alters, locked before anything is exported: a lock wait
		// that ends the attempt ends it here, where running it again is harmless.
		tables := changedTables(d)
		if len(tables) > 0 {
			quoted := make([]string, len(tables))
			for i, t := range tables {
				quoted[i] = ident(t)
			}
			if _, err := tx.Exec(ctx, "LOCK TABLE "+joinComma(quoted)+" IN ACCESS EXCLUSIVE MODE"); err != nil {
				return err
			}
		}
		if o.ExportTo != nil && len(d.Of(store.ChangeDestructive)) > 0 {
			if exported {
				// An earlier attempt wrote the values and failed after: another attempt
				// would write them twice.
				return store.Errorf(store.EBUSY, "apply schema: the values to be dropped were exported but the change was not applied; "+
					"nothing changed, try again")
			}
			exported = true
			if res.Exported, err = exportLost(ctx, tx, d, o); err != nil {
				return fmt.Errorf("export the values to be dropped: %w", err)
			}
		}
		// The outside-write triggers name the fields (their WHEN and their functions): dropped
		// here, made again for the new schema below.
		for _, t := range tables {
			for _, tr := range outsideTriggers("") {
				if _, err := tx.Exec(ctx, "DROP TRIGGER IF EXISTS "+ident(t+tr.suffix)+" ON "+ident(t)); err != nil {
					return err
				}
			}
		}
		v := rec.version + 1
		after, err := db.applyChanges(ctx, tx, d, v, actor)
		if err != nil {
			return err
		}
		if err := createTables(ctx, tx, next); err != nil {
			return err
		}
		for _, q := range after {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		if err := installOutside(ctx, tx, next, db.schema, db.channel); err != nil {
			return err
		}
		if err := recordSchema(ctx, tx, &recorded{version: v, text: next.YAML()}, db.txNow()); err != nil {
			return err
		}
		var kinds []string
		for _, c := range d.Changes {
			if !slices.Contains(kinds, string(c.Kind)) {
				kinds = append(kinds, string(c.Kind))
			}
		}
		slices.Sort(kinds)
		ch := store.Change{Event: store.EventSchemaChanged, Version: v, Actor: actor.Name, Role: actor.Role, Fields: kinds, At: db.txNow()}
		if _, err := tx.Exec(ctx, insertChangeSQL, changeArgs(ch)...); err != nil {
			return err
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
		db.useRegistry(applied)
	}
	return res, nil
}

// nonZero is the SQL condition that column c of field f holds something other than the
// empty value of its type.
func nonZero(f *store.Field) string {
	c := ident(f.Name)
	switch f.Type {
	case store.TypeInt, store.TypeMoney:
		return c + " <> 0"
	case store.TypeSet:
		return "cardinality(" + c + ") > 0"
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
		return table, nil, "true", nil, nil
	}
	name := c.Field
	if c.Op != store.OpDropField {
		name = oldName(d, c.Kind, c.Field)
	}
	if f, err = d.From.Field(c.Kind, name); err != nil {
		return "", nil, "", nil, err
	}
	col := ident(f.Name)
	switch c.Op {
	case store.OpDropField, store.OpRetypeField:
		cond = nonZero(f)
	case store.OpRemoveValues:
		cond, args = col+" = ANY($1::text[])", []any{c.Values}
	case store.OpNarrowLimit:
		measure := map[string]string{"max_chars": "char_length", "max_bytes": "octet_length"}[c.Limit]
		switch {
		case c.Limit == "max_items":
			cond = "cardinality(" + col + ") > $1"
		case f.Type == store.TypeSet:
			cond = "EXISTS (SELECT 1 FROM unnest(" + col + ") x WHERE " + measure + "(x) > $1)"
		default:
			cond = measure + "(" + col + ") > $1"
		}
		args = []any{c.New}
	default:
		return "", nil, "", nil, fmt.Errorf("%s is not destructive", c.Desc)
	}
	return table, f, cond, args, nil
}

// oldName returns the current name of the field of kind that next names name (its
// rename_from when the diff renames it).
func oldName(d *store.SchemaDiff, kind store.Kind, name string) string {
	for _, c := range d.Changes {
		if c.Op == store.OpRenameField && c.Kind == kind && c.Field == name {
			return c.From
		}
	}
	return name
}

// countAffected fills Affected and AffectedDesc of d's destructive changes.
func countAffected(ctx context.Context, tx pgx.Tx, d *store.SchemaDiff) error {
	for i, c := range d.Changes {
		if c.Class != store.ChangeDestructive {
			continue
		}
		table, _, cond, args, err := lostWhere(d, c)
		if err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+ident(table)+" WHERE "+cond, args...).Scan(&n); err != nil {
			return err
		}
		c.Affected = n
		c.AffectedDesc = store.AffectedText(c.Op, n)
		d.Changes[i] = c
	}
	return nil
}

// exportLost writes to o.ExportTo, as JSON lines, the values d's destructive changes drop or
// replace (a narrowed limit drops none), and returns how many.
func exportLost(ctx context.Context, tx pgx.Tx, d *store.SchemaDiff, o store.ApplyOptions) (int64, error) {
	enc := json.NewEncoder(o.ExportTo)
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
			cols = append(cols, ident(f.Name))
		}
		rows, err := tx.Query(ctx, "SELECT "+joinComma(cols)+" FROM "+ident(table)+" WHERE "+cond+" ORDER BY id", args...)
		if err != nil {
			return n, err
		}
		var lines []store.LostValue
		for rows.Next() {
			var id int64
			dest := []any{&id}
			for _, f := range fields {
				dest = append(dest, scanDest(f))
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return n, err
			}
			for i, f := range fields {
				lines = append(lines, store.LostValue{Kind: c.Kind, ID: id, Field: f.Name, Value: f.Export(scanned(dest[i+1]))})
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

func joinComma(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// scanDest returns where a column of f's type scans to; scanned reads the value back as
// store.Values holds it.
func scanDest(f *store.Field) any {
	switch f.Type {
	case store.TypeInt, store.TypeMoney:
		return new(int64)
	case store.TypeRef:
		return new(*int64)
	case store.TypeSet:
		return new([]string)
	case store.TypeTime:
		return new(*time.Time)
	}
	return new(string)
}

func scanned(d any) any {
	switch d := d.(type) {
	case *int64:
		return *d
	case **int64:
		if *d == nil {
			return nil
		}
		return **d
	case *[]string:
		return *d
	case **time.Time:
		if *d == nil {
			return nil
		}
		return (**d).UTC()
	case *string:
		return *d
	}
	return nil
}

// changedTables returns the tables of the current schema whose columns or rows d changes
// (a label, limit or new enum value changes none).
func changedTables(d *store.SchemaDiff) []string {
	var out []string
	for _, c := range d.Changes {
		switch c.Op {
		case store.OpDescribe, store.OpWidenLimit, store.OpNarrowLimit, store.OpAddValues:
			continue
		}
		if t, err := d.From.Table(c.Kind); err == nil && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
