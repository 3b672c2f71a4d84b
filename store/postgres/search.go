package postgres

import (
	"context"
	"errors"
	"fmt"
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

// searchTable returns the table (quoted) that holds the folded text of field of the kind
// whose table is table, with its trigram index (see the search_text migration's header).
func searchTable(table, field string) string { return ident(searchTableName(table, field)) }

func searchTableName(table, field string) string { return objName(table, field, "search") }

// searchCondition returns the WHERE condition that finds the records of f.Kind matching
// f.Search in the registry's searched fields (store/search.go decides the fields and the
// folding), with its arguments numbered from $n+1.
//
// A query of a trigram or more is a LIKE of the folded query (its wildcards escaped) in each
// searched field's search table, which its pg_trgm GIN index answers. Each lookup delivers
// ids in order and, when the filter pages by id (AfterID, Limit) without naming ids, stops
// after the page: the planner then walks the table's primary key for a word in most records
// and uses the trigram index for a rare one. A shorter query, which a trigram index cannot
// answer, is strpos() on every row of the record table's folded columns. Both are the exact
// substring test the other stores make.
func (db *DB) searchCondition(f store.Filter, n int) (string, []any) {
	q := store.SearchFold(f.Search)
	fields := db.Registry().SearchFields(f.Kind)
	if len(fields) == 0 {
		return "false", nil // a registry that searches no field finds nothing
	}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(n+len(args))
	}
	if !store.IndexedQuery(q) {
		return scanCondition(q, fields, n)
	}
	like := arg(likeContains(q))
	// Only a listing in id order pages by id: a sorted one's page is the first by its sort
	// field, which may be any of the matches.
	page := len(f.IDs) == 0 && f.Sort == ""
	var after, limit string
	if page && f.AfterID > 0 {
		after = " AND id > " + arg(f.AfterID)
	}
	if page && f.Limit > 0 {
		// The first Limit ids of the union are among the first Limit of each lookup.
		limit = " ORDER BY id LIMIT " + arg(f.Limit)
	}
	lookups := make([]string, len(fields))
	t, _ := db.Registry().Table(f.Kind) // the kind is known good: SearchFields has it
	for i, sf := range fields {
		lookups[i] = "(SELECT id FROM " + searchTable(t, sf.Name) + " WHERE fold LIKE " + like + after + limit + ")"
	}
	return "id IN (" + strings.Join(lookups, " UNION ALL ") + ")", args
}

// scanCondition returns the condition that finds the folded query q in one of fields'
// folded columns by strpos() on every row of the record table, its argument numbered $n+1:
// the exact substring test the trigram indexes answer for a query of a trigram or more.
func scanCondition(q string, fields []*store.Field, n int) (string, []any) {
	p := "$" + strconv.Itoa(n+1)
	ors := make([]string, len(fields))
	for i, sf := range fields {
		ors[i] = "strpos(" + ident(store.FoldColumn(sf.Name)) + ", " + p + ") > 0"
	}
	return "(" + strings.Join(ors, " OR ") + ")", []any{q}
}

// scanShare is the share of the rows (1/scanShare) from which streamSearchCondition reads a
// search by scanning the record table rather than through the search tables. The lookups
// cost per match (the index or a scan of each search table, then the union of the ids,
// hashed and sorted, joined to the records), the scan per row (strpos() on the folded
// columns of a row that is read anyway when it matches): for a query every one of 100,000
// products matches, 430 ms against 80 ms (EXPLAIN ANALYZE). A quarter keeps the scan to
// where it is no dearer than the lookups with the probe added.
var scanShare int64 = 4

