package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// TakeSchema makes next, the source's schema at its version, the copy's own
// (store.WorkingCopy). It runs in one write transaction, as ApplySchema does, with the
// copy's outbox triggers taken out while the tables change, so nothing of it is queued as a
// local change: the source made these changes, and its records bring their results at the
// next pull. Destructive changes apply as the source allowed them, except those the SQLite
// store cannot make to a table (a dropped kind, a dropped or retyped ref field): the copy
// keeps that table or column, which its schema no longer names, and nothing reads or writes
// it again. The outbox and the conflict queue keep their values; a renamed field's move to
// its new name.
func (db *DB) TakeSchema(ctx context.Context, next *store.Registry) (*store.SchemaDiff, error) {
	if next == nil || next.Legacy() {
		return nil, store.Errorf(store.EINVALID, "take the source's schema: want a schema with kinds")
	}
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		actor = store.Actor{Name: "tandem", Role: store.RoleSystem}
	}
	var (
		diff    *store.SchemaDiff
		applied *store.Registry
	)
	err = db.inTx(ctx, "take the source's schema", func(t *tx) error {
		diff, applied = nil, nil
		if wc, err := db.isCopy(ctx, t); err != nil {
			return err
		} else if !wc {
			return store.Errorf(store.ENOTFOUND, "%s is not a working copy", db.path)
		}
		cur, err := db.readSchema(ctx, t.Tx)
		if err != nil {
			return err
		}
		if cur == nil {
			return store.Errorf(store.EINTERNAL, "take the source's schema: the copy has no schema recorded")
		}
		if cur.Version() >= next.Version() {
			return nil
		}
		d, err := store.DiffSchema(cur, next)
		if err != nil {
			return err
		}
		if err := store.RefuseUnsupported(d); err != nil {
			return err
		}
		// What the copy's tables cannot follow stays there, unnamed by the schema.
		skip := unapplied(d)
		tables := &store.SchemaDiff{From: d.From, To: d.To}
		for _, c := range d.Changes {
			if !slices.ContainsFunc(skip, func(s store.SchemaChange) bool { return s.Op == c.Op && s.Kind == c.Kind && s.Field == c.Field }) {
				tables.Changes = append(tables.Changes, c)
			}
		}
		if err := dropCopyTriggers(ctx, t, cur); err != nil {
			return err
		}
		if err := applyChanges(ctx, t, tables, next.Version(), actor); err != nil {
			return err
		}
		if err := store.RenameHistory(d, next.Version(), &applySteps{db: db, ctx: ctx, t: t}); err != nil {
			return err
		}
		if _, err := createKindTables(ctx, t.Tx, next); err != nil {
			return err
		}
		if err := db.installCopyTriggers(ctx, t, next); err != nil {
			return err
		}
		if err := renameCopyValues(ctx, t, d); err != nil {
			return err
		}
		if err := takeCopyKinds(ctx, t, cur, next); err != nil {
			return err
		}
		if err := insertSchema(ctx, t, next, next.Version()); err != nil {
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
		if _, err := t.ExecContext(ctx, insertChange, string(store.EventSchemaChanged), "", 0, next.Version(), actor.Name, string(actor.Role),
			jsonText(kinds), "{}", false, formatTime(t.now)); err != nil {
			return fmt.Errorf("write change log: %w", err)
		}
		diff, applied = d, next
		return nil
	})
	if err != nil {
		return nil, mapErr("take the source's schema", err)
	}
	if applied != nil {
		db.reg.Store(applied)
	}
	return diff, nil
}

// renameCopyValues moves the values of the fields d renames to their new names in the
// copy's outbox entries and conflicts.
func renameCopyValues(ctx context.Context, t *tx, d *store.SchemaDiff) error {
	path := func(name string) string { return `$."` + strings.ReplaceAll(name, `"`, `\"`) + `"` }
	for kind, names := range d.Renames() {
		for from, to := range names {
			for _, col := range []string{"wc_outbox.before", "wc_outbox.after", "wc_conflicts.base", "wc_conflicts.mine", "wc_conflicts.theirs"} {
				tbl, c, _ := strings.Cut(col, ".")
				q := `UPDATE ` + tbl + ` SET ` + c + ` = json_set(json_remove(` + c + `, ?1), ?2, json(` + c + ` -> ?1))
					WHERE kind = ?3 AND ` + c + ` IS NOT NULL AND json_type(` + c + `, ?1) IS NOT NULL`
				if _, err := t.ExecContext(ctx, q, path(from), path(to), string(kind)); err != nil {
					return fmt.Errorf("rename %s.%s in the copy's changes: %w", kind, from, err)
				}
			}
			q := `UPDATE wc_conflicts SET fields = (SELECT json_group_array(CASE WHEN value = ?1 THEN ?2 ELSE value END) FROM json_each(wc_conflicts.fields))
				WHERE kind = ?3 AND EXISTS (SELECT 1 FROM json_each(wc_conflicts.fields) WHERE value = ?1)`
			if _, err := t.ExecContext(ctx, q, from, to, string(kind)); err != nil {
				return fmt.Errorf("rename %s.%s in the copy's conflicts: %w", kind, from, err)
			}
		}
	}
	return nil
}

// takeCopyKinds records the kinds the copy holds under next (store.CopyKindsAfter).
func takeCopyKinds(ctx context.Context, t *tx, cur, next *store.Registry) error {
	var raw string
	if err := t.QueryRowContext(ctx, `SELECT kinds FROM wc_meta`).Scan(&raw); err != nil {
		return fmt.Errorf("read working copy: %w", err)
	}
	held, err := parseKinds(raw)
	if err != nil {
		return err
	}
	kinds := store.CopyKindsAfter(cur, next, held)
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	_, err = t.ExecContext(ctx, `UPDATE wc_meta SET kinds = ?`, jsonText(names))
	return err
}

// DropEntry removes outbox entry seq (store.WorkingCopy).
func (db *DB) DropEntry(ctx context.Context, seq int64) error {
	err := db.inTx(ctx, "drop local change", func(t *tx) error {
		tx, err := db.newWCTx(ctx, t)
		if err != nil {
			return err
		}
		kind, id, _, _, err := findEntry(ctx, tx, seq)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM wc_outbox WHERE seq = ?`, seq); err != nil {
			return err
		}
		tx.quiet = false
		busy, err := hasLocalState(ctx, tx, kind, id)
		if err != nil || busy || !tx.reg.Has(kind) {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO wc_stale (kind, record_id) VALUES (?, ?)`, string(kind), id)
		return err
	})
	return mapErr("drop local change", err)
}
