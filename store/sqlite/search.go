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
	if !store.IndexedQuery(q) {
		cond, args := scanCondition(q, fields)
		return cond, args, nil
	}
	var (
		conds []string
		args  []any
	)
	phrase := ftsPhrase(q)
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

// ftsPhrase returns the folded query q as an FTS5 phrase: in double quotes it goes to the
// tokenizer as it is (a quote is doubled).
func ftsPhrase(q string) string { return `"` + strings.ReplaceAll(q, `"`, `""`) + `"` }

// scanCondition returns the condition that finds the folded query q in one of fields'
// folded columns by instr() on every row: the exact substring test the trigram index
// answers for a query of a trigram or more, without the index.
func scanCondition(q string, fields []*store.Field) (string, []any) {
	conds := make([]string, len(fields))
	args := make([]any, len(fields))
	for i, sf := range fields {
		conds[i], args[i] = "instr("+store.FoldColumn(sf.Name)+", ?) > 0", q
	}
	return "(" + strings.Join(conds, " OR ") + ")", args
}

// scanShare is the share of the rows (1/scanShare) from which streamSearchCondition reads a
// search by scanning the table rather than through the trigram index. The index costs per
// match (each of the phrase's trigrams' entries, and the union of the searched fields' ids),
// the scan per row (instr() on the folded columns of a row that is read anyway when it
// matches): for a 12-character query over 100,000 products, 1.1 µs a match against 0.4 to
// 0.9 µs a row, so the two meet between a third and four fifths of the rows matching. A
// quarter keeps the scan to where it is no dearer than the index with the probe added.
var scanShare int64 = 4

// streamSearchCondition is searchCondition for a stream of every match of f (no Limit):
// when the query matches at least 1/scanShare of the rows above f.AfterID, the instr() scan
// of scanCondition, which finds the same records, else the trigram index. It probes the
// index for that many matches at most (LIMIT), so the probe of a query that matches most
// rows stops early and that of a rare one costs what its lookup costs. A record matching in
// two fields counts twice: the choice leans to the scan, and either finds the same records.
func (db *DB) streamSearchCondition(ctx context.Context, f store.Filter) (string, []any, error) {
	folded := store.SearchFold(f.Search)
	fields := db.reg.SearchFields(f.Kind)
	if len(fields) == 0 || !store.IndexedQuery(folded) {
		return db.searchCondition(f)
	}
	t, err := table(f.Kind)
	if err != nil {
		return "", nil, err
	}
	var top sql.NullInt64
	if err := db.read.QueryRowContext(ctx, "SELECT max(id) FROM "+t).Scan(&top); err != nil {
		return "", nil, err
	}
	need := (top.Int64 - f.AfterID) / scanShare
	if need < 1 {
		need = 1
	}
	phrase := ftsPhrase(folded)
	found := int64(0)
	for _, sf := range fields {
		st, err := searchTable(f.Kind, sf.Name)
		if err != nil {
			return "", nil, err
		}
		var n int64
		probe := "SELECT count(*) FROM (SELECT 1 FROM " + st + " WHERE " + st + " MATCH ? AND rowid > ? LIMIT ?)"
		if err := db.read.QueryRowContext(ctx, probe, phrase, f.AfterID, need-found).Scan(&n); err != nil {
			return "", nil, err
		}
		if found += n; found >= need {
			cond, args := scanCondition(folded, fields)
			return cond, args, nil
		}
	}
	return db.searchCondition(f)
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
