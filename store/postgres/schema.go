package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// The store's schema is data (store/schema.go): the newest row of tandem_schema (migration
// 0012). Open reads it, records one when there is none, and creates the table of every kind
// that has none yet, with the columns, indexes, search tables and triggers the migrations
// made for products and documents, generated from the registry.

// loadSchema decides the store's registry at open. given is the caller's (nil: none given).
// A store without a recorded schema records given as version 1 (the sample schema when
// given is nil or a legacy overlay, which is then checked against it). A recorded schema is
// the store's: given may be the same schema or an overlay of it (Registry.CheckOverlay:
// labels, owners, rules, groups, limits; in the legacy form or as a schema), anything else
// is refused (EINVALID). Tables of kinds that have none are created in one transaction, under
// the migration lock, so two first openings record and create once. A store whose schema is
// recorded and whose tables exist is only read.
func (db *DB) loadSchema(ctx context.Context, given *store.Registry) error {
	var rec *recorded
	err := db.read(ctx, "open store: read the schema", func(q querier) (err error) {
		rec, err = readSchema(ctx, q)
		return err
	})
	if err != nil {
		return err
	}
	var reg *store.Registry
	if rec != nil {
		var base *store.Registry
		if reg, base, err = chooseRegistry(given, rec); err != nil {
			return err
		}
		missing, err := db.missingTables(ctx, base)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			db.useRegistry(reg)
			return nil
		}
	}
	err = db.inTx(ctx, "open store: record the schema", true, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(migrationLockPurpose+db.schema)); err != nil {
			return err
		}
		rec, err := readSchema(ctx, tx)
		if err != nil {
			return err
		}
		if rec == nil {
			first := given
			if given == nil || given.Legacy() {
				first = store.DefaultRegistry()
			}
			rec = &recorded{version: 1, text: first.YAML(), reg: first}
			// Refuse before recording: a legacy overlay that does not fit the sample.
			if _, _, err := chooseRegistry(given, rec); err != nil {
				return err
			}
			if err := recordSchema(ctx, tx, rec, db.txNow()); err != nil {
				return err
			}
		}
		var base *store.Registry
		if reg, base, err = chooseRegistry(given, rec); err != nil {
			return err
		}
		if err := createTables(ctx, tx, base); err != nil {
			return err
		}
		return installOutside(ctx, tx, base, db.schema, db.channel)
	})
	if err != nil {
		return err
	}
	db.useRegistry(reg)
	return nil
}

// useRegistry makes reg the store's registry, with what is derived from it once.
func (db *DB) useRegistry(reg *store.Registry) { db.regState.Store(newSchemaState(reg)) }

// newSchemaState returns reg with what is derived from it once.
func newSchemaState(reg *store.Registry) *schemaState {
	st := &schemaState{reg: reg, selects: selectLists(reg), uniqueIndexes: map[string]bool{}}
	for _, k := range reg.Kinds() {
		t, _ := reg.Table(k)
		for _, f := range reg.UniqueFields(k) {
			st.uniqueIndexes[uniqueIndexName(t, f.Name)] = true
		}
	}
	return st
}

// schemaState is the store's registry with what is derived from it once.
type schemaState struct {
	reg     *store.Registry
	selects map[store.Kind]string // selectList of each kind
	// uniqueIndexes names the unique indexes on key columns: a create or save that fails on
	// one met a concurrent one with the same key and is run again, so it names the winner.
	uniqueIndexes map[string]bool
	relativeSQLs  sync.Map // relativeSQL's statements by shape, made with reg
}

// recorded is a schema as the store keeps it: its version and its YAML, parsed on demand.
type recorded struct {
	version int64
	text    []byte
	reg     *store.Registry // nil until parsed
}

// parse returns the recorded schema as a registry (EINVALID when it cannot be read).
func (r *recorded) parse() (*store.Registry, error) {
	if r.reg == nil {
		reg, err := store.ParseStoredRegistry(fmt.Sprintf("(the store's schema version %d)", r.version), r.text)
		if err != nil {
			return nil, fmt.Errorf("open store: the store's schema cannot be read (was it written by a newer tandem?): %w", err)
		}
		r.reg = reg
	}
	return r.reg, nil
}