// streamSearchCondition is searchCondition (arguments from $1) for a stream of every match
// of f (no Limit): when the query matches at least 1/scanShare of the rows above f.AfterID,
// the strpos() scan of scanCondition, which finds the same records, else the lookups. It
// probes each search table for that many matches at most (LIMIT), so the probe of a query
// that matches most rows stops early and that of a rare one costs what its lookup costs. A
// record matching in two fields counts twice: the choice leans to the scan, and either
// finds the same records.
func (db *DB) streamSearchCondition(ctx context.Context, q querier, f store.Filter) (string, []any, error) {
	folded := store.SearchFold(f.Search)
	fields := db.Registry().SearchFields(f.Kind)
	if len(fields) == 0 || !store.IndexedQuery(folded) {
		cond, args := db.searchCondition(f, 0)
		return cond, args, nil
	}
	t, err := db.Registry().Table(f.Kind)
	if err != nil {
		return "", nil, err
	}
	var top *int64
	if err := q.QueryRow(ctx, "SELECT max(id) FROM "+ident(t)).Scan(&top); err != nil {
		return "", nil, err
	}
	if top == nil {
		top = new(int64)
	}
	need := max((*top-f.AfterID)/scanShare, 1)
	like := likeContains(folded)
	found := int64(0)
	for _, sf := range fields {
		var n int64
		probe := "SELECT count(*) FROM (SELECT 1 FROM " + searchTable(t, sf.Name) + " WHERE fold LIKE $1 AND id > $2 LIMIT $3) p"
		if err := q.QueryRow(ctx, probe, searchExecMode([]any{like, f.AfterID, need - found})...).Scan(&n); err != nil {
			return "", nil, err
		}
		if found += n; found >= need {
			cond, args := scanCondition(folded, fields, 0)
			return cond, args, nil
		}
	}
	cond, args := db.searchCondition(f, 0)
	return cond, args, nil
}

