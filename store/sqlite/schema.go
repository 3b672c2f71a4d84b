package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/tandem-editor/tandem/store"
)

// The store keeps its schema (store.Registry) in tandem_schema (migration 0014), one row
// per version, the newest being the store's. Opening a store settles which schema it runs:
//
//   - A new store (this open made tandem's tables): the schema it is opened with
//     (store.Options.Registry; the sample schema when none is given, or when the one given
//     is of the form before schemas, which is an overlay of the sample) is recorded as
//     version 1 and the tables of its kinds are made, in the transaction that made the
//     store, so no other process ever sees it without its schema.
//   - A store made before stores kept their schema (no schema recorded): its tables are the
//     sample's, so the sample schema is recorded as version 1, whatever it is opened with,
//     and the rule below applies; its records stay as they are.
//   - A schema recorded: the store runs it. A registry given at open that is the recorded
//     schema (Registry.Same) changes nothing. One that differs only in what the tables do
//     not hold, labels, owners, rules, groups, limits and search flags of folded fields
//     (Registry.CheckOverlay), is an overlay, as a field registry of the form before
//     schemas always was: the store runs it in place of the recorded one, this time, for
//     this client. Any other is refused (EINVALID, "this store has schema version N"):
//     changing a store's kinds, tables or columns is a schema change, never a side effect
//     of opening it.
//
// A read-only store with no schema recorded runs the sample schema (the tables it has).

// schemaTable is where a store keeps its schema's versions.
const schemaTable = "tandem_schema"

// readSchema returns the newest schema recorded in the store, at its version, or nil when
// none is.
func (db *DB) readSchema(ctx context.Context, q rowQueryer) (*store.Registry, error) {
	var (
		v    int64
		text string
	)
	err := q.QueryRowContext(ctx, "SELECT version, yaml FROM "+schemaTable+" ORDER BY version DESC LIMIT 1").Scan(&v, &text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the store's schema: %w", err)
	}
	if reg, ok := parsedSchemas.Load(text); ok {
		return reg.(*store.Registry).WithVersion(v), nil
	}
	reg, err := store.ParseStoredRegistry(fmt.Sprintf("%s (version %d)", db.path, v), []byte(text))
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "the schema this store keeps cannot be read: %v", err)
	}
	parsedSchemas.Store(text, reg)
	return reg.WithVersion(v), nil
}

// parsedSchemas holds the schemas this process has read from stores, by their text: a
// Registry is immutable, and parsing the YAML was most of what opening a store cost.
var parsedSchemas sync.Map

