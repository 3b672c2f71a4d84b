package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// applyChanges changes, in t, the tables of the kinds d.From and d.To share into what
// KindDDL makes for d.To (new kinds are made after it by createKindTables): per kind, the
// indexes named after a field that is renamed and the sort indexes d.To no longer wants are
// dropped, and so are the search rows of a field dropped or retyped; renamed columns are
// renamed, and their search slots follow them (store.RunApply renames their history keys);
// new columns are added with their defaults; then every statement of KindDDL but the
// table's runs if its object is missing, and the search rows of each field searched anew
// are written from the records there are.
func applyChanges(ctx context.Context, t *tx, d *store.SchemaDiff, v int64, actor store.Actor) error {
	// A clone's index left to be built is empty and has no triggers; KindDDL below would
	// make them, and they would tell the empty index to delete rows it never held (FTS5
	// then reads its index as damaged). Built first, the index follows the change's writes.
	if _, err := buildSearch(ctx, t); err != nil {
		return err
	}
	cur, next := d.From, d.To
	for _, k := range next.Kinds() {
		if !cur.Has(k) || !kindChanged(d, k) {
			continue
		}
		if err := applyKind(ctx, t, d, k, v, actor); err != nil {
			return fmt.Errorf("kind %s: %w", k, err)
		}
	}
	return nil
}

// kindChanged reports whether d changes anything of kind k that its table holds.
func kindChanged(d *store.SchemaDiff, k store.Kind) bool {
	for _, c := range d.Changes {
		if c.Kind != k {
			continue
		}
		switch c.Op {
		case store.OpDescribe, store.OpWidenLimit, store.OpNarrowLimit, store.OpAddValues, store.OpDefault:
			continue
		}
		return true
	}
	return false
}

func applyKind(ctx context.Context, t *tx, d *store.SchemaDiff, k store.Kind, v int64, actor store.Actor) error {
	cur, next := d.From, d.To
	tbl, err := cur.Table(k)
	if err != nil {
		return err
	}
	q := quoteIdent
	exec := func(s string, args ...any) error {
		if _, err := t.ExecContext(ctx, s, args...); err != nil {
			return fmt.Errorf("%s: %w", firstLine(s), err)
		}
		return nil
	}
	renamed := map[string]string{} // old name -> new name
	for _, c := range d.Changes {
		if c.Op == store.OpRenameField && c.Kind == k {
			renamed[c.From] = c.Field
		}
	}
	// What is named after fields: dropped when its field is renamed or no longer wants it.
	// A field no longer searched keeps its search rows and slot: a handle opened before the
	// change still writes them. They are emptied and filled again if the field is searched
	// again.
	var drops []string
	wantFold := next.FoldedFields(k)
	var wantSort []string
	for _, f := range next.SortFields(k) {
		wantSort = append(wantSort, f.Name)
	}
	for _, f := range cur.SortFields(k) {
		if _, ok := renamed[f.Name]; ok || !slices.Contains(wantSort, f.Name) {
			drops = append(drops, "DROP INDEX IF EXISTS "+q(tbl+"_"+f.Name+"_id"))
		}
	}
	for from := range renamed {
		f, err := cur.Field(k, from)
		if err != nil {
			return err
		}
		if f.Unique {
			drops = append(drops, "DROP INDEX IF EXISTS "+q(tbl+"_"+store.UniqueKeyColumn(from)+"_unique"))
		}
		if f.Type == store.TypeRef {
			drops = append(drops, "DROP INDEX IF EXISTS "+q(tbl+"_"+from+"_ref"))
		}
	}
	for _, s := range drops {
		if err := exec(s); err != nil {
			return err
		}
	}
	// Renames, in the order of the diff.
	for _, c := range d.Changes {
		if c.Op != store.OpRenameField || c.Kind != k {
			continue
		}
		f, err := cur.Field(k, c.From)
		if err != nil {
			return err
		}
		if err := exec("ALTER TABLE " + q(tbl) + " RENAME COLUMN " + q(c.From) + " TO " + q(c.Field)); err != nil {
			return err
		}
		// The search rows keep their slot, under the field's new name.
		if err := exec("UPDATE "+slotsTable+" SET field = ? WHERE tbl = ? AND field = ?", c.Field, tbl, c.From); err != nil {
			return err
		}
		if f.Unique {
			if err := exec("ALTER TABLE " + q(tbl) + " RENAME COLUMN " + q(store.UniqueKeyColumn(c.From)) + " TO " + q(store.UniqueKeyColumn(c.Field))); err != nil {
				return err
			}
		}
	}
	// Fields dropped or retyped (under their new names: renames ran first), with their key
	// column and what is named after them (store.RunApply files their history under
	// store.RetiredName).
	var retyped []string
	for _, c := range d.Changes {
		if (c.Op != store.OpDropField && c.Op != store.OpRetypeField) || c.Kind != k {
			continue
		}
		name := c.Field
		f, err := cur.Field(k, store.OldFieldName(d, k, name))
		if err != nil {
			return err
		}
		if c.Op == store.OpRetypeField {
			retyped = append(retyped, name)
		}
		if err := dropSearchRows(ctx, t, tbl, name, c.Op == store.OpDropField); err != nil {
			return err
		}
		stmts := []string{"DROP INDEX IF EXISTS " + q(tbl+"_"+name+"_id")}
		if f.Unique {
			stmts = append(stmts, "DROP INDEX IF EXISTS "+q(tbl+"_"+store.UniqueKeyColumn(name)+"_unique"),
				"ALTER TABLE "+q(tbl)+" DROP COLUMN "+q(store.UniqueKeyColumn(name)))
		}
		stmts = append(stmts, "ALTER TABLE "+q(tbl)+" DROP COLUMN "+q(name))
		for _, s := range stmts {
			if err := exec(s); err != nil {
				return err
			}
		}
	}
	// New (and retyped) fields, with their defaults.
	for _, c := range d.Changes {
		if (c.Op != store.OpAddField && c.Op != store.OpRetypeField) || c.Kind != k {
			continue
		}
		f, err := next.Field(k, c.Field)
		if err != nil {
			return err
		}
		if err := exec("ALTER TABLE " + q(tbl) + " ADD COLUMN " + q(f.Name) + " " + columnType(next, k, f)); err != nil {
			return err
		}
		if f.Unique {
			if err := exec("ALTER TABLE " + q(tbl) + " ADD COLUMN " + q(store.UniqueKeyColumn(f.Name)) + " TEXT"); err != nil {
				return err
			}
		}
	}
	// What KindDDL makes that is missing now; the search tables it makes are filled.
	var fill []string
	for _, name := range wantFold {
		if _, ok := renamed[store.OldFieldName(d, k, name)]; ok || !slices.Contains(cur.FoldedFields(k), name) || slices.Contains(retyped, name) {
			fill = append(fill, name)
		}
	}
	for i, s := range KindDDL(next, k) {
		if i == 0 {
			continue // the kind's table, which exists
		}
		for _, what := range []string{"CREATE TABLE ", "CREATE VIRTUAL TABLE ", "CREATE INDEX ", "CREATE UNIQUE INDEX ", "CREATE TRIGGER "} {
			if strings.HasPrefix(s, what) {
				s = what + "IF NOT EXISTS " + strings.TrimPrefix(s, what)
				break
			}
		}
		if err := exec(s); err != nil {
			return err
		}
	}
	for _, name := range fill {
		if err := dropSearchRows(ctx, t, tbl, name, false); err != nil {
			return err
		}
		if err := fillSearchTable(ctx, t, next, k, name); err != nil {
			return err
		}
	}
	for _, c := range d.Changes {
		if c.Op == store.OpRemoveValues && c.Kind == k {
			if err := rewriteValues(ctx, t, next, c, actor); err != nil {
				return err
			}
		}
	}
	return nil
}

