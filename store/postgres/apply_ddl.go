package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// applyChanges changes the tables of d.From into those of d.To, in tx, as schema version v:
// renames first (so a new field may take an old name), then drops of fields and kinds, then
// new fields, then enum values removed, then each kind's folded columns and sort indexes
// brought to what d.To needs. New kinds are made after it by createTables; it returns the
// statements to run after that (foreign keys of new fields to new kinds).
func (db *DB) applyChanges(ctx context.Context, tx pgx.Tx, d *store.SchemaDiff, v int64, actor store.Actor) (after []string, err error) {
	a := &applier{ctx: ctx, tx: tx, d: d, v: v, actor: actor, folded: map[store.Kind][]string{}, sorted: map[store.Kind][]string{}}
	if err := tx.QueryRow(ctx, "SELECT current_schema()").Scan(&a.schema); err != nil {
		return nil, err
	}
	cur, next := d.From, d.To
	for _, k := range cur.Kinds() {
		a.folded[k] = slices.Clone(cur.FoldedFields(k))
		for _, f := range cur.SortFields(k) {
			a.sorted[k] = append(a.sorted[k], f.Name)
		}
	}
	steps := []struct {
		op  store.ChangeOp
		run func(store.SchemaChange) error
	}{
		{store.OpRenameField, a.renameField},
		{store.OpDropField, a.dropField},
		{store.OpRetypeField, a.dropField},
		{store.OpDropKind, a.dropKind},
		{store.OpAddField, a.addField},
		{store.OpRetypeField, a.addField},
		{store.OpRemoveValues, a.rewriteValues},
		{store.OpDefault, a.setDefault},
	}
	for _, s := range steps {
		for _, c := range d.Changes {
			if c.Op != s.op {
				continue
			}
			if err := s.run(c); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Desc, err)
			}
		}
	}
	for _, k := range next.Kinds() {
		if cur.Has(k) {
			if err := a.reconcile(k); err != nil {
				return nil, fmt.Errorf("kind %s: %w", k, err)
			}
		}
	}
	return a.after, nil
}

// applier is one schema change under way. folded and sorted track, per kind, the fields
// (by their new names) that have a folded column with its search table, and a sort index.
type applier struct {
	ctx    context.Context
	tx     pgx.Tx
	d      *store.SchemaDiff
	v      int64
	actor  store.Actor
	schema string
	folded map[store.Kind][]string
	sorted map[store.Kind][]string
	after  []string // statements to run once the new kinds' tables exist
}

func (a *applier) exec(sql string, args ...any) error {
	_, err := a.tx.Exec(a.ctx, sql, args...)
	return err
}

func (a *applier) table(k store.Kind) string {
	t, _ := a.d.From.Table(k) // a kind's table does not change (DiffSchema)
	return t
}

// renameField renames the column and what is named after it (store.RunApply renames the
// field in history).
func (a *applier) renameField(c store.SchemaChange) error {
	t := a.table(c.Kind)
	f, err := a.d.From.Field(c.Kind, c.From)
	if err != nil {
		return err
	}
	if slices.Contains(a.folded[c.Kind], c.From) {
		// The search table's trigger names the folded column: made again by reconcile.
		if err := a.dropFold(c.Kind, c.From); err != nil {
			return err
		}
	}
	qt := ident(t)
	stmts := []string{"ALTER TABLE " + qt + " RENAME COLUMN " + ident(c.From) + " TO " + ident(c.Field)}
	renameIndex := func(from, to string) {
		stmts = append(stmts, "ALTER INDEX IF EXISTS "+ident(from)+" RENAME TO "+ident(to))
	}
	if f.Unique {
		stmts = append(stmts, "ALTER TABLE "+qt+" RENAME COLUMN "+ident(store.UniqueKeyColumn(c.From))+" TO "+ident(store.UniqueKeyColumn(c.Field)))
		renameIndex(uniqueIndexName(t, c.From), uniqueIndexName(t, c.Field))
	}
	if f.Type == store.TypeRef {
		renameIndex(objName(t, c.From), objName(t, c.Field))
		var has bool
		if err := a.tx.QueryRow(a.ctx, `SELECT EXISTS (SELECT 1 FROM pg_constraint
			WHERE conrelid = (quote_ident(current_schema()) || '.' || quote_ident($1))::regclass AND conname = $2)`,
			t, objName(t, c.From, "fkey")).Scan(&has); err != nil {
			return err
		}
		if has {
			stmts = append(stmts, "ALTER TABLE "+qt+" RENAME CONSTRAINT "+ident(objName(t, c.From, "fkey"))+" TO "+ident(objName(t, c.Field, "fkey")))
		}
	}
	if i := slices.Index(a.sorted[c.Kind], c.From); i >= 0 {
		renameIndex(objName(t, c.From, "id"), objName(t, c.Field, "id"))
		a.sorted[c.Kind][i] = c.Field
	}
	for _, q := range stmts {
		if err := a.exec(q); err != nil {
			return err
		}
	}
	return nil
}

