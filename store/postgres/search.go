package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// searchTextMigration is the end of the name of the migration that indexes the folded
// columns (and adds those of the text fields).
const searchTextMigration = "_search_text.sql"

// trgmLockPurpose serializes installing pg_trgm across the schemas of one database.
const trgmLockPurpose = "tandem pg_trgm extension"

// searchCondition returns the WHERE condition that finds the records of kind matching query
// in the registry's searched fields (store/search.go decides the fields and the folding),
// with "$?" for its one argument, and that argument. A query of a trigram or more is a LIKE
// of the folded query, its wildcards escaped, which the pg_trgm GIN indexes answer; a
// shorter one, which a trigram index cannot answer, is strpos() on every row. Both are the
// exact substring test the other stores make.
func (db *DB) searchCondition(kind store.Kind, query string) (string, any) {
	q := store.SearchFold(query)
	fields := db.reg.SearchFields(kind)
	if len(fields) == 0 {
		// A registry that searches no field finds nothing (the argument is there for add).
		return "(false AND $?::text IS NULL)", q
	}
	ors := make([]string, len(fields))
	for i, f := range fields {
		col := ident(store.FoldColumn(f.Name))
		if store.IndexedQuery(q) {
			ors[i] = col + " LIKE $?"
		} else {
			ors[i] = "strpos(" + col + ", $?) > 0"
		}
	}
	var arg any = q
	if store.IndexedQuery(q) {
		arg = likeContains(q)
	}
	return "(" + strings.Join(ors, " OR ") + ")", arg
}

// likeContains returns the LIKE pattern that matches text containing s: s with LIKE's
// wildcards and its escape character (backslash, the default) escaped, between two %.
func likeContains(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// afterSearchMigration runs the Go part of a migration that adds folded columns: it fills
// them for the records that exist, and the search_text migration then indexes every folded
// column.
func afterSearchMigration(ctx context.Context, tx pgx.Tx, migration string) error {
	if err := fillFolds(ctx, tx, migration); err != nil {
		return err
	}
	if strings.HasSuffix(migration, searchTextMigration) {
		return searchIndexes(ctx, tx)
	}
	return nil
}

// searchIndexes creates a pg_trgm GIN index on every folded column, installing the
// extension in the public schema when the database has none (see the migration's header).
func searchIndexes(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(trgmLockPurpose)); err != nil {
		return err
	}
	var schema string
	err := tx.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'pg_trgm'`).Scan(&schema)
	if errors.Is(err, pgx.ErrNoRows) {
		schema = "public"
		if _, err := tx.Exec(ctx, "CREATE EXTENSION pg_trgm SCHEMA public"); err != nil {
			return store.Errorf(store.EUNAVAILABLE,
				"full-text search needs the pg_trgm extension, which this role cannot install (%s); "+
					"have the database owner run CREATE EXTENSION pg_trgm, then open the store again", pgMessage(err))
		}
	} else if err != nil {
		return err
	}
	opclass := ident(schema) + ".gin_trgm_ops"
	for _, kind := range store.Kinds {
		t, err := table(kind)
		if err != nil {
			return err
		}
		for _, name := range store.FoldedFields(kind) {
			col := store.FoldColumn(name)
			if _, err := tx.Exec(ctx, "CREATE INDEX "+ident(t+"_"+col+"_trgm")+" ON "+t+
				" USING gin ("+ident(col)+" "+opclass+")"); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillFolds gives every record the folded columns that the migration named migration adds
// (store.FoldedFieldsAddedBy), with store.FoldValue of the stored values: what a write of
// the fields gives. One UPDATE per kind: the values travel as arrays.
func fillFolds(ctx context.Context, tx pgx.Tx, migration string) error {
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
		cols := make([]string, len(names))
		for i, name := range names {
			if fields[i], err = reg.Field(kind, name); err != nil {
				return err
			}
			cols[i] = ident(name)
		}
		rows, err := tx.Query(ctx, "SELECT id, "+strings.Join(cols, ", ")+" FROM "+t)
		if err != nil {
			return err
		}
		var ids []int64
		folded := make([][]string, len(fields))
		for rows.Next() {
			var id int64
			dest := []any{&id}
			for _, f := range fields {
				if f.Type == store.TypeSet {
					dest = append(dest, new([]string))
				} else {
					dest = append(dest, new(*string))
				}
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
			for i, d := range dest[1:] {
				var v any
				switch d := d.(type) {
				case *[]string:
					v = *d
				case **string:
					if *d != nil {
						v = **d
					}
				}
				folded[i] = append(folded[i], store.FoldValue(v))
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		args := []any{ids}
		sets := make([]string, len(fields))
		unnest := []string{"$1::bigint[]"}
		as := []string{"id"}
		for i, name := range names {
			args = append(args, folded[i])
			sets[i] = ident(store.FoldColumn(name)) + " = f.c" + strconv.Itoa(i)
			unnest = append(unnest, "$"+strconv.Itoa(i+2)+"::text[]")
			as = append(as, "c"+strconv.Itoa(i))
		}
		if _, err := tx.Exec(ctx, "UPDATE "+t+" r SET "+strings.Join(sets, ", ")+" FROM unnest("+
			strings.Join(unnest, ", ")+") AS f("+strings.Join(as, ", ")+") WHERE r.id = f.id", args...); err != nil {
			return err
		}
	}
	return nil
}