// rewriteValues gives the records that hold an enum value the schema no longer has the
// field's default (its first value when it has none), as a system write each: a new
// version and a change-log entry, so feeds and version-checked saves see it.
func rewriteValues(ctx context.Context, t *tx, next *store.Registry, c store.SchemaChange, actor store.Actor) error {
	tbl, err := next.Table(c.Kind)
	if err != nil {
		return err
	}
	f, err := next.Field(c.Kind, c.Field)
	if err != nil {
		return err
	}
	zero, _ := f.Zero().(string)
	at := formatTime(t.now)
	args := []any{zero, at, actor.Name}
	for _, v := range c.Values {
		args = append(args, v)
	}
	rows, err := t.QueryContext(ctx, "UPDATE "+quoteIdent(tbl)+" SET "+quoteIdent(f.Name)+" = ?, version = version + 1, updated_at = ?, updated_by = ? WHERE "+
		quoteIdent(f.Name)+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(c.Values)), ", ")+") RETURNING id, version", args...)
	if err != nil {
		return fmt.Errorf("give %s its default: %w", f.Name, err)
	}
	type written struct{ id, version int64 }
	var ws []written
	for rows.Next() {
		var w written
		if err := rows.Scan(&w.id, &w.version); err != nil {
			rows.Close()
			return err
		}
		ws = append(ws, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	slices.SortFunc(ws, func(a, b written) int { return int(a.id - b.id) })
	folded := slices.Contains(next.FoldedFields(c.Kind), f.Name)
	for _, w := range ws {
		if _, err := t.ExecContext(ctx, insertChange, string(store.EventSaved), string(c.Kind), w.id, w.version, actor.Name, string(store.RoleSystem),
			jsonText([]string{f.Name}), "{}", false, at); err != nil {
			return fmt.Errorf("write change log: %w", err)
		}
		if folded {
			if err := writeFolds(ctx, t, next, c.Kind, w.id, map[string]string{store.FoldColumn(f.Name): store.FoldValue(zero)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropSearchRows deletes the search rows of field name of table tbl, and its slot when
// slotToo (the field is gone), in t. A table with no search tables has none to delete.
func dropSearchRows(ctx context.Context, t *tx, tbl, name string, slotToo bool) error {
	var slot sql.NullInt64
	err := t.QueryRowContext(ctx, "SELECT slot FROM "+slotsTable+" WHERE tbl = ? AND field = ?", tbl, name).Scan(&slot)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the search slot of %s: %w", name, err)
	}
	del := "DELETE FROM " + quoteIdent(tbl+"_search") + " WHERE (key & " + strconv.Itoa(slotMask) + ") = ?"
	if _, err := t.ExecContext(ctx, del, slot.Int64); err != nil {
		return fmt.Errorf("delete the search text of %s: %w", name, err)
	}
	if slotToo {
		if _, err := t.ExecContext(ctx, "DELETE FROM "+slotsTable+" WHERE tbl = ? AND field = ?", tbl, name); err != nil {
			return fmt.Errorf("free the search slot of %s: %w", name, err)
		}
	}
	return nil
}

// firstLine is a statement's first line, for an error.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// fillSearchTable writes the search text of field name of every record of kind into its search
// table, as saves write it (store.FoldValue), in batches.
func fillSearchTable(ctx context.Context, t *tx, reg *store.Registry, k store.Kind, name string) error {
	f, err := reg.Field(k, name)
	if err != nil {
		return err
	}
	tbl, err := reg.Table(k)
	if err != nil {
		return err
	}
	rows, err := t.QueryContext(ctx, "SELECT id, "+quoteIdent(name)+" FROM "+quoteIdent(tbl)+" ORDER BY id")
	if err != nil {
		return fmt.Errorf("read %s to fill its search table: %w", name, err)
	}
	var (
		ids   []int64
		folds []map[string]string
	)
	col := store.FoldColumn(name)
	for rows.Next() {
		var (
			id  int64
			raw any
		)
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return err
		}
		v, err := decodeColumn(f, raw)
		if err != nil {
			rows.Close()
			return fmt.Errorf("%s %d: %w", k, id, err)
		}
		ids = append(ids, id)
		folds = append(folds, map[string]string{col: store.FoldValue(v)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	const batch = 200
	for len(ids) > 0 {
		n := min(batch, len(ids))
		if err := writeFoldsBulk(ctx, t, reg, k, ids[:n], folds[:n]); err != nil {
			return err
		}
		ids, folds = ids[n:], folds[n:]
	}
	return nil
}

// renameHistoryKey renames field from to to in kind's history (snapshots, deltas' set and
// patch, the fields each version wrote) and in the change log's fields and deltas, as the
// PostgreSQL store's does.
func renameHistoryKey(ctx context.Context, t *tx, kind store.Kind, from, to string) error {
	path := func(name string) string { return `$."` + strings.ReplaceAll(name, `"`, `\"`) + `"` }
	pf, pt := path(from), path(to)
	stmts := []struct {
		q    string
		args []any
	}{
		{`UPDATE history SET snapshot = json_set(json_remove(snapshot, ?1), ?2, json(snapshot -> ?1))
			WHERE kind = ?3 AND snapshot IS NOT NULL AND json_type(snapshot, ?1) IS NOT NULL`, []any{pf, pt, string(kind)}},
		{`UPDATE history SET delta = json_set(json_remove(delta, ?1), ?2, json(delta -> ?1))
			WHERE kind = ?3 AND delta IS NOT NULL AND json_type(delta, ?1) IS NOT NULL`, []any{"$.set" + pf[1:], "$.set" + pt[1:], string(kind)}},
		{`UPDATE history SET delta = json_set(json_remove(delta, ?1), ?2, json(delta -> ?1))
			WHERE kind = ?3 AND delta IS NOT NULL AND json_type(delta, ?1) IS NOT NULL`, []any{"$.patch" + pf[1:], "$.patch" + pt[1:], string(kind)}},
		{`UPDATE history SET fields = (SELECT json_group_array(CASE WHEN value = ?1 THEN ?2 ELSE value END) FROM json_each(history.fields))
			WHERE kind = ?3 AND EXISTS (SELECT 1 FROM json_each(history.fields) WHERE value = ?1)`, []any{from, to, string(kind)}},
		{`UPDATE changes SET deltas = json_set(json_remove(deltas, ?1), ?2, json(deltas -> ?1))
			WHERE kind = ?3 AND json_type(deltas, ?1) IS NOT NULL`, []any{pf, pt, string(kind)}},
		{`UPDATE changes SET fields = (SELECT json_group_array(CASE WHEN value = ?1 THEN ?2 ELSE value END) FROM json_each(changes.fields))
			WHERE kind = ?3 AND EXISTS (SELECT 1 FROM json_each(changes.fields) WHERE value = ?1)`, []any{from, to, string(kind)}},
	}
	for _, s := range stmts {
		if _, err := t.ExecContext(ctx, s.q, s.args...); err != nil {
			return fmt.Errorf("rename %s.%s in history: %w", kind, from, err)
		}
	}
	return nil
}