// chooseRegistry returns the registry a store with the schema rec is used with when given
// was asked for (nil: none), and the store's schema itself (what its tables are made from).
// EINVALID for a schema other than the store's or an overlay of it. A given schema whose
// canonical YAML is the recorded text is taken as it is: the YAML of a large schema costs
// far more than the query that reads it, so it is made once and the recorded text not
// parsed.
func chooseRegistry(given *store.Registry, rec *recorded) (reg, base *store.Registry, err error) {
	var givenYAML []byte
	if given != nil && !given.Legacy() {
		if givenYAML = given.YAML(); bytes.Equal(givenYAML, rec.text) {
			return given.WithVersion(rec.version), given, nil
		}
	}
	stored, err := rec.parse()
	if err != nil {
		return nil, nil, err
	}
	switch {
	case given == nil:
		return stored.WithVersion(rec.version), stored, nil
	case given.Legacy():
		if err := given.CheckOverlay(stored); err != nil {
			return nil, nil, fmt.Errorf("open store: the field registry does not fit the store's schema version %d: %w", rec.version, err)
		}
		return given.WithVersion(rec.version), stored, nil
	case bytes.Equal(givenYAML, stored.YAML()): // the recorded text in another tandem's form
		return stored.WithVersion(rec.version), stored, nil
	}
	// A schema that differs only where the tables do not (labels, owners, rules, groups,
	// limits) is an overlay for this client, as a legacy one is; the SQLite store's rule.
	if err := given.CheckOverlay(stored); err != nil {
		return nil, nil, store.Errorf(store.EINVALID, "open store: this store has schema version %d, which differs from the schema given (%v); "+
			"a store's schema changes only by applying the new one to the store", rec.version, err)
	}
	return given.WithVersion(rec.version), stored, nil
}

// readSchema returns the store's newest recorded schema; nil when none is recorded.
func readSchema(ctx context.Context, q querier) (*recorded, error) {
	rec := new(recorded)
	err := q.QueryRow(ctx, "SELECT version, yaml FROM tandem_schema ORDER BY version DESC LIMIT 1").Scan(&rec.version, &rec.text)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// recordSchema stores rec's schema at its version.
func recordSchema(ctx context.Context, tx pgx.Tx, rec *recorded, at time.Time) error {
	_, err := tx.Exec(ctx, "INSERT INTO tandem_schema (version, yaml, applied_at) VALUES ($1, $2, $3)",
		rec.version, string(rec.text), at)
	return err
}

// missingTables returns the tables of reg's kinds that the store's schema lacks, in one
// round trip.
func (db *DB) missingTables(ctx context.Context, reg *store.Registry) ([]string, error) {
	var missing []string
	err := db.read(ctx, "open store: find the kinds' tables", func(q querier) error {
		rows, err := q.Query(ctx, `SELECT t FROM unnest($1::text[]) t
			WHERE to_regclass(quote_ident(current_schema()) || '.' || quote_ident(t)) IS NULL`, tablesOf(reg))
		if err != nil {
			return err
		}
		missing, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return missing, err
}

func tablesOf(reg *store.Registry) []string {
	var out []string
	for _, k := range reg.Kinds() {
		t, _ := reg.Table(k)
		out = append(out, t)
	}
	return out
}

// createTables creates, in tx, the table of every kind of reg that has none, with what the
// migrations give products and documents: an identity id; a column per field (text, bigint
// for ints and money in cents, text[] for sets, timestamptz, bigint refs with a foreign key
// to the target's table); version, updated_at and updated_by; a <field>_key column under a
// unique index per unique field; an index per ref field and an index on (field, id) per sort
// field (text byte by byte, COLLATE "C"); and per searched field its folded column, its
// search table with a pg_trgm index and the trigger that fills it (searchTableDDL). A table
// that exists is left as it is once it has every column its kind needs (checkColumns). The
// caller holds the migration lock; a schema change calls it with the new registry.
func createTables(ctx context.Context, tx pgx.Tx, reg *store.Registry) error {
	var schema string
	if err := tx.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	var created []store.Kind
	for _, k := range reg.Kinds() {
		t, _ := reg.Table(k)
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass(quote_ident(current_schema()) || '.' || quote_ident($1)) IS NOT NULL", t).Scan(&exists); err != nil {
			return err
		}
		if exists {
			if err := checkColumns(ctx, tx, reg, k, t); err != nil {
				return err
			}
			continue
		}
		stmts, err := tableDDL(reg, k)
		if err != nil {
			return err
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("create the table of %s: %w", k, err)
			}
		}
		created = append(created, k)
	}
	// Foreign keys once every table is there: a ref may point to a kind made after it.
	var ext string
	for _, k := range created {
		t, _ := reg.Table(k)
		for _, f := range reg.Fields(k) {
			if f.Type != store.TypeRef {
				continue
			}
			to, _ := reg.Table(f.To)
			q := "ALTER TABLE " + ident(t) + " ADD CONSTRAINT " + ident(objName(t, f.Name, "fkey")) +
				" FOREIGN KEY (" + ident(f.Name) + ") REFERENCES " + ident(to) + " (id)"
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("create the table of %s: %w", k, err)
			}
		}
		for _, name := range reg.FoldedFields(k) {
			if ext == "" {
				var err error
				if ext, err = trgmSchema(ctx, tx); err != nil {
					return err
				}
			}
			for _, q := range searchTableDDL(schema, ext, t, name) {
				if _, err := tx.Exec(ctx, q); err != nil {
					return fmt.Errorf("create the search table of %s.%s: %w", k, name, err)
				}
			}
		}
	}
	return nil
}

