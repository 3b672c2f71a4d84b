package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/tandem-editor/tandem/store"
)

// mergeSearchTables is the Go part of migration search_per_kind, in its transaction tx: it
// gives every kind's table that exists the search tables of one per kind (searchDDL),
// moving into them the folds of the side tables its fields had, one per field, and
// dropping those with their indexes and triggers. The kinds are those of the schema the
// store keeps (recorded) and those of the sample, whose tables every store made before it
// kept a schema has, whatever it keeps.
func mergeSearchTables(ctx context.Context, tx *sql.Tx, recorded *store.Registry) error {
	done := map[string]bool{}
	for _, reg := range []*store.Registry{recorded, sampleSchema} {
		for _, kind := range reg.Kinds() {
			t, err := reg.Table(kind)
			if err != nil {
				return err
			}
			if done[t] {
				continue
			}
			done[t] = true
			if err := mergeKindSearch(ctx, tx, t, reg.FoldedFields(kind)); err != nil {
				return fmt.Errorf("search tables of %s: %w", kind, err)
			}
		}
	}
	return nil
}

// mergeKindSearch is mergeSearchTables for table t, whose folded fields are folded.
func mergeKindSearch(ctx context.Context, tx *sql.Tx, t string, folded []string) error {
	exec := func(q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("%s: %w", firstLine(q), err)
		}
		return nil
	}
	// The columns of t that have a side table of their own (none when t does not exist).
	rows, err := tx.QueryContext(ctx, `SELECT c.name FROM pragma_table_info(?1) c
		JOIN sqlite_master m ON m.type = 'table' AND m.name = ?1 || '_' || c.name || '_search' ORDER BY c.cid`, t)
	if err != nil {
		return err
	}
	var old []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		old = append(old, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(old) == 0 {
		return nil
	}
	q := quoteIdent
	for _, s := range []string{"DROP TRIGGER IF EXISTS " + q(t+"_search_delete"), "DROP TRIGGER IF EXISTS " + q(t+"_search_id")} {
		if err := exec(s); err != nil {
			return err
		}
	}
	tables, triggers := searchDDL(t, folded)
	for _, s := range tables {
		if err := exec(s); err != nil {
			return err
		}
	}
	for _, name := range old {
		side, fts := t+"_"+name+"_search", t+"_"+name+"_fts"
		// A field no longer searched kept its side table for the handles opened before;
		// none of those opens a store of this version, so its folds go with it.
		if len(tables) > 0 && slices.Contains(folded, name) {
			if err := exec("INSERT INTO "+q(t+"_search")+" (key, fold) SELECT (o.id << ?) | s.slot, o.fold FROM "+q(side)+" o, "+
				slotsTable+" s WHERE s.tbl = ? AND s.field = ?", slotBits, t, name); err != nil {
				return err
			}
		}
		// Dropping the side table drops the triggers that fed its index.
		for _, s := range []string{"DROP TABLE IF EXISTS " + q(fts), "DROP TABLE " + q(side)} {
			if err := exec(s); err != nil {
				return err
			}
		}
		if err := exec("DELETE FROM search_pending WHERE fts = ?", fts); err != nil {
			return err
		}
	}
	if len(tables) == 0 {
		return nil
	}
	if err := rebuildFTS(ctx, tx, t+"_fts"); err != nil {
		return err
	}
	for _, s := range triggers {
		if err := exec(s); err != nil {
			return err
		}
	}
	return nil
}
