package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// A kind's search text lives in two objects, whatever the number of its searched fields:
// a side table (foldTable) with one row per record and folded field, and its FTS5 trigram
// index (searchTable). A row's key is the record's id shifted left by slotBits, or'ed
// with the field's slot (search_slots, migration 0017): keys sort as ids do, so a lookup
// in key order delivers ids in order, and a record's rows are one range of keys. A kind of
// 40 fields with 10 searched has two search tables, not twenty: what every connection
// parses when it opens the file grows with the kinds, not with their searched fields.

// slotBits is the width of a field's slot in a search row's key: room for more slots
// than a kind has fields (store.MaxFieldsPerKind).
const slotBits = 10

// slotMask keeps the slot of a search row's key.
const slotMask = 1<<slotBits - 1

// slotsTable maps each folded field of each kind's table to its slot in the kind's search
// keys (migration 0017).
const slotsTable = "search_slots"

// searchTable returns the FTS5 table that indexes the folded text of kind's fields in reg
// (its external content is the kind's foldTable), not quoted.
func searchTable(reg *store.Registry, kind store.Kind) (string, error) {
	t, err := reg.Table(kind)
	if err != nil {
		return "", err
	}
	return t + "_fts", nil
}

// foldTable returns the side table that holds the folded text (store.FoldValue) of kind's
// folded fields, one row (key, fold) per record and field. The fold lives there, not in
// the record's row, because SQLite rewrites a whole row on every UPDATE: a title edit would
// rewrite the body's fold with it. The name is not quoted.
func foldTable(reg *store.Registry, kind store.Kind) (string, error) {
	t, err := reg.Table(kind)
	if err != nil {
		return "", err
	}
	return t + "_search", nil
}

// searchSlot returns the slot of field of the kind whose table is table in its search keys.
func searchSlot(ctx context.Context, q rowQueryer, table, field string) (int64, error) {
	var slot int64
	err := q.QueryRowContext(ctx, "SELECT slot FROM "+slotsTable+" WHERE tbl = ? AND field = ?", table, field).Scan(&slot)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, store.Errorf(store.EINTERNAL, "%s.%s has no search slot; the store's search tables are damaged", table, field)
	}
	if err != nil {
		return 0, fmt.Errorf("read the search slot of %s.%s: %w", table, field, err)
	}
	return slot, nil
}

// searchKey is the key of record id's search row for the field in slot.
func searchKey(id, slot int64) int64 { return id<<slotBits | slot }

// slotsOf returns the SQL expression, and its arguments, of the slots of table's fields in
// fields: what a lookup keeps of the kind's search rows.
func slotsOf(table string, fields []*store.Field) (string, []any) {
	args := []any{table}
	for _, f := range fields {
		args = append(args, f.Name)
	}
	return "(SELECT slot FROM " + slotsTable + " WHERE tbl = ? AND field IN (" + placeholders(len(fields)) + "))", args
}

// placeholders returns n comma-separated parameters.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// searchCondition returns the WHERE condition, and its arguments, that finds the records of
// f.Kind matching f.Search in the registry's searched fields (store/search.go decides the
// fields and the folding).
//
// A query of a trigram or more is looked up in the kind's FTS5 trigram index (searchTable).
// A phrase of trigrams matches where they follow each other, that is exactly where the
// folded query is a substring of the folded text (the indexed text is folded already and
// compared as it is), so the index's answer is the answer. A shorter query, which a trigram
// index cannot answer, is instr() on every row of the kind's side table (foldTable): an
// exact substring test with no wildcards. Either keeps the rows of the searched fields'
// slots alone: a field no longer searched may keep its rows.
//
// The lookup delivers keys, so ids, in order and, when the filter pages by id (AfterID,
// Limit) without naming ids or sorting by a field, stops after the page: a word in every
// record costs a page of index reads, not 100,000, and a short query common enough to fill
// the page stops early.
func (db *DB) searchCondition(f store.Filter) (string, []any, error) {
	q := store.SearchFold(f.Search)
	indexed, err := db.searchIndexed(db.ctx, f.Kind) // a fresh clone's may wait to be built
	if err != nil {
		return "", nil, err
	}
	return db.lookupCondition(f, q, indexed && store.IndexedQuery(q))
}

