package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// A schema change in place (store.SchemaApplier): store.RunApply's sequence, with the steps
// below, in one transaction under the advisory lock that opens take to record a schema and
// create tables (so two applies, or an apply and a first open, never interleave). DDL takes its tables' ACCESS EXCLUSIVE locks: saves
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

// ApplySchema makes next the store's schema (see store.SchemaApplier), as store.RunApply
// decides, with applySteps in one transaction.
func (db *DB) ApplySchema(ctx context.Context, next *store.Registry, o store.ApplyOptions) (*store.ApplyResult, error) {
	actor, err := store.CheckApply(ctx, next)
	if err != nil {
		return nil, err
	}
	var (
		res      *store.ApplyResult
		exported bool
	)
	err = db.inTx(ctx, "apply schema", false, func(tx pgx.Tx) error {
		var err error
		res, err = store.RunApply(next, o, actor, db.txNow(), &applySteps{db: db, ctx: ctx, tx: tx}, &exported)
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
		db.useRegistry(next.WithVersion(res.ToVersion))
	}
	return res, nil
}

// applySteps are the PostgreSQL store's steps of a schema change (store.ApplySteps), in tx.
type applySteps struct {
	db  *DB
	ctx context.Context
	tx  pgx.Tx
}

var _ store.ApplySteps = (*applySteps)(nil)

// Current takes the advisory lock that opens take to record a schema and create tables, and
// reads the newest recorded schema.
func (s *applySteps) Current() (*store.Registry, error) {
	if _, err := s.tx.Exec(s.ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(migrationLockPurpose+s.db.schema)); err != nil {
		return nil, err
	}
	rec, err := readSchema(s.ctx, s.tx)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, store.Errorf(store.EINTERNAL, "apply schema: the store has no schema recorded")
	}
	cur := s.db.Registry()
	if !bytes.Equal(cur.YAML(), rec.text) {
		if cur, err = rec.parse(); err != nil {
			return nil, err
		}
	}
	if cur.Version() != rec.version {
		cur = cur.WithVersion(rec.version)
	}
	return cur, nil
}

func (s *applySteps) CountAffected(d *store.SchemaDiff) error { return countAffected(s.ctx, s.tx, d) }

// DeletedRecords reads the tombstones of kind's deleted records (store.ApplySteps).
func (s *applySteps) DeletedRecords(kind store.Kind, table string) ([]store.DeletedRecord, error) {
	rows, err := s.tx.Query(s.ctx, `SELECT h.record_id, h.snapshot::text FROM history h
		WHERE h.kind = $1 AND h.event = $2 AND h.snapshot IS NOT NULL
		AND h.version = (SELECT max(version) FROM history WHERE kind = h.kind AND record_id = h.record_id)
		AND NOT EXISTS (SELECT 1 FROM `+ident(table)+` r WHERE r.id = h.record_id)
		ORDER BY h.record_id`, string(kind), string(store.EventDeleted))
	if err != nil {
		return nil, fmt.Errorf("read the deleted %ss: %w", kind, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.DeletedRecord, error) {
		var d store.DeletedRecord
		var snap string
		err := r.Scan(&d.ID, &snap)
		d.Snapshot = []byte(snap)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the deleted %ss: %w", kind, err)
	}
	return out, nil
}

// Unapplied: the PostgreSQL store makes every destructive change.
func (s *applySteps) Unapplied(*store.SchemaDiff) []store.SchemaChange { return nil }

// LockTables takes the ACCESS EXCLUSIVE locks of every table the change alters, and the
// EXCLUSIVE locks of the tables of kinds whose limits narrow or whose fields' owners or rules
// change, which alter no table: a write of a client opened before (store/stale.go) reads the
// schema version after its row lock, so it must not commit after the change with what the
// change refuses. EXCLUSIVE waits for the writes that hold a row and lets plain reads on.
func (s *applySteps) LockTables(d *store.SchemaDiff) error {
	tables := changedTables(d)
	var checked []string
	for _, c := range d.Changes {
		if c.Op != store.OpNarrowLimit && c.Op != store.OpDescribe {
			continue
		}
		if t, err := d.From.Table(c.Kind); err == nil && !slices.Contains(tables, t) && !slices.Contains(checked, t) {
			checked = append(checked, t)
		}
	}
	for _, l := range []struct {
		mode string
		ts   []string
	}{{"ACCESS EXCLUSIVE", tables}, {"EXCLUSIVE", checked}} {
		mode, ts := l.mode, l.ts
		if len(ts) == 0 {
			continue
		}
		slices.Sort(ts)
		quoted := make([]string, len(ts))
		for i, t := range ts {
			quoted[i] = ident(t)
		}
		if _, err := s.tx.Exec(s.ctx, "LOCK TABLE "+joinComma(quoted)+" IN "+mode+" MODE"); err != nil {
			return err
		}
	}
	return nil
}

func (s *applySteps) ExportLost(d *store.SchemaDiff, w io.Writer) (int64, error) {
	return exportLost(s.ctx, s.tx, d, w)
}

// ChangeTables drops the outside-write triggers of the tables that change (their WHEN and
// their functions name the fields), changes the tables, makes the new kinds' tables and
// installs the triggers again for the new schema.
func (s *applySteps) ChangeTables(d *store.SchemaDiff, v int64, actor store.Actor) error {
	ctx, tx := s.ctx, s.tx
	for _, t := range changedTables(d) {
		for _, tr := range outsideTriggers("") {
			if _, err := tx.Exec(ctx, "DROP TRIGGER IF EXISTS "+ident(t+tr.suffix)+" ON "+ident(t)); err != nil {
				return err
			}
		}
	}
	after, err := s.db.applyChanges(ctx, tx, d, v, actor)
	if err != nil {
		return err
	}
	if err := createTables(ctx, tx, d.To); err != nil {
		return err
	}
	for _, q := range after {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	return installOutside(ctx, tx, d.To, s.db.schema, s.db.channel)
}

func (s *applySteps) RenameInHistory(kind store.Kind, from, to string) error {
	return renameHistoryKey(s.ctx, s.tx, kind, from, to)
}

func (s *applySteps) RetireKind(kind store.Kind, retired string) error {
	if _, err := s.tx.Exec(s.ctx, "UPDATE history SET kind = $2 WHERE kind = $1", string(kind), retired); err != nil {
		return fmt.Errorf("retire kind %s in history: %w", kind, err)
	}
	return nil
}

func (s *applySteps) Record(next *store.Registry, v int64, ch store.Change) error {
	if err := recordSchema(s.ctx, s.tx, &recorded{version: v, text: next.YAML()}, ch.At); err != nil {
		return err
	}
	_, err := s.tx.Exec(s.ctx, insertChangeSQL, changeArgs(ch)...)
	return err
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
		name = store.OldFieldName(d, c.Kind, c.Field)
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

// exportLost writes to w, as JSON lines, the values d's destructive changes drop or
// replace (a narrowed limit drops none), and returns how many.
func exportLost(ctx context.Context, tx pgx.Tx, d *store.SchemaDiff, w io.Writer) (int64, error) {
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