// renameHistoryKey renames field from to to in kind's history (snapshots, deltas' set and
// patch, the fields each version wrote) and in the change log's fields and deltas.
func renameHistoryKey(ctx context.Context, tx pgx.Tx, kind store.Kind, from, to string) error {
	for _, q := range []string{
		`UPDATE history SET snapshot = (snapshot - $2::text) || jsonb_build_object($3::text, snapshot -> $2::text)
			WHERE kind = $1 AND snapshot ? $2::text`,
		`UPDATE history SET delta = jsonb_set(delta, '{set}', ((delta -> 'set') - $2::text) || jsonb_build_object($3::text, (delta -> 'set') -> $2::text))
			WHERE kind = $1 AND (delta -> 'set') ? $2::text`,
		`UPDATE history SET delta = jsonb_set(delta, '{patch}', ((delta -> 'patch') - $2::text) || jsonb_build_object($3::text, (delta -> 'patch') -> $2::text))
			WHERE kind = $1 AND (delta -> 'patch') ? $2::text`,
		`UPDATE history SET fields = array_replace(fields, $2::text, $3::text) WHERE kind = $1 AND $2::text = ANY(fields)`,
		`UPDATE changes SET fields = array_replace(fields, $2::text, $3::text),
			deltas = CASE WHEN deltas ? $2::text THEN (deltas - $2::text) || jsonb_build_object($3::text, deltas -> $2::text) ELSE deltas END
			WHERE kind = $1 AND $2::text = ANY(fields)`,
	} {
		if _, err := tx.Exec(ctx, q, string(kind), from, to); err != nil {
			return fmt.Errorf("rename %s.%s in history: %w", kind, from, err)
		}
	}
	return nil
}

// dropField drops the column of a field dropped or retyped (under its new name: renames ran
// first) with its key and folded columns and search table (store.RunApply files its history
// under store.RetiredName).
func (a *applier) dropField(c store.SchemaChange) error {
	t := a.table(c.Kind)
	name := c.Field
	f, err := a.d.From.Field(c.Kind, store.OldFieldName(a.d, c.Kind, name))
	if err != nil {
		return err
	}
	if slices.Contains(a.folded[c.Kind], name) {
		if err := a.dropFold(c.Kind, name); err != nil {
			return err
		}
	}
	if i := slices.Index(a.sorted[c.Kind], name); i >= 0 {
		a.sorted[c.Kind] = slices.Delete(a.sorted[c.Kind], i, i+1) // dropped with the column
	}
	q := "ALTER TABLE " + ident(t) + " DROP COLUMN " + ident(name)
	if f.Unique {
		q += ", DROP COLUMN " + ident(store.UniqueKeyColumn(name))
	}
	return a.exec(q)
}