// lookupCondition is searchCondition for the folded query q, looked up in the trigram
// index when indexed, else by instr() on the side table's rows.
func (db *DB) lookupCondition(f store.Filter, q string, indexed bool) (string, []any, error) {
	reg := db.Registry()
	fields := reg.SearchFields(f.Kind)
	if len(fields) == 0 {
		return "0", nil, nil // a registry that searches no field finds nothing
	}
	t, err := reg.Table(f.Kind)
	if err != nil {
		return "", nil, err
	}
	var (
		lookup, key string // key: the lookup's column of search keys
		args        []any
	)
	if indexed {
		st, err := searchTable(reg, f.Kind)
		if err != nil {
			return "", nil, err
		}
		st = quoteIdent(st)
		lookup, key = "SELECT rowid FROM "+st+" WHERE "+st+" MATCH ?", "rowid"
		args = append(args, ftsPhrase(q))
	} else {
		ft, err := foldTable(reg, f.Kind)
		if err != nil {
			return "", nil, err
		}
		lookup, key = "SELECT key FROM "+quoteIdent(ft)+" WHERE instr(fold, ?) > 0", "key"
		args = append(args, q)
	}
	slots, slotArgs := slotsOf(t, fields)
	lookup += " AND (" + key + " & " + strconv.Itoa(slotMask) + ") IN " + slots
	args = append(args, slotArgs...)
	// Only a listing in id order pages by id: a sorted one's page is the first by its sort
	// field, which may be any of the matches.
	if page := len(f.IDs) == 0 && f.Sort == ""; page {
		if f.AfterID > 0 {
			lookup += " AND " + key + " > ?"
			args = append(args, searchKey(f.AfterID, slotMask))
		}
		if f.Limit > 0 {
			// A record has a row per searched field at most: its first Limit ids are
			// among the first Limit times as many rows.
			lookup += " ORDER BY " + key + " LIMIT ?"
			args = append(args, f.Limit*len(fields))
		}
	}
	return "id IN (SELECT " + key + " >> " + strconv.Itoa(slotBits) + " FROM (" + lookup + "))", args, nil
}

// ftsPhrase returns the folded query q as an FTS5 phrase: in double quotes it goes to the
// tokenizer as it is (a quote is doubled).
func ftsPhrase(q string) string { return `"` + strings.ReplaceAll(q, `"`, `""`) + `"` }

// scanShare is the share of the rows (1/scanShare) from which streamSearchCondition reads a
// search by scanning the table rather than through the trigram index. The index costs per
// match (each of the phrase's trigrams' entries), the scan per row (instr() on each fold,
// read in order). Measured with the folds in the record's row, for a 12-character query
// over 100,000 products: 1.1 µs a match against 0.4 to 0.9 µs a row, so the two met between
// a third and four fifths of the rows matching. A quarter keeps the scan to where it is no
// dearer than the index with the probe added.
var scanShare int64 = 4

// streamSearchCondition is searchCondition for a stream of every match of f (no Limit):
// when the query matches at least 1/scanShare of the records above f.AfterID, the instr()
// scan of the side table (lookupCondition), which finds the same records, else the trigram
// index. It probes the index for that many matches at most (LIMIT), so the probe of a query
// that matches most rows stops early and that of a rare one costs what its lookup costs. A
// record matching in two fields counts twice: the choice leans to the scan, and either finds
// the same records.
func (db *DB) streamSearchCondition(ctx context.Context, f store.Filter) (string, []any, error) {
	folded := store.SearchFold(f.Search)
	reg := db.Registry()
	fields := reg.SearchFields(f.Kind)
	if len(fields) == 0 || !store.IndexedQuery(folded) {
		return db.searchCondition(f)
	}
	if indexed, err := db.searchIndexed(ctx, f.Kind); err != nil || !indexed {
		if err != nil {
			return "", nil, err
		}
		return db.lookupCondition(f, folded, false)
	}
	t, err := reg.Table(f.Kind)
	if err != nil {
		return "", nil, err
	}
	var top sql.NullInt64
	if err := db.read.QueryRowContext(ctx, "SELECT max(id) FROM "+quoteIdent(t)).Scan(&top); err != nil {
		return "", nil, err
	}
	need := max((top.Int64-f.AfterID)/scanShare, 1)
	st, err := searchTable(reg, f.Kind)
	if err != nil {
		return "", nil, err
	}
	st = quoteIdent(st)
	slots, slotArgs := slotsOf(t, fields)
	probe := "SELECT count(*) FROM (SELECT 1 FROM " + st + " WHERE " + st + " MATCH ? AND rowid > ? AND (rowid & " +
		strconv.Itoa(slotMask) + ") IN " + slots + " LIMIT ?)"
	args := append(append([]any{ftsPhrase(folded), searchKey(f.AfterID, slotMask)}, slotArgs...), need)
	var found int64
	if err := db.read.QueryRowContext(ctx, probe, args...).Scan(&found); err != nil {
		return "", nil, err
	}
	if found >= need {
		// The scan: every row of the side table above AfterID, instr() on its fold.
		return db.lookupCondition(f, folded, false)
	}
	return db.searchCondition(f)
}

