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
// kind matching query in the registry's searched fields (store/search.go decides the fields
// and the folding). A query of a trigram or more is looked up in the FTS5 trigram index of
// each searched field, and every candidate is checked with instr(), an exact substring test
// with no wildcards; a shorter query, which a trigram index cannot answer, is the instr()
// test alone on every row.
func (db *DB) searchCondition(kind store.Kind, query string) (string, []any, error) {
	q := store.SearchFold(query)
	fields := db.reg.SearchFields(kind)
	if len(fields) == 0 {
		return "0", nil, nil // a registry that searches no field finds nothing
	}
	var (
		ors, lookups []string
		args, finds  []any
	)
	// An FTS5 phrase in double quotes is passed to the tokenizer as it is (a quote is
	// doubled); with the trigram tokenizer it matches where its trigrams follow each other,
	// that is where it is a substring.
	phrase := `"` + strings.ReplaceAll(q, `"`, `""`) + `"`
	for _, f := range fields {
		ors = append(ors, "instr("+store.FoldColumn(f.Name)+", ?) > 0")
		args = append(args, q)
		st, err := searchTable(kind, f.Name)
		if err != nil {
			return "", nil, err
		}
		lookups = append(lookups, "SELECT rowid FROM "+st+" WHERE "+st+" MATCH ?")
		finds = append(finds, phrase)
	}
	cond := "(" + strings.Join(ors, " OR ") + ")"
	if !store.IndexedQuery(q) {
		return cond, args, nil
	}
	return "id IN (" + strings.Join(lookups, " UNION ") + ") AND " + cond, append(finds, args...), nil
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