// searchExecMode has a search planned with its values every time: pgx's statement cache
// would prepare it, and after five runs PostgreSQL may keep a generic plan, which cannot tell
// a rare word (the trigram index) from a common one (the primary key, stopping after a page)
// and took 63 ms instead of 3 for a page of a word in every record. An unnamed statement
// (its parameter types taken from the Go values: text, bigint, bigint[]) is planned for its
// values, in one round trip.
func searchExecMode(args []any) []any {
	return append([]any{pgx.QueryExecModeExec}, args...)
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

// searchIndexes creates, for every folded column of the tables the migrations made, its
// search table (searchTableDDL).
func searchIndexes(ctx context.Context, tx pgx.Tx) error {
	ext, err := trgmSchema(ctx, tx)
	if err != nil {
		return err
	}
	var schema string
	if err := tx.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	for _, kind := range migratedSchema.Kinds() {
		t, _ := migratedSchema.Table(kind)
		for _, name := range migratedSchema.FoldedFields(kind) {
			for _, q := range searchTableDDL(schema, ext, t, name) {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// trgmSchema returns the schema pg_trgm is installed in, installing it in the public schema
// when the database has none (see the search_text migration's header).
func trgmSchema(ctx context.Context, tx pgx.Tx) (string, error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(trgmLockPurpose)); err != nil {
		return "", err
	}
	var ext string
	err := tx.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'pg_trgm'`).Scan(&ext)
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := tx.Exec(ctx, "CREATE EXTENSION pg_trgm SCHEMA public"); err != nil {
			return "", store.Errorf(store.EUNAVAILABLE,
				"full-text search needs the pg_trgm extension, which this role cannot install (%s); "+
					"have the database owner run CREATE EXTENSION pg_trgm, then open the store again", pgMessage(err))
		}
		return "public", nil
	}
	return ext, err
}

// searchTableDDL returns the statements that make the search table of table's folded column
// of field, in schema, with pg_trgm in the schema ext: the table (id, fold) with a pg_trgm
// GIN index, filled from the rows there are, a trigger that keeps it current on every
// insert and every write of the column but a bulk create's COPY, which writes the search
// rows of its records itself, set-wise (copySearch), and the triggers that remove the rows
// of deleted records (searchGoneDDL). The text is indexed in a table of its own so that a
// write of other columns (a title, the stock) does not re-index a long body: a GIN index on
// the record table would get the whole body's trigrams again for every new row version.
// Names are schema-qualified: the trigger runs on the writer's search_path.
func searchTableDDL(schema, ext, table, field string) []string {
	st := searchTableName(table, field)
	qt := ident(schema) + "." + ident(table)
	qst := ident(schema) + "." + ident(st)
	col := ident(store.FoldColumn(field))
	fn := ident(schema) + "." + ident(objName(st, "sync"))
	return append([]string{
		"CREATE TABLE " + qst + " (id bigint PRIMARY KEY, fold text)",
		"INSERT INTO " + qst + " (id, fold) SELECT id, " + col + " FROM " + qt,
		"CREATE INDEX " + ident(objName(st, "trgm")) + " ON " + qst + " USING gin (fold " + ident(ext) + ".gin_trgm_ops)",
		"ALTER TABLE " + qst + " ALTER COLUMN fold SET STATISTICS 400",
		"CREATE FUNCTION " + fn + "() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN " +
			"INSERT INTO " + qst + " (id, fold) VALUES (NEW.id, NEW." + col + ") " +
			"ON CONFLICT (id) DO UPDATE SET fold = EXCLUDED.fold; RETURN NULL; END $f$",
		"CREATE TRIGGER " + ident(objName(st, "sync")) + " AFTER INSERT OR UPDATE OF " + col + " ON " + qt +
			" FOR EACH ROW WHEN (" + notLoading + ") EXECUTE FUNCTION " + fn + "()",
	}, searchGoneDDL(schema, table, st)...)
}

// searchGoneDDL returns the statements that make the triggers removing the rows of the
// search table st (in schema) whose records of table are deleted, by tandem or by any other
// program, at the end of the statement that deletes them, as a cascading foreign key would,
// moving them with a record whose id another program changes (as SQLite's search table
// follows its records), and refusing a TRUNCATE of table, which would drop records without
// the tombstones and changes an outside DELETE leaves (the foreign key refused it too). Not a foreign key: its check, a lookup and a lock of the record's row
// for every search row written, was half the writing of the rows in a bulk create, and a
// delete costs one statement per search table either way. Nothing else writes a
// search row but for a record that exists in the same transaction (its trigger, a create's
// copySearch, the migrations' fill).
func searchGoneDDL(schema, table, st string) []string {
	qt := ident(schema) + "." + ident(table)
	qst := ident(schema) + "." + ident(st)
	fn := ident(schema) + "." + ident(objName(st, "gone"))
	return []string{
		"CREATE FUNCTION " + fn + "() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN " +
			"IF TG_OP = 'TRUNCATE' THEN RAISE EXCEPTION USING ERRCODE = 'restrict_violation', MESSAGE = " +
			quoteText("tandem: TRUNCATE "+table+" would drop its records without a trace in history or the change feed; "+
				"DELETE them instead (each delete is kept, and can be restored)") + "; " +
			"ELSIF TG_OP = 'UPDATE' THEN UPDATE " + qst + " SET id = NEW.id WHERE id = OLD.id; " +
			"ELSE DELETE FROM " + qst + " WHERE id IN (SELECT id FROM gone); END IF; RETURN NULL; END $f$",
		"CREATE TRIGGER " + ident(objName(st, "gone")) + " AFTER DELETE ON " + qt +
			" REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION " + fn + "()",
		"CREATE TRIGGER " + ident(objName(st, "truncate")) + " BEFORE TRUNCATE ON " + qt +
			" FOR EACH STATEMENT EXECUTE FUNCTION " + fn + "()",
		"CREATE TRIGGER " + ident(objName(st, "moved")) + " AFTER UPDATE OF id ON " + qt +
			" FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION " + fn + "()",
	}
}

// searchGoneMigration is the end of the name of the migration that gives the search tables
// searchGoneDDL's triggers in place of their foreign keys.
const searchGoneMigration = "_search_gone.sql"

// searchGone replaces the foreign key of every search table of the store's schema (made
// before migration search_gone) by searchGoneDDL's triggers, in the migration's
// transaction. A search table is known by its shape (id, fold, its id referencing a
// record table's with ON DELETE CASCADE) and its sync function, whatever kind it serves.
func searchGone(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT current_schema()::text, c.conname::text, r.relname::text, f.relname::text
		FROM pg_constraint c
		JOIN pg_class r ON r.oid = c.conrelid
		JOIN pg_class f ON f.oid = c.confrelid
		WHERE r.relnamespace = current_schema()::regnamespace AND c.contype = 'f' AND c.confdeltype = 'c'
		  AND c.conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = r.oid AND attname = 'id')]
		  AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = r.oid AND attname = 'fold' AND NOT attisdropped)
		ORDER BY r.relname`)
	if err != nil {
		return fmt.Errorf("find the search tables: %w", err)
	}
	type fk struct{ schema, name, st, table string }
	var fks []fk
	for rows.Next() {
		var k fk
		if err := rows.Scan(&k.schema, &k.name, &k.st, &k.table); err != nil {
			rows.Close()
			return err
		}
		fks = append(fks, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("find the search tables: %w", err)
	}
	for _, k := range fks {
		var sync bool
		if err := tx.QueryRow(ctx, "SELECT to_regproc($1) IS NOT NULL", ident(k.schema)+"."+ident(objName(k.st, "sync"))).Scan(&sync); err != nil {
			return err
		}
		if !sync {
			continue
		}
		stmts := append([]string{"ALTER TABLE " + ident(k.schema) + "." + ident(k.st) + " DROP CONSTRAINT " + ident(k.name)},
			searchGoneDDL(k.schema, k.table, k.st)...)
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("search table %s: %w", k.st, err)
			}
		}
	}
	return nil
}

// loadSetting is the setting a bulk create turns on (for its transaction) while it copies
// records in, and notLoading the condition of the search tables' triggers that it is off:
// the triggers' row-by-row inserts (each a plpgsql call and a GIN insert of its own) cost
// a load more than the records themselves; copySearch writes the same rows after the COPY,
// with a COPY of its own per folded field. searchTableDDL makes every search trigger with
// the condition, and migration 0014 gave it to those of stores made before it; a tandem
// that predates the migration refuses the store, so no trigger without it remains.
const (
	loadSetting = "tandem.load"
	notLoading  = "current_setting('" + loadSetting + "', true) IS DISTINCT FROM 'on'"
)

// copySearch writes the search rows of the records of kind with ids that plans describe
// (just copied in, with loadSetting on), a COPY per folded field of the folded values the
// records were written with (plans' Extra columns). A record whose folded value is empty
// or NULL gets no row in that field's table: a search is a LIKE of a trigram or more, which
// neither matches, so the record is found (or not) as with the row, and a later write of
// the field gets its row from the trigger's upsert. The ids are new (the kind's sequence),
// so no row of theirs is there already (searchGoneDDL removes a deleted record's); were
// one there, the COPY's unique violation rolls the load back and the records are created
// one by one.
func copySearch(ctx context.Context, tx pgx.Tx, reg *store.Registry, kind store.Kind, ids []int64, plans []*store.CreatePlan) error {
	folded := reg.FoldedFields(kind)
	if len(folded) == 0 {
		return nil
	}
	t, err := reg.Table(kind)
	if err != nil {
		return err
	}
	for _, name := range folded {
		col := store.FoldColumn(name)
		var rows [][]any
		for i, p := range plans {
			for _, c := range p.Extra {
				if c.Name != col {
					continue
				}
				if c.Value != "" {
					rows = append(rows, []any{ids[i], c.Value})
				}
				break
			}
		}
		if len(rows) == 0 {
			continue
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{searchTableName(t, name)}, []string{"id", "fold"}, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("write the search text of %d %ss (%s): %w", len(rows), kind, name, err)
		}
	}
	return nil
}

// fillFolds gives every record the folded columns that the migration named migration adds
// (store.FoldedFieldsAddedBy), with store.FoldValue of the stored values: what a write of
// the fields gives. One UPDATE per kind: the values travel as arrays.
func fillFolds(ctx context.Context, tx pgx.Tx, migration string) error {
	reg := migratedSchema
	for _, kind := range reg.Kinds() {
		names := store.FoldedFieldsAddedBy(migration, kind)
		if len(names) == 0 {
			continue
		}
		t, err := reg.Table(kind)
		if err != nil {
			return err
		}
		fields := make([]*store.Field, len(names))
		for i, name := range names {
			if fields[i], err = reg.Field(kind, name); err != nil {
				return err
			}
		}
		if err := fillFoldColumns(ctx, tx, t, fields); err != nil {
			return err
		}
	}
	return nil
}

// fillFoldColumns sets the folded column of each of fields (store.FoldColumn) of every row of
// table to store.FoldValue of the stored value: what a write of the fields gives. One UPDATE:
// the values travel as arrays.
func fillFoldColumns(ctx context.Context, tx pgx.Tx, table string, fields []*store.Field) error {
	t := ident(table)
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = ident(f.Name)
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
	for i, f := range fields {
		args = append(args, folded[i])
		sets[i] = ident(store.FoldColumn(f.Name)) + " = f.c" + strconv.Itoa(i)
		unnest = append(unnest, "$"+strconv.Itoa(i+2)+"::text[]")
		as = append(as, "c"+strconv.Itoa(i))
	}
	_, err = tx.Exec(ctx, "UPDATE "+t+" r SET "+strings.Join(sets, ", ")+" FROM unnest("+
		strings.Join(unnest, ", ")+") AS f("+strings.Join(as, ", ")+") WHERE r.id = f.id", args...)
	return err
}