// loadSchema settles the schema the store runs (see above) and sets db.reg to it, recording
// the sample's in a store made before stores kept their schema. asked is the registry the
// store was opened with, nil for none.
func (db *DB) loadSchema(ctx context.Context, asked *store.Registry) error {
	what := "open database " + db.path
	stored, err := db.readSchema(ctx, db.read)
	if err != nil {
		return mapErr(what, err)
	}
	if stored == nil && db.readOnly == "" {
		err := db.inTx(ctx, what+": record its schema", func(t *tx) error {
			// Again under the write lock: another process may have recorded it since.
			s, err := db.readSchema(ctx, t.Tx)
			if err != nil || s != nil {
				stored = s
				return err
			}
			if _, err := createKindTables(ctx, t.Tx, sampleSchema); err != nil {
				return err
			}
			if err := insertSchema(ctx, t, sampleSchema, 1); err != nil {
				return err
			}
			stored = sampleSchema.WithVersion(1)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if stored == nil {
		stored = sampleSchema // read-only and never recorded: the sample's tables
	}
	reg, err := runSchema(stored, asked)
	if err != nil {
		return err
	}
	db.reg.Store(reg)
	return nil
}

// recordNewSchema records the schema of a store the migration in t has just made: the one
// it is opened with (db.asked), or the sample when none is given or the one given is of
// the form before schemas; and makes its kinds' tables.
func (db *DB) recordNewSchema(ctx context.Context, t *tx) error {
	rec := db.asked
	if rec == nil || rec.Legacy() {
		rec = sampleSchema
	}
	if _, err := createKindTables(ctx, t.Tx, rec); err != nil {
		return err
	}
	return insertSchema(ctx, t, rec, 1)
}

// runSchema returns the schema a store whose recorded schema is stored runs when it is
// opened with asked (nil: none given), or EINVALID for a schema it may not be opened with.
func runSchema(stored, asked *store.Registry) (*store.Registry, error) {
	switch {
	case asked == nil:
		return stored, nil
	case asked.Same(stored):
		return stored, nil
	}
	if err := asked.CheckOverlay(stored); err != nil {
		return nil, store.Errorf(store.EINVALID,
			"this store has schema version %d (kinds %s), and the schema given differs from it (%v); "+
				"a store runs the schema it keeps, which only a schema change changes",
			stored.Version(), kindNames(stored), err)
	}
	return asked.WithVersion(stored.Version()), nil
}

// kindNames lists reg's kinds for a message.
func kindNames(reg *store.Registry) string {
	names := make([]string, len(reg.Kinds()))
	for i, k := range reg.Kinds() {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// insertSchema records reg as version v of the store's schema.
func insertSchema(ctx context.Context, t *tx, reg *store.Registry, v int64) error {
	by := "tandem"
	if a, err := store.ActorFrom(ctx); err == nil {
		by = a.Name
	}
	_, err := t.Tx.ExecContext(ctx, "INSERT INTO "+schemaTable+" (version, yaml, applied_at, applied_by) VALUES (?, ?, ?, ?)",
		v, string(reg.YAML()), formatTime(t.now), by)
	if err != nil {
		return fmt.Errorf("record the store's schema: %w", err)
	}
	return nil
}

// CreateTables makes, in one write transaction, the tables of reg's kinds that the store
// does not have yet (with their indexes and search tables; see KindDDL), and returns the
// kinds it made them for. A kind whose table exists is checked to have a column for each
// of its fields (EINVALID otherwise) and left as it is. It does not record reg: what a
// schema change that adds kinds runs before it records the new version.
func (db *DB) CreateTables(ctx context.Context, reg *store.Registry) ([]store.Kind, error) {
	var made []store.Kind
	err := db.inTx(ctx, "create tables", func(t *tx) error {
		var err error
		made, err = createKindTables(ctx, t.Tx, reg)
		return err
	})
	return made, mapErr("create tables", err)
}

// createKindTables is CreateTables in the caller's transaction.
func createKindTables(ctx context.Context, tx *sql.Tx, reg *store.Registry) ([]store.Kind, error) {
	var made []store.Kind
	for _, kind := range reg.Kinds() {
		t, err := reg.Table(kind)
		if err != nil {
			return nil, err
		}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", t).Scan(&n); err != nil {
			return nil, fmt.Errorf("look for table %s: %w", t, err)
		}
		if n > 0 {
			if err := checkColumns(ctx, tx, reg, kind, t); err != nil {
				return nil, err
			}
			continue
		}
		for _, stmt := range KindDDL(reg, kind) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				if strings.Contains(err.Error(), "already") {
					// The names of a kind's indexes and search tables are made of its
					// table's and fields' names, and another's may make the same one.
					return nil, store.Errorf(store.EINVALID, "kind %s: %v: a name made from its table's and fields' names is taken; rename its table or the field",
						kind, err)
				}
				return nil, fmt.Errorf("create the table of %s: %w", kind, err)
			}
		}
		made = append(made, kind)
	}
	return made, nil
}

// checkColumns refuses (EINVALID) an existing table t for kind that lacks a column of one of
// its fields or unique keys: the schema does not describe that table.
func checkColumns(ctx context.Context, tx *sql.Tx, reg *store.Registry, kind store.Kind, t string) error {
	rows, err := tx.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", t)
	if err != nil {
		return fmt.Errorf("read the columns of %s: %w", t, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		have[name] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range reg.Fields(kind) {
		cols := []string{f.Name}
		if f.Unique {
			cols = append(cols, store.UniqueKeyColumn(f.Name))
		}
		for _, c := range cols {
			if !have[c] {
				return store.Errorf(store.EINVALID, "kind %s: the store's table %s has no column %s; the schema does not describe it", kind, t, c)
			}
		}
	}
	return nil
}

// KindDDL returns the statements that make kind's table in reg, as the numbered migrations
// made products and documents: an id that is never reused, one column per field (text,
// INTEGER cents for money, a JSON array for a set, UTC text for a time, an INTEGER id for a
// ref, which references its target's table), the version and who and when wrote it
// last; a key column under a UNIQUE index for each unique field; an index per ref field and
// one on (field, id) per sortable field (Registry.SortFields); and, when it has folded
// fields (Registry.FoldedFields), its search tables (searchDDL). Names come only from reg,
// quoted.
func KindDDL(reg *store.Registry, kind store.Kind) []string {
	def := reg.Def(kind)
	if def == nil {
		return nil
	}
	t := def.Table
	q := quoteIdent
	var cols []string
	cols = append(cols, "id INTEGER PRIMARY KEY AUTOINCREMENT")
	for _, f := range def.Fields {
		cols = append(cols, q(f.Name)+" "+columnType(reg, kind, f))
	}
	for _, f := range def.Fields {
		if f.Unique {
			cols = append(cols, q(store.UniqueKeyColumn(f.Name))+" TEXT")
		}
	}
	cols = append(cols, "version INTEGER NOT NULL DEFAULT 1", "updated_at TEXT NOT NULL", "updated_by TEXT NOT NULL")
	out := []string{"CREATE TABLE " + q(t) + " (\n    " + strings.Join(cols, ",\n    ") + "\n)"}
	for _, f := range def.Fields {
		if f.Unique {
			key := store.UniqueKeyColumn(f.Name)
			out = append(out, "CREATE UNIQUE INDEX "+q(t+"_"+key+"_unique")+" ON "+q(t)+" ("+q(key)+")")
		}
		if f.Type == store.TypeRef {
			out = append(out, "CREATE INDEX "+q(t+"_"+f.Name+"_ref")+" ON "+q(t)+" ("+q(f.Name)+")")
		}
	}
	for _, f := range reg.SortFields(kind) {
		out = append(out, "CREATE INDEX "+q(t+"_"+f.Name+"_id")+" ON "+q(t)+" ("+q(f.Name)+", id)")
	}
	tables, triggers := searchDDL(t, reg.FoldedFields(kind))
	return append(append(out, tables...), triggers...)
}

// searchDDL returns the statements that make the search tables of table t whose folded
// fields are folded (none: no statement): tables makes the side table of folds and its FTS5
// trigram index (search.go) and gives each folded field a slot (search_slots: the smallest
// free one, kept when the field has one already); triggers makes what keeps them current:
// the index follows its side table, and a record's side rows go with it (whoever deletes
// it, whatever the connection's foreign_keys setting) and follow a change of its id. The
// index keeps no sizes of its rows (columnsize = 0: a search matches, it never ranks), one
// table fewer for every connection to parse.
func searchDDL(t string, folded []string) (tables, triggers []string) {
	if len(folded) == 0 {
		return nil, nil
	}
	q := quoteIdent
	side, fts := t+"_search", t+"_fts"
	tables = []string{
		"CREATE TABLE " + q(side) + " (key INTEGER PRIMARY KEY, fold TEXT NOT NULL)",
		"CREATE VIRTUAL TABLE " + q(fts) + " USING fts5(fold, content = " + sqlString(side) + ", content_rowid = 'key', columnsize = 0, tokenize = 'trigram case_sensitive 1')",
	}
	for _, name := range folded {
		// Literals, not parameters: the statements are DDL's companions, run as text.
		tbl := sqlString(t)
		tables = append(tables, "INSERT OR IGNORE INTO "+slotsTable+" (tbl, field, slot)\n"+
			"SELECT "+tbl+", "+sqlString(name)+", min(s.slot + 1) FROM (SELECT -1 AS slot UNION ALL SELECT slot FROM "+slotsTable+" WHERE tbl = "+tbl+") s\n"+
			"WHERE NOT EXISTS (SELECT 1 FROM "+slotsTable+" o WHERE o.tbl = "+tbl+" AND o.slot = s.slot + 1)")
	}
	first, last := "old.id << "+strconv.Itoa(slotBits), "(old.id << "+strconv.Itoa(slotBits)+") | "+strconv.Itoa(slotMask)
	rows := "key BETWEEN " + first + " AND " + last
	triggers = []string{
		"CREATE TRIGGER " + q(fts+"_insert") + " AFTER INSERT ON " + q(side) + " BEGIN\n    INSERT INTO " + q(fts) + " (rowid, fold) VALUES (new.key, new.fold);\nEND",
		"CREATE TRIGGER " + q(fts+"_delete") + " AFTER DELETE ON " + q(side) + " BEGIN\n    INSERT INTO " + q(fts) + " (" + q(fts) + ", rowid, fold) VALUES ('delete', old.key, old.fold);\nEND",
		"CREATE TRIGGER " + q(fts+"_update") + " AFTER UPDATE ON " + q(side) + " BEGIN\n    INSERT INTO " + q(fts) + " (" + q(fts) + ", rowid, fold) VALUES ('delete', old.key, old.fold);\n" +
			"    INSERT INTO " + q(fts) + " (rowid, fold) VALUES (new.key, new.fold);\nEND",
		"CREATE TRIGGER " + q(t+"_search_delete") + " AFTER DELETE ON " + q(t) + " BEGIN\n    DELETE FROM " + q(side) + " WHERE " + rows + ";\nEND",
		"CREATE TRIGGER " + q(t+"_search_id") + " AFTER UPDATE OF id ON " + q(t) + " WHEN old.id IS NOT new.id BEGIN\n" +
			"    UPDATE " + q(side) + " SET key = (new.id << " + strconv.Itoa(slotBits) + ") | (key & " + strconv.Itoa(slotMask) + ") WHERE " + rows + ";\nEND",
	}
	return tables, triggers
}

// columnType returns the column definition of field f of kind after its name: its SQL type,
// NOT NULL and the default of the type's zero value (or the field's default) for every
// type but time and ref, which may be NULL; a ref references its target kind's table, so
// that tandem (whose connections turn foreign_keys on) deletes no record that others refer
// to, as the PostgreSQL store's foreign keys; other programs are held to the same by
// triggers (refTriggers).
func columnType(reg *store.Registry, kind store.Kind, f *store.Field) string {
	switch f.Type {
	case store.TypeTime:
		return "TEXT"
	case store.TypeRef:
		// SQLite resolves the target when a row is written, so it may be a table made later.
		t, _ := reg.Table(f.To)
		return "INTEGER REFERENCES " + quoteIdent(t) + "(id)"
	case store.TypeInt, store.TypeMoney:
		n, _ := f.Zero().(int64)
		return "INTEGER NOT NULL DEFAULT " + strconv.FormatInt(n, 10)
	case store.TypeSet:
		items, _ := f.Zero().([]string)
		s, err := marshalSet(items)
		if err != nil {
			s = "[]"
		}
		return "TEXT NOT NULL DEFAULT " + sqlString(s)
	}
	s, _ := f.Zero().(string)
	return "TEXT NOT NULL DEFAULT " + sqlString(s)
}

// sqlString returns s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// recordedOrSample returns the schema the store keeps, read inside t, or the sample schema
// when it keeps none yet (a store made before stores kept their schema, in the middle of
// its migrations): the schema whose tables exist.
func (db *DB) recordedOrSample(ctx context.Context, t *tx) (*store.Registry, error) {
	var n int
	if err := t.Tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", schemaTable).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return sampleSchema, nil
	}
	reg, err := db.readSchema(ctx, t.Tx)
	if err != nil || reg == nil {
		return sampleSchema, err
	}
	return reg, nil
}

// ReloadSchema runs the store's newest schema when it is newer than the one db runs
// (store.SchemaReloader): what a handle opened before another client's schema change does
// to see it without opening the store again.
func (db *DB) ReloadSchema(ctx context.Context) (*store.Registry, error) {
	stored, err := db.readSchema(ctx, db.read)
	if err != nil {
		return nil, mapErr("reload the store's schema", err)
	}
	for {
		cur := db.reg.Load()
		if stored == nil || stored.Version() <= cur.Version() {
			return cur, nil
		}
		reg, err := runSchema(stored, db.asked)
		if err != nil {
			return nil, err
		}
		if db.reg.CompareAndSwap(cur, reg) {
			return reg, nil
		}
	}
}