// dropKind drops a kind's table and search tables (store.RunApply files its history under
// the kind's retired name).
func (a *applier) dropKind(c store.SchemaChange) error {
	for _, name := range slices.Clone(a.folded[c.Kind]) {
		if err := a.dropFold(c.Kind, name); err != nil {
			return err
		}
	}
	t := a.table(c.Kind)
	if err := a.exec("DROP TABLE " + ident(t) + " CASCADE"); err != nil {
		return err
	}
	// The table's triggers went with it; their functions (OutsideTriggers) stay unless dropped.
	for _, fn := range []string{objName(t, "outside", "before"), objName(t, "outside", "after")} {
		if err := a.exec("DROP FUNCTION IF EXISTS " + ident(a.schema) + "." + ident(fn) + "()"); err != nil {
			return err
		}
	}
	return nil
}

// addField adds the column of a new (or retyped) field with its default, its key column and
// unique index, or its index and foreign key; reconcile adds its folded column and sort index.
func (a *applier) addField(c store.SchemaChange) error {
	t := a.table(c.Kind)
	qt := ident(t)
	f, err := a.d.To.Field(c.Kind, c.Field)
	if err != nil {
		return err
	}
	col, err := columnDDL(f)
	if err != nil {
		return err
	}
	stmts := []string{"ALTER TABLE " + qt + " ADD COLUMN " + col}
	if f.Unique {
		key := store.UniqueKeyColumn(f.Name)
		stmts = append(stmts, "ALTER TABLE "+qt+" ADD COLUMN "+ident(key)+" text",
			"CREATE UNIQUE INDEX "+ident(uniqueIndexName(t, f.Name))+" ON "+qt+" ("+ident(key)+")")
	}
	if f.Type == store.TypeRef {
		to, _ := a.d.To.Table(f.To)
		fk := "ALTER TABLE " + qt + " ADD CONSTRAINT " + ident(objName(t, f.Name, "fkey")) + " FOREIGN KEY (" + ident(f.Name) + ") REFERENCES " + ident(to) + " (id)"
		stmts = append(stmts, "CREATE INDEX "+ident(objName(t, f.Name))+" ON "+qt+" ("+ident(f.Name)+")")
		if a.d.From.Has(f.To) {
			stmts = append(stmts, fk)
		} else {
			a.after = append(a.after, fk) // a ref to a kind this change adds
		}
	}
	for _, q := range stmts {
		if err := a.exec(q); err != nil {
			return err
		}
	}
	if f.Type == store.TypeEnum && f.Default == "" {
		// The column's default is '' (columnDDL); the records there are get the value a
		// create without the field gets, the enum's first.
		return a.exec("UPDATE "+qt+" SET "+ident(f.Name)+" = $1", f.Zero())
	}
	return nil
}

// rewriteValues gives the records that hold an enum value the schema no longer has the
// field's default (its first value when it has none), as a system write each: a new
// version and a change-log entry, so feeds and version-checked saves see it.
func (a *applier) rewriteValues(c store.SchemaChange) error {
	t := a.table(c.Kind)
	f, err := a.d.To.Field(c.Kind, c.Field)
	if err != nil {
		return err
	}
	zero, _ := f.Zero().(string)
	set := ident(f.Name) + " = $1"
	args := []any{zero, a.actor.Name, c.Values, string(c.Kind), f.Name}
	if slices.Contains(a.folded[c.Kind], f.Name) {
		set += ", " + ident(store.FoldColumn(f.Name)) + " = $6"
		args = append(args, store.FoldValue(zero))
	}
	return a.exec(`WITH u AS (UPDATE `+ident(t)+` SET `+set+`, version = version + 1, updated_at = clock_timestamp(), updated_by = $2
			WHERE `+ident(f.Name)+` = ANY($3::text[]) RETURNING id, version, updated_at)
		INSERT INTO changes (event, kind, record_id, version, actor, role, fields, at)
		SELECT 'saved', $4, id, version, $2, 'system', ARRAY[$5::text], updated_at FROM u`, args...)
}

