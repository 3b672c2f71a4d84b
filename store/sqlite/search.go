package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// searchTable returns the FTS5 table that indexes the folded column of kind's field
// (migration search_text).
func searchTable(kind store.Kind, field string) (string, error) {
	t, err := table(kind)
	if err != nil {
		return "", err
	}
	return t + "_" + field + "_fts", nil
}

// searchCondition returns the WHERE condition, and its arguments, that finds the records of
// f.Kind matching f.Search in the registry's searched fields (store/search.go decides the
// fields and the folding).
//
// A query of a trigram or more is looked up in the FTS5 trigram index of each searched field
// (searchTable). A phrase of trigrams matches where they follow each other, that is exactly
// where the folded query is a substring of the folded column (the indexed text is folded
// already and compared as it is), so the index's answer is the answer. Each lookup delivers
// rowids in order and, when the filter pages by id (AfterID, Limit) without naming ids, stops
// after the page: a word in every record costs a page of index reads, not 100,000.
//
// A shorter query, which a trigram index cannot answer, is instr() on the folded columns of
// every row: an exact substring test with no wildcards.
func (db *DB) searchCondition(f store.Filter) (string, []any, error) {
	q := store.SearchFold(f.Search)
	fields := db.reg.SearchFields(f.Kind)
	if len(fields) == 0 {
		return "0", nil, nil // a registry that searches no field finds nothing
	}
	var (
		conds []string
		args  []any
	)
	if !store.IndexedQuery(q) {
		for _, sf := range fields {
			conds = append(conds, "instr("+store.FoldColumn(sf.Name)+", ?) > 0")
			args = append(args, q)
		}
		return "(" + strings.Join(conds, " OR ") + ")", args, nil
	}
	// An FTS5 phrase in double quotes goes to the tokenizer as it is (a quote is doubled).
	phrase := `"` + strings.ReplaceAll(q, `"`, `""`) + `"`
	page := len(f.IDs) == 0
	for _, sf := range fields {
		st, err := searchTable(f.Kind, sf.Name)
		if err != nil {
			return "", nil, err
		}
		lookup := "SELECT rowid FROM " + st + " WHERE " + st + " MATCH ?"
		args = append(args, phrase)
		if page && f.AfterID > 0 {
			lookup += " AND rowid > ?"
			args = append(args, f.AfterID)
		}
		if page && f.Limit > 0 {
			// The first Limit ids of the union are among the first Limit of each lookup.
			lookup += " ORDER BY rowid LIMIT ?"
			args = append(args, f.Limit)
		}
		conds = append(conds, "SELECT rowid FROM ("+lookup+")")
	}
	return "id IN (" + strings.Join(conds, " UNION ") + ")", args, nil
}

// afterSearchMigration runs the Go part of a migration that adds folded columns: it fills
// them for the records that exist (the search_text migration's script has created the
// index and its triggers, which follow).
func afterSearchMigration(ctx context.Context, tx *sql.Tx, migration string) error {
	return fillFolds(ctx, tx, migration)
}

// fillFolds gives every record the folded columns that the migration named migration adds
// (store.FoldedFieldsAddedBy), with store.FoldValue of the stored values: what a write of
// the fields gives. The search index follows through its triggers, where they exist.
func fillFolds(ctx context.Context, tx *sql.Tx, migration string) error {
	reg := store.DefaultRegistry() // field types are schema: every registry has these
	for _, kind := range store.Kinds {
		names := store.FoldedFieldsAddedBy(migration, kind)
		if len(names) == 0 {
			continue
		}
		t, err := table(kind)
		if err != nil {
			return err
		}
		fields := make([]*store.Field, len(names))
		for i, name := range names {
			if fields[i], err = reg.Field(kind, name); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, "SELECT id, "+strings.Join(names, ", ")+" FROM "+t)
		if err != nil {
			return err
		}
		type row struct {
			id     int64
			folded []any
		}
		var all []row
		for rows.Next() {
			var id int64
			raw := make([]any, len(fields))
			dest := []any{&id}
			for i := range raw {
				dest = append(dest, &raw[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
			r := row{id: id}
			for i, f := range fields {
				v, err := decodeColumn(f, raw[i])
				if err != nil {
					rows.Close()
					return err
				}
				r.folded = append(r.folded, store.FoldValue(v))
			}
			all = append(all, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var sets []string
		for _, name := range names {
			sets = append(sets, store.FoldColumn(name)+" = ?")
		}
		stmt, err := tx.PrepareContext(ctx, "UPDATE "+t+" SET "+strings.Join(sets, ", ")+" WHERE id = ?")
		if err != nil {
			return err
		}
		for _, r := range all {
			if _, err := stmt.ExecContext(ctx, append(r.folded, r.id)...); err != nil {
				stmt.Close()
				return err
			}
		}
		if err := stmt.Close(); err != nil {
			return err
		}
	}
	return nil
}