// execer runs a statement: a write transaction (tx), or a working copy's (wcTx), which
// prepares its statements once.
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// foldUpsert returns the statement that writes n rows (key, fold) into the side table ft: a
// row is replaced, unless it holds that fold already (then its index is not touched).
func foldUpsert(ft string, n int) string {
	return "INSERT INTO " + quoteIdent(ft) + " (key, fold) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?), ", n), ", ") +
		" ON CONFLICT (key) DO UPDATE SET fold = excluded.fold WHERE fold IS NOT excluded.fold"
}

// writeFolds writes the folds of record id of kind into its side table (foldTable), in the
// caller's write transaction: folds maps a folded column (store.FoldColumn) to its value,
// as store.Folds, SavePlan.Folds and store.ExtraColumns give them. Only the fields in folds
// are written, so a save writes the folds of the fields it changes and no other: a title
// edit leaves the body's fold, and its index entries, alone. The FTS5 index follows through
// the side table's triggers. reg is the schema the folds are of.
func writeFolds(ctx context.Context, q execer, reg *store.Registry, kind store.Kind, id int64, folds map[string]string) error {
	return writeFoldsBulk(ctx, q, reg, kind, []int64{id}, []map[string]string{folds})
}

// writeFoldsBulk writes, as writeFolds does, the folds of many records of kind: folds[i] is
// record ids[i]'s. One statement per folded field, for a bulk write of records (a clone).
func writeFoldsBulk(ctx context.Context, q execer, reg *store.Registry, kind store.Kind, ids []int64, folds []map[string]string) error {
	if len(ids) != len(folds) {
		return fmt.Errorf("write search text: %d ids for %d records' folds", len(ids), len(folds))
	}
	var t, ft string
	for _, name := range reg.FoldedFields(kind) {
		col := store.FoldColumn(name)
		var args []any
		for i := range ids {
			if v, ok := folds[i][col]; ok {
				args = append(args, ids[i], v)
			}
		}
		if len(args) == 0 {
			continue
		}
		if ft == "" {
			var err error
			if t, err = reg.Table(kind); err != nil {
				return err
			}
			if ft, err = foldTable(reg, kind); err != nil {
				return err
			}
		}
		slot, err := searchSlot(ctx, q, t, name)
		if err != nil {
			return err
		}
		for i := 0; i < len(args); i += 2 {
			args[i] = searchKey(args[i].(int64), slot)
		}
		if _, err := q.ExecContext(ctx, foldUpsert(ft, len(args)/2), args...); err != nil {
			return fmt.Errorf("write the search text of %d %ss (%s): %w", len(args)/2, kind, name, err)
		}
	}
	return nil
}

// splitFolds separates, from the derived columns of a create or a restore
// (store.ExtraColumns), the folded ones, which live in side tables (writeFolds), from those
// of the record's row.
func splitFolds(reg *store.Registry, kind store.Kind, extra []store.Column) (row []store.Column, folds map[string]string) {
	for _, c := range extra {
		if isFoldColumn(reg, kind, c.Name) {
			if folds == nil {
				folds = map[string]string{}
			}
			folds[c.Name] = c.Value
		} else {
			row = append(row, c)
		}
	}
	return row, folds
}

// isFoldColumn reports whether col is the folded column (store.FoldColumn) of one of kind's
// folded fields in reg.
func isFoldColumn(reg *store.Registry, kind store.Kind, col string) bool {
	for _, name := range reg.FoldedFields(kind) {
		if store.IsFoldColumn(col, name) {
			return true
		}
	}
	return false
}

// afterSearchMigration runs the Go part of a migration that adds folded columns: it fills
// them for the records that exist (the search_text migration's script has created the
// index and its triggers, which follow).
func afterSearchMigration(ctx context.Context, tx *sql.Tx, migration string) error {
	return fillFolds(ctx, tx, migration)
}

// fillFolds gives every record the folded columns that the migration named migration adds
// (store.FoldedFieldsAddedBy), with store.FoldValue of the stored values: what a write of
// the fields gives. The search index follows through its triggers, where they exist. The
// migrations that add such columns come before search_side_tables, which moves the folds
// to side tables; a field folded after it would be filled with writeFoldsBulk instead.
func fillFolds(ctx context.Context, tx *sql.Tx, migration string) error {
	reg := store.DefaultRegistry() // field types are schema: every registry has these
	for _, kind := range sampleSchema.Kinds() {
		names := store.FoldedFieldsAddedBy(migration, kind)
		if len(names) == 0 {
			continue
		}
		t, err := sampleTable(kind)
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