// setDefault gives a field's column its new default (for records created by clients that
// do not know the field yet).
func (a *applier) setDefault(c store.SchemaChange) error {
	f, err := a.d.To.Field(c.Kind, c.Field)
	if err != nil {
		return err
	}
	def, err := columnDefault(f)
	if err != nil {
		return err
	}
	q := "ALTER TABLE " + ident(a.table(c.Kind)) + " ALTER COLUMN " + ident(f.Name)
	if def == "" {
		return a.exec(q + " DROP DEFAULT")
	}
	return a.exec(q + " SET DEFAULT " + def)
}

// reconcile gives kind the folded columns, search tables and sort indexes d.To asks for,
// and drops those it no longer needs.
func (a *applier) reconcile(k store.Kind) error {
	t := a.table(k)
	qt := ident(t)
	want := a.d.To.FoldedFields(k)
	for _, name := range slices.Clone(a.folded[k]) {
		if !slices.Contains(want, name) {
			if err := a.dropFold(k, name); err != nil {
				return err
			}
		}
	}
	var ext string
	for _, name := range want {
		if slices.Contains(a.folded[k], name) {
			continue
		}
		f, err := a.d.To.Field(k, name)
		if err != nil {
			return err
		}
		if err := a.exec("ALTER TABLE " + qt + " ADD COLUMN IF NOT EXISTS " + ident(store.FoldColumn(name)) + " text"); err != nil {
			return err
		}
		if err := fillFoldColumns(a.ctx, a.tx, t, []*store.Field{f}); err != nil {
			return err
		}
		if ext == "" {
			if ext, err = trgmSchema(a.ctx, a.tx); err != nil {
				return err
			}
		}
		for _, q := range searchTableDDL(a.schema, ext, t, name) {
			if err := a.exec(q); err != nil {
				return err
			}
		}
		a.folded[k] = append(a.folded[k], name)
	}
	var wantSorted []string
	for _, f := range a.d.To.SortFields(k) {
		wantSorted = append(wantSorted, f.Name)
		if !slices.Contains(a.sorted[k], f.Name) {
			if err := a.exec("CREATE INDEX IF NOT EXISTS " + ident(objName(t, f.Name, "id")) + " ON " + qt + " (" + sortColumn(f) + ", id)"); err != nil {
				return err
			}
		}
	}
	for _, name := range a.sorted[k] {
		if !slices.Contains(wantSorted, name) {
			if err := a.exec("DROP INDEX IF EXISTS " + ident(objName(t, name, "id"))); err != nil {
				return err
			}
		}
	}
	a.sorted[k] = wantSorted
	return nil
}

// dropFold drops the folded column of kind's field name, its search table, triggers and
// functions.
func (a *applier) dropFold(k store.Kind, name string) error {
	t := a.table(k)
	st := searchTableName(t, name)
	fn := ident(a.schema) + "." + ident(objName(st, "sync"))
	gone := ident(a.schema) + "." + ident(objName(st, "gone"))
	for _, q := range []string{
		"DROP TRIGGER IF EXISTS " + ident(objName(st, "sync")) + " ON " + ident(t),
		"DROP TRIGGER IF EXISTS " + ident(objName(st, "gone")) + " ON " + ident(t),
		"DROP TRIGGER IF EXISTS " + ident(objName(st, "truncate")) + " ON " + ident(t),
		"DROP TRIGGER IF EXISTS " + ident(objName(st, "moved")) + " ON " + ident(t),
		"DROP TABLE IF EXISTS " + ident(a.schema) + "." + ident(st),
		"DROP FUNCTION IF EXISTS " + fn + "()",
		"DROP FUNCTION IF EXISTS " + gone + "()",
		"ALTER TABLE " + ident(t) + " DROP COLUMN IF EXISTS " + ident(store.FoldColumn(name)),
	} {
		if err := a.exec(q); err != nil {
			return err
		}
	}
	a.folded[k] = slices.DeleteFunc(a.folded[k], func(n string) bool { return n == name })
	return nil
}