// checkColumns refuses (EINVALID) a kind whose table exists without a column the kind needs:
// a table tandem did not make for it (the sample's products, say, under a kind of another
// shape), which the store would otherwise fail on at every read.
func checkColumns(ctx context.Context, tx pgx.Tx, reg *store.Registry, kind store.Kind, table string) error {
	rows, err := tx.Query(ctx, `SELECT column_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1`, table)
	if err != nil {
		return err
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	need := []string{"id", "version", "updated_at", "updated_by"}
	for _, f := range reg.Fields(kind) {
		need = append(need, f.Name)
	}
	for _, f := range reg.UniqueFields(kind) {
		need = append(need, store.UniqueKeyColumn(f.Name))
	}
	for _, name := range reg.FoldedFields(kind) {
		need = append(need, store.FoldColumn(name))
	}
	for _, c := range need {
		if !slices.Contains(have, c) {
			return store.Errorf(store.EINVALID, "kind %s: its table %s exists without the column %s; "+
				"a kind's table is made by tandem, not taken over (name the kind's table otherwise)", kind, table, c)
		}
	}
	return nil
}

// tableDDL returns the statements that create kind's table and its indexes (not its foreign
// keys or search tables: createTables adds those).
func tableDDL(reg *store.Registry, kind store.Kind) ([]string, error) {
	t, err := reg.Table(kind)
	if err != nil {
		return nil, err
	}
	qt := ident(t)
	cols := []string{"id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"}
	var after []string
	for _, f := range reg.Fields(kind) {
		col, err := columnDDL(f)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", kind, f.Name, err)
		}
		cols = append(cols, col)
		c := ident(f.Name)
		if f.Type == store.TypeRef {
			after = append(after, "CREATE INDEX "+ident(objName(t, f.Name))+" ON "+qt+" ("+c+")")
		}
	}
	for _, f := range reg.UniqueFields(kind) {
		key := store.UniqueKeyColumn(f.Name)
		cols = append(cols, ident(key)+" text")
		after = append(after, "CREATE UNIQUE INDEX "+ident(uniqueIndexName(t, f.Name))+" ON "+qt+" ("+ident(key)+")")
	}
	for _, name := range reg.FoldedFields(kind) {
		cols = append(cols, ident(store.FoldColumn(name))+" text")
	}
	cols = append(cols, "version bigint NOT NULL DEFAULT 1", "updated_at timestamptz NOT NULL", "updated_by text NOT NULL")
	if reg.Tree(kind) {
		cols = append(cols, "CHECK ("+ident(store.ParentField)+" IS DISTINCT FROM id)")
	}
	for _, f := range reg.SortFields(kind) {
		after = append(after, "CREATE INDEX "+ident(objName(t, f.Name, "id"))+" ON "+qt+" ("+sortColumn(f)+", id)")
	}
	return append([]string{"CREATE TABLE " + qt + " (\n    " + strings.Join(cols, ",\n    ") + "\n)"}, after...), nil
}

// columnDDL returns the column definition of field f, its default written as a literal
// (store.Field.Parse checked it when the schema was read).
func columnDDL(f *store.Field) (string, error) {
	c := ident(f.Name)
	def, err := columnDefault(f)
	if err != nil {
		return "", err
	}
	switch f.Type {
	case store.TypeString, store.TypeText, store.TypeEnum:
		return c + " text NOT NULL DEFAULT " + def, nil
	case store.TypeInt:
		return c + " bigint NOT NULL DEFAULT " + def, nil
	case store.TypeMoney:
		return c + " bigint NOT NULL DEFAULT " + def + " CHECK (" + c + " >= 0)", nil
	case store.TypeSet:
		return c + " text[] NOT NULL DEFAULT " + def, nil
	case store.TypeTime:
		if def != "" {
			return c + " timestamptz DEFAULT " + def, nil
		}
		return c + " timestamptz", nil
	case store.TypeRef:
		return c + " bigint", nil
	}
	return "", fmt.Errorf("unknown type %s", f.Type)
}

// columnDefault returns the SQL default of f's column as a literal ("" for none: a time
// without a default, a ref).
func columnDefault(f *store.Field) (string, error) {
	var def any
	if f.Default != "" {
		v, err := f.Parse(f.Default)
		if err != nil {
			return "", err
		}
		def = v
	}
	switch f.Type {
	case store.TypeString, store.TypeText, store.TypeEnum:
		s, _ := def.(string)
		return literal(s), nil
	case store.TypeInt, store.TypeMoney:
		n, _ := def.(int64)
		return strconv.FormatInt(n, 10), nil
	case store.TypeSet:
		items, _ := def.([]string)
		items = store.NormalizeSet(items)
		if len(items) == 0 {
			return "'{}'", nil
		}
		lits := make([]string, len(items))
		for i, s := range items {
			lits[i] = literal(s)
		}
		return "ARRAY[" + strings.Join(lits, ", ") + "]::text[]", nil
	case store.TypeTime:
		if t, ok := def.(time.Time); ok {
			return literal(t.UTC().Format(time.RFC3339Nano)) + "::timestamptz", nil
		}
		return "", nil
	case store.TypeRef:
		return "", nil
	}
	return "", fmt.Errorf("unknown type %s", f.Type)
}

// sortColumn is the expression a sorted listing orders f by: text byte by byte (COLLATE
// "C", as SQLite's BINARY), other types as they are.
func sortColumn(f *store.Field) string {
	switch f.Type {
	case store.TypeString, store.TypeText, store.TypeEnum:
		return ident(f.Name) + ` COLLATE "C"`
	}
	return ident(f.Name)
}

// literal quotes s as an SQL string constant, whatever standard_conforming_strings says:
// an escape string constant (E and quotes) with its backslashes and quotes doubled. Only
// DDL uses it (a default cannot be a parameter).
func literal(s string) string {
	return "E'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// uniqueIndexName is the unique index on the key column of table's unique field
// (products_sku_key_unique, as migration 0003 names it).
func uniqueIndexName(table, field string) string { return objName(table, field, "key_unique") }

// objName joins parts with _ into the name of a table, index, constraint, function or
// trigger, within PostgreSQL's 63 bytes: a longer name keeps its start and ends in a hash of
// the whole, so two long names never become one (PostgreSQL would cut both at 63 bytes).
func objName(parts ...string) string {
	s := strings.Join(parts, "_")
	if len(s) <= maxIdentifierLength {
		return s
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%s_%016x", s[:maxIdentifierLength-17], h.Sum64())
}

// ReloadSchema runs the store's newest schema when it is newer than the one db runs
// (store.SchemaReloader): what a client opened before another client's schema change does
// to see it without opening the store again.
func (db *DB) ReloadSchema(ctx context.Context) (*store.Registry, error) {
	var rec *recorded
	err := db.read(ctx, "reload the store's schema", func(q querier) (err error) {
		rec, err = readSchema(ctx, q)
		return err
	})
	if err != nil {
		return nil, err
	}
	var next *schemaState
	for {
		cur := db.regState.Load()
		if rec == nil || rec.version <= cur.reg.Version() {
			return cur.reg, nil
		}
		if next == nil {
			reg, _, err := chooseRegistry(db.given, rec)
			if err != nil {
				return nil, err
			}
			next = newSchemaState(reg)
		}
		// An apply by this client may have swapped in a newer schema meanwhile: never
		// go back from it.
		if db.regState.CompareAndSwap(cur, next) {
			return next.reg, nil
		}
	}
}
