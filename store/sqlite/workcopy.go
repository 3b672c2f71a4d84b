package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tandem-editor/tandem/store"
)

var _ store.WorkingCopy = (*DB)(nil)

// A working copy's state lives in wc_* tables that StartCopy creates, not in a numbered
// migration: a store that is not a working copy carries none of them, and their format has a
// version of its own (copyFormat in wc_meta).
//
// The outbox is filled by triggers, also created by StartCopy from the field registry: every
// committed INSERT or UPDATE of a record's editor and shared fields appends an entry with the
// fields before and after, the base version and a fresh idempotency key, inside the very
// statement, and therefore transaction, that wrote the record. No save path can forget it
// (the CLI, the TUI, a future fast path, even another program writing the table), and the save
// code needs no working-copy branch. Writes made on behalf of the source (ApplySource,
// AckEntry, ResolveConflict) set wc_meta.applying inside their own transaction, which the
// triggers' WHEN clause reads; SQLite serializes writers, so no other writer ever sees it set.
//
// Counter fields need no flag for "relative": a counter's change is pushed as its delta
// (after − before), which is what the counter merge rule does with it anyway.

// copyFormat is the version of the wc_* tables' layout. Format 2 added wc_meta.mark; a
// format-1 copy is brought to it by the first write that moves its position (upgradeCopy).
const copyFormat = 2

// localIDBase is where local ids of records created in a working copy start.
const localIDBase = store.LocalIDBase

const copySchema = `
CREATE TABLE wc_meta (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    format    INTEGER NOT NULL,
    source_id TEXT    NOT NULL,
    source    TEXT    NOT NULL,
    kinds     TEXT    NOT NULL, -- JSON array
    subtree   INTEGER NOT NULL DEFAULT 0,
    position  INTEGER NOT NULL,
    mark      TEXT    NOT NULL DEFAULT '', -- what the source's change at position was (store.ChangeMark)
    cloned_at TEXT    NOT NULL,
    synced_at TEXT,
    applying  INTEGER NOT NULL DEFAULT 0 -- set only inside a transaction that writes the source's state
);
CREATE TABLE wc_base (
    kind      TEXT    NOT NULL,
    record_id INTEGER NOT NULL,
    version   INTEGER NOT NULL, -- the source version the local record was last synced at
    PRIMARY KEY (kind, record_id)
) WITHOUT ROWID;
CREATE TABLE wc_outbox (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    op           TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    record_id    INTEGER NOT NULL,
    base_version INTEGER NOT NULL,
    before       TEXT    NOT NULL,
    after        TEXT    NOT NULL,
    key          TEXT    NOT NULL UNIQUE,
    actor        TEXT    NOT NULL,
    at           TEXT    NOT NULL
);
CREATE INDEX wc_outbox_record ON wc_outbox(kind, record_id);
CREATE TABLE wc_conflicts (
    kind           TEXT    NOT NULL,
    record_id      INTEGER NOT NULL,
    op             TEXT    NOT NULL,
    reason         TEXT    NOT NULL,
    fields         TEXT    NOT NULL, -- JSON array
    base           TEXT    NOT NULL,
    mine           TEXT    NOT NULL,
    theirs         TEXT,             -- NULL when the record is not on the source
    theirs_version INTEGER NOT NULL,
    base_version   INTEGER NOT NULL,
    actor          TEXT    NOT NULL,
    at             TEXT    NOT NULL,
    PRIMARY KEY (kind, record_id)
);
CREATE TABLE wc_stale ( -- source records not written yet: a local record holds their sku
    kind      TEXT    NOT NULL,
    record_id INTEGER NOT NULL,
    PRIMARY KEY (kind, record_id)
) WITHOUT ROWID;
`

// copyColumns returns the columns a working copy tracks for kind (store.Registry.CopyColumns).
func (db *DB) copyColumns(kind store.Kind) []*store.Field { return db.Registry().CopyColumns(kind) }

// jsonObject returns SQL that builds a JSON object of fs from the row alias (old or new).
func jsonObject(alias string, fs []*store.Field) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		parts = append(parts, sqlString(f.Name)+", "+alias+"."+quoteIdent(f.Name))
	}
	return "json_object(" + strings.Join(parts, ", ") + ")"
}

// copyTriggers returns the DDL of the outbox triggers of kind in reg.
func copyTriggers(reg *store.Registry, kind store.Kind) ([]string, error) {
	t, err := reg.Table(kind)
	if err != nil {
		return nil, err
	}
	qt := quoteIdent(t)
	all := reg.CopyColumns(kind)
	var saved []*store.Field
	var differ []string
	for _, f := range all {
		if f.Name == store.ParentField {
			continue
		}
		saved = append(saved, f)
		differ = append(differ, "old."+quoteIdent(f.Name)+" IS NOT new."+quoteIdent(f.Name))
	}
	entry := func(op, base, before, after string) string {
		return `INSERT INTO wc_outbox (op, kind, record_id, base_version, before, after, key, actor, at)
			VALUES ('` + op + `', '` + string(kind) + `', new.id, ` + base + `, ` + before + `, ` + after + `,
				'` + store.OriginKey + `' || lower(hex(randomblob(16))), new.updated_by, new.updated_at);`
	}
	base := `coalesce((SELECT version FROM wc_base WHERE kind = '` + string(kind) + `' AND record_id = new.id), 0)`
	applying := `(SELECT applying FROM wc_meta) = 0`
	out := []string{
		`CREATE TRIGGER ` + quoteIdent("wc_"+t+"_create") + ` AFTER INSERT ON ` + qt + ` WHEN ` + applying + ` BEGIN ` +
			entry(string(store.CopyCreate), "0", "json_object()", jsonObject("new", all)) + ` END`,
		`CREATE TRIGGER ` + quoteIdent("wc_"+t+"_save") + ` AFTER UPDATE ON ` + qt + ` WHEN ` + applying + ` AND (` +
			strings.Join(differ, " OR ") + `) BEGIN ` +
			entry(string(store.CopySave), base, jsonObject("old", saved), jsonObject("new", saved)) + ` END`,
	}
	if len(all) > len(saved) {
		p := store.ParentField
		out = append(out, `CREATE TRIGGER `+quoteIdent("wc_"+t+"_move")+` AFTER UPDATE OF `+p+` ON `+qt+` WHEN `+applying+
			` AND old.`+p+` IS NOT new.`+p+` BEGIN `+
			entry(string(store.CopyMove), base, "json_object('"+p+"', old."+p+")", "json_object('"+p+"', new."+p+")")+` END`)
	}
	return out, nil
}

// encodeValues returns the stored JSON form of the copy columns of vals (column-encoded, as
// the triggers write them).
func (db *DB) encodeValues(kind store.Kind, vals store.Values) (string, error) {
	if vals == nil {
		return "{}", nil
	}
	m := make(map[string]any, len(vals))
	for _, f := range db.copyColumns(kind) {
		v, ok := vals[f.Name]
		if !ok {
			continue
		}
		c, err := encodeColumn(f, v)
		if err != nil {
			return "", err
		}
		m[f.Name] = c
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// decodeValues reads what encodeValues or a trigger wrote; a field the schema no longer
// has is passed over.
func (db *DB) decodeValues(kind store.Kind, s string) (store.Values, error) {
	vals, _, err := db.decodeKnown(kind, s)
	return vals, err
}

// decodeKnown is decodeValues that also reports whether s holds a field the schema no
// longer has.
func (db *DB) decodeKnown(kind store.Kind, s string) (vals store.Values, unknown bool, err error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, false, fmt.Errorf("working copy values: %w", err)
	}
	out := make(store.Values, len(m))
	for name, raw := range m {
		f, err := db.Registry().Field(kind, name)
		if err != nil {
			unknown = true // a field the registry no longer has
			continue
		}
		if n, ok := raw.(json.Number); ok {
			i, err := n.Int64()
			if err != nil {
				return nil, false, fmt.Errorf("working copy value %s: %w", name, err)
			}
			raw = i
		}
		if out[name], err = decodeColumn(f, raw); err != nil {
			return nil, false, err
		}
	}
	return out, unknown, nil
}

// keepUnknown adds to vals, an outbox entry's After as decodeValues read it from after, the
// fields after holds that the schema reg no longer has and whose value differs from
// before's, as JSON decodes them: the change of a field a schema change took away, which
// the entry keeps (store.Registry.Unfit).
func keepUnknown(reg *store.Registry, kind store.Kind, before, after string, vals store.Values) error {
	var b, a map[string]json.RawMessage
	if err := json.Unmarshal([]byte(after), &a); err != nil {
		return fmt.Errorf("working copy values: %w", err)
	}
	_ = json.Unmarshal([]byte(before), &b)
	for name, raw := range a {
		if _, err := reg.Field(kind, name); err == nil {
			continue
		}
		if old, ok := b[name]; ok && string(old) == string(raw) {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("working copy value %s: %w", name, err)
		}
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				v = i
			} else {
				v = n.String()
			}
		}
		vals[name] = v
	}
	return nil
}

// StartCopy makes an empty store a working copy (store.WorkingCopy).
func (db *DB) StartCopy(ctx context.Context, s store.CopyState) error {
	err := db.inTx(ctx, "start working copy", func(tx *tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'wc_meta'`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return store.Errorf(store.EINVALID, "%s is a working copy already", db.path)
		}
		reg := db.Registry()
		for _, kind := range reg.Kinds() {
			t, err := reg.Table(kind)
			if err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteIdent(t)).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return store.Errorf(store.EINVALID, "%s holds %d %ss: a working copy starts from an empty store", db.path, n, kind)
			}
		}
		if _, err := tx.ExecContext(ctx, copySchema); err != nil {
			return fmt.Errorf("create working copy tables: %w", err)
		}
		// A copy's records are written by its clone and syncs, outside the write
		// connection (bulk.go): no write to them is taken for another program's.
		if err := dropOutside(ctx, tx, db.Registry()); err != nil {
			return err
		}
		if err := db.installCopyTriggers(ctx, tx, reg); err != nil {
			return err
		}
		kinds := make([]string, len(s.Kinds))
		for i, k := range s.Kinds {
			kinds[i] = string(k)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO wc_meta (id, format, source_id, source, kinds, subtree, position, mark, cloned_at)
			VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)`, copyFormat, s.SourceID, s.Source, jsonText(kinds), s.Subtree, s.Position, s.Mark, formatTime(tx.now))
		return err
	})
	if err == nil {
		db.copyKnown.Store(copyYes)
	}
	return mapErr("start working copy", err)
}

// kindTable returns the quoted table of kind in the copy's schema (EINVALID for a kind it
// does not have).
func (db *DB) kindTable(kind store.Kind) (string, error) {
	t, err := db.Registry().Table(kind)
	if err != nil {
		return "", err
	}
	return quoteIdent(t), nil
}

// treeFirst returns reg's kinds, the tree kinds first (a record's parent is written before
// it), each group in write order (store.Registry.WriteOrder).
func treeFirst(reg *store.Registry) []store.Kind {
	var trees, rest []store.Kind
	for _, k := range reg.WriteOrder() {
		if reg.Tree(k) {
			trees = append(trees, k)
		} else {
			rest = append(rest, k)
		}
	}
	return append(trees, rest...)
}

// subtreeKind is the kind a copy of one subtree copies part of (store.CopyState.Subtree):
// documents.
func subtreeKind(*store.Registry) store.Kind { return store.KindDocument }

// installCopyTriggers makes, inside tx, the outbox triggers of every kind of reg and starts
// the ids of records created in the copy at localIDBase for the kinds that have none yet.
func (db *DB) installCopyTriggers(ctx context.Context, tx *tx, reg *store.Registry) error {
	for _, kind := range reg.Kinds() {
		ddl, err := copyTriggers(reg, kind)
		if err != nil {
			return err
		}
		for _, q := range ddl {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("create working copy trigger: %w", err)
			}
		}
		t, _ := reg.Table(kind)
		var seq sql.NullInt64
		err = tx.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = ?`, t).Scan(&seq)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if seq.Valid && seq.Int64 >= localIDBase {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sqlite_sequence WHERE name = ?`, t); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)`, t, localIDBase); err != nil {
			return err
		}
	}
	return nil
}

// dropCopyTriggers drops, inside tx, the outbox triggers of every kind of reg.
func dropCopyTriggers(ctx context.Context, tx *tx, reg *store.Registry) error {
	for _, kind := range reg.Kinds() {
		t, err := reg.Table(kind)
		if err != nil {
			return err
		}
		for _, what := range []string{"create", "save", "move"} {
			if _, err := tx.ExecContext(ctx, "DROP TRIGGER IF EXISTS "+quoteIdent("wc_"+t+"_"+what)); err != nil {
				return fmt.Errorf("drop working copy trigger: %w", err)
			}
		}
	}
	return nil
}

// isCopy reports whether the store is a working copy.
func (db *DB) isCopy(ctx context.Context, q querier) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'wc_meta'`).Scan(&n)
	return n > 0, err
}

// CopyState returns the working copy's state (store.WorkingCopy).
func (db *DB) CopyState(ctx context.Context) (*store.CopyState, error) {
	ok, err := db.isCopy(ctx, db.read)
	if err != nil {
		return nil, mapErr("read working copy", err)
	}
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "%s is not a working copy (tandem clone makes one)", db.path)
	}
	var (
		s            store.CopyState
		kinds        string
		cloned       string
		synced       sql.NullString
		format       int
		pending, cfl int
	)
	err = db.read.QueryRowContext(ctx, `SELECT format, source_id, source, kinds, subtree, position, cloned_at, synced_at,
			(SELECT count(*) FROM wc_outbox), (SELECT count(*) FROM wc_outbox WHERE op = ?), (SELECT count(*) FROM wc_conflicts),
			(SELECT count(*) FROM wc_stale) FROM wc_meta`, copyDeleteOp).
		Scan(&format, &s.SourceID, &s.Source, &kinds, &s.Subtree, &s.Position, &cloned, &synced, &pending, &s.Deletes, &cfl, &s.Held)
	if err != nil {
		return nil, mapErr("read working copy", err)
	}
	if format > copyFormat {
		return nil, store.Errorf(store.EINVALID, "%s is a working copy made by a newer tandem (format %d); upgrade tandem", db.path, format)
	}
	if s.Kinds, err = parseKinds(kinds); err != nil {
		return nil, err
	}
	if s.ClonedAt, err = parseTime(cloned); err != nil {
		return nil, err
	}
	if synced.Valid {
		if s.SyncedAt, err = parseTime(synced.String); err != nil {
			return nil, err
		}
	}
	if format >= 2 {
		if err := db.read.QueryRowContext(ctx, `SELECT mark FROM wc_meta`).Scan(&s.Mark); err != nil {
			return nil, mapErr("read working copy", err)
		}
	}
	s.Pending, s.Conflict = pending, cfl
	return &s, nil
}

// parseKinds reads wc_meta.kinds, a JSON array of kind names.
func parseKinds(kinds string) ([]store.Kind, error) {
	var ks []string
	if err := json.Unmarshal([]byte(kinds), &ks); err != nil {
		return nil, fmt.Errorf("working copy kinds: %w", err)
	}
	out := make([]store.Kind, len(ks))
	for i, k := range ks {
		out[i] = store.Kind(k)
	}
	return out, nil
}

// checkCopyCreate refuses, inside a create's transaction, what store.CheckCopyCreate refuses
// when the store is a working copy: a kind the copy did not clone, an explicit id. Every
// create path (the CLI, an import, the TUI's new record) goes through CreateRecord, so none
// can make a record the sync could never push.
func (db *DB) checkCopyCreate(ctx context.Context, q querier, kind store.Kind, id int64) error {
	ok, err := db.isCopy(ctx, q)
	if err != nil {
		return fmt.Errorf("read working copy: %w", err)
	}
	if !ok {
		return nil
	}
	var (
		s     store.CopyState
		kinds string
	)
	if err := q.QueryRowContext(ctx, `SELECT kinds, subtree FROM wc_meta`).Scan(&kinds, &s.Subtree); err != nil {
		return fmt.Errorf("read working copy: %w", err)
	}
	if s.Kinds, err = parseKinds(kinds); err != nil {
		return err
	}
	return store.CheckCopyCreate(&s, kind, id)
}

// wcTx is a write transaction of the working copy that prepares each statement once on its
// own connection: a clone or a pull runs the same few statements for thousands of records.
type wcTx struct {
	*tx
	stmts map[string]*sql.Stmt
	quiet bool // the copy has no outbox entries, conflicts or stale records (checked at start)
	// subtree is the document the copy was cloned from (0: all documents). Its parent on
	// the source is outside the copy, so in the copy it sits at the root.
	subtree int64
	reg     *store.Registry // the copy's schema as the transaction began
}

func (db *DB) newWCTx(ctx context.Context, t *tx) (*wcTx, error) {
	w := &wcTx{tx: t, stmts: map[string]*sql.Stmt{}, reg: db.Registry()}
	var busy int
	err := w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM wc_outbox) OR EXISTS (SELECT 1 FROM wc_conflicts)
		OR EXISTS (SELECT 1 FROM wc_stale), (SELECT subtree FROM wc_meta)`).Scan(&busy, &w.subtree)
	w.quiet = busy == 0
	return w, err
}

func (w *wcTx) prepare(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := w.stmts[q]; ok {
		return s, nil
	}
	// The store's statement cache first (small transactions, such as an acknowledgement,
	// run the same statements over and over); a statement it has not prepared yet is
	// prepared here, once for the transaction.
	var s *sql.Stmt
	if c := w.tx.wc.stmts.stmt(q); c != nil {
		s = w.tx.Tx.StmtContext(ctx, c)
	} else {
		var err error
		if s, err = w.tx.Tx.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
	}
	w.stmts[q] = s
	return s, nil
}

// ExecContext runs q as a statement prepared once in the transaction.
func (w *wcTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	s, err := w.prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

// QueryRowContext runs q as a statement prepared once in the transaction. A statement that
// cannot be prepared is run unprepared, so its error comes with the row.
func (w *wcTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	s, err := w.prepare(ctx, q)
	if err != nil {
		return w.tx.Tx.QueryRowContext(ctx, q, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// table returns the quoted table of kind in the copy's schema (EINVALID for a kind it does
// not have).
func (w *wcTx) table(kind store.Kind) (string, error) {
	t, err := w.reg.Table(kind)
	if err != nil {
		return "", err
	}
	return quoteIdent(t), nil
}

// applying sets or clears the flag that keeps the outbox triggers quiet, inside tx.
func applying(ctx context.Context, tx *wcTx, on bool) error {
	_, err := tx.ExecContext(ctx, `UPDATE wc_meta SET applying = ?`, on)
	return err
}

// hasLocalState reports whether a record has outbox entries or an open conflict.
func hasLocalState(ctx context.Context, tx *wcTx, kind store.Kind, id int64) (bool, error) {
	if tx.quiet {
		return false, nil
	}
	var n int
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM wc_outbox WHERE kind = ? AND record_id = ?)
		OR EXISTS (SELECT 1 FROM wc_conflicts WHERE kind = ? AND record_id = ?)`,
		string(kind), id, string(kind), id).Scan(&n)
	return n != 0, err
}

// ApplySource writes records as the source has them (store.WorkingCopy).
func (db *DB) ApplySource(ctx context.Context, recs []*store.Record, at store.FeedPoint) error {
	err := db.inTx(ctx, "apply source records", func(t *tx) error {
		tx, err := db.newWCTx(ctx, t)
		if err != nil {
			return err
		}
		var kinds string
		var subtree int64
		if err := tx.QueryRowContext(ctx, `SELECT kinds, subtree FROM wc_meta`).Scan(&kinds, &subtree); err != nil {
			return fmt.Errorf("read working copy: %w", err)
		}
		if err := applying(ctx, tx, true); err != nil {
			return err
		}
		all := recs
		before, err := localVersions(ctx, tx, all)
		if err != nil {
			return err
		}
		if tx.quiet && subtree == 0 {
			// Nothing local to keep: write the records in bulk, kind by kind.
			for _, kind := range treeFirst(db.Registry()) {
				var of []*store.Record
				for _, r := range recs {
					if r.Kind == kind && strings.Contains(kinds, `"`+string(kind)+`"`) {
						of = append(of, r)
					}
				}
				if err := db.putSourceBulk(ctx, tx, of); err != nil {
					return err
				}
			}
			recs = nil
		}
		if err := db.applyRecords(ctx, tx, recs, kinds, subtree); err != nil {
			return err
		}
		if err := applying(ctx, tx, false); err != nil {
			return err
		}
		if err := logPulled(ctx, tx, all, before); err != nil {
			return err
		}
		return movePosition(ctx, tx, at)
	})
	return mapErr("apply source records", err)
}

// applyRecords writes recs one by one as ApplySource does, inside tx with the applying flag
// set; kinds and subtree are wc_meta's.
func (db *DB) applyRecords(ctx context.Context, tx *wcTx, recs []*store.Record, kinds string, subtree int64) error {
	for _, r := range recs {
		if !strings.Contains(kinds, `"`+string(r.Kind)+`"`) {
			continue
		}
		if r.Kind == subtreeKind(db.Registry()) && subtree != 0 && r.ID != subtree {
			in, err := db.inSubtree(ctx, tx, r, subtree)
			if err != nil {
				return err
			}
			if !in {
				continue
			}
		}
		busy, err := hasLocalState(ctx, tx, r.Kind, r.ID)
		if err != nil {
			return err
		}
		if busy {
			if err := db.refreshGoneConflict(ctx, tx, r); err != nil {
				return err
			}
			continue
		}
		if err := db.putSource(ctx, tx, r); err != nil {
			return err
		}
	}
	return nil
}

// localVersions returns the versions the copy holds of recs' records (absent: not held).
func localVersions(ctx context.Context, tx *wcTx, recs []*store.Record) (map[store.RecordKey]int64, error) {
	ids := map[store.Kind][]int64{}
	for _, r := range recs {
		ids[r.Kind] = append(ids[r.Kind], r.ID)
	}
	out := make(map[store.RecordKey]int64, len(recs))
	for kind, of := range ids {
		t, err := tx.table(kind)
		if err != nil {
			return nil, err
		}
		list, err := json.Marshal(of)
		if err != nil {
			return nil, err
		}
		rows, err := tx.Tx.QueryContext(ctx, `SELECT id, version FROM `+t+` WHERE id IN (SELECT value FROM json_each(?))`, string(list))
		if err != nil {
			return nil, fmt.Errorf("read the copy's versions: %w", err)
		}
		for rows.Next() {
			var id, v int64
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return nil, err
			}
			out[store.RecordKey{Kind: kind, ID: id}] = v
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// logPulled writes a "pulled" change-log row for each record of recs the copy took from
// the source in this transaction (it holds the source's version now and did not before),
// so that a TUI or a watch on the copy hears of a sync's changes as of a local save, even
// when another process ran the sync. Records held back (local changes, a parent not there
// yet, out of scope) get none. The row names the source's writer, version and time.
func logPulled(ctx context.Context, tx *wcTx, recs []*store.Record, before map[store.RecordKey]int64) error {
	if len(recs) == 0 {
		return nil
	}
	after, err := localVersions(ctx, tx, recs)
	if err != nil {
		return err
	}
	for _, r := range recs {
		k := store.RecordKey{Kind: r.Kind, ID: r.ID}
		now, held := after[k]
		if was, had := before[k]; !held || now != r.Version || (had && was == r.Version) {
			continue
		}
		if _, err := tx.ExecContext(ctx, insertChange, string(store.EventPulled), string(r.Kind), r.ID, r.Version,
			r.UpdatedBy, "", "[]", "{}", false, formatTime(r.UpdatedAt)); err != nil {
			return fmt.Errorf("log %s %d from the source: %w", r.Kind, r.ID, err)
		}
	}
	return nil
}

// refreshGoneConflict gives a conflict that found its record gone from the source the
// record as the source has it again (restored), so that it can be resolved against it.
func (db *DB) refreshGoneConflict(ctx context.Context, tx *wcTx, r *store.Record) error {
	theirs, err := db.encodeValues(r.Kind, r.Fields)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE wc_conflicts SET theirs = ?, theirs_version = ?, reason = ?
		WHERE kind = ? AND record_id = ? AND theirs IS NULL AND op <> ?`,
		theirs, r.Version, store.GoneConflictRestored,
		string(r.Kind), r.ID, string(store.CopyCreate))
	return err
}

// ApplyGone removes records the source deleted (store.WorkingCopy).
func (db *DB) ApplyGone(ctx context.Context, kind store.Kind, ids []int64, at store.FeedPoint) (int, error) {
	t, err := db.kindTable(kind)
	if err != nil {
		return 0, err
	}
	removed := 0
	err = db.inTx(ctx, "apply source deletes", func(tt *tx) error {
		removed = 0 // a retried transaction counts again
		tx, err := db.newWCTx(ctx, tt)
		if err != nil {
			return err
		}
		left := slices.Clone(ids)
		// Children before parents: a document goes once nothing in the copy sits under it,
		// which, in a subtree the source deleted, its children's removal brings about.
		for moved := true; moved && len(left) > 0; {
			moved = false
			var next []int64
			for _, id := range left {
				busy, err := hasLocalState(ctx, tx, kind, id)
				if err != nil {
					return err
				}
				if busy {
					continue // its push meets the delete: a conflict
				}
				if db.Registry().Tree(kind) {
					var n int
					if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+t+` WHERE `+store.ParentField+` = ?`, id).Scan(&n); err != nil {
						return err
					}
					if n > 0 {
						next = append(next, id)
						continue
					}
				}
				n, err := db.removeLocal(ctx, tx, t, kind, id)
				if err != nil {
					return err
				}
				removed += n
				moved = true
			}
			left = next
		}
		for _, id := range left {
			// Documents stay under it (local creates, or edits waiting for a person): the
			// sync reads it again (Stale) and removes it once they are settled.
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO wc_stale (kind, record_id) VALUES (?, ?)`, string(kind), id); err != nil {
				return err
			}
		}
		return movePosition(ctx, tx, at)
	})
	return removed, mapErr("apply source deletes", err)
}

// movePosition moves the copy's feed position forward to at inside tx, or takes at's mark
// for the position the copy is at when it has none (store.WorkingCopy.ApplySource).
func movePosition(ctx context.Context, tx *wcTx, at store.FeedPoint) error {
	if at.ID == 0 {
		return nil
	}
	if err := upgradeCopy(ctx, tx); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE wc_meta SET position = ?1, mark = ?2
		WHERE ?1 > position OR (?1 = position AND mark = '')`, at.ID, at.Mark)
	return err
}

// upgradeCopy brings a format-1 working copy to copyFormat inside tx: it adds wc_meta.mark.
func upgradeCopy(ctx context.Context, tx *wcTx) error {
	var format int
	if err := tx.QueryRowContext(ctx, `SELECT format FROM wc_meta`).Scan(&format); err != nil {
		return fmt.Errorf("read working copy format: %w", err)
	}
	if format >= 2 {
		return nil
	}
	if _, err := tx.Tx.ExecContext(ctx, `ALTER TABLE wc_meta ADD COLUMN mark TEXT NOT NULL DEFAULT ''`); err != nil {
		return fmt.Errorf("upgrade working copy: %w", err)
	}
	_, err := tx.Tx.ExecContext(ctx, `UPDATE wc_meta SET format = 2`)
	return err
}

// removeLocal removes record id of table t from the copy with its base, stale mark, outbox
// entries and conflict, without an outbox entry of its own: the source removed it (a local
// delete queues its entry in queueCopyDelete instead).
func (db *DB) removeLocal(ctx context.Context, tx *wcTx, t string, kind store.Kind, id int64) (removed int, err error) {
	for _, q := range []string{"DELETE FROM " + t + " WHERE id = ?",
		`DELETE FROM wc_base WHERE kind = ? AND record_id = ?`,
		`DELETE FROM wc_stale WHERE kind = ? AND record_id = ?`,
		`DELETE FROM wc_outbox WHERE kind = ? AND record_id = ?`,
		`DELETE FROM wc_conflicts WHERE kind = ? AND record_id = ?`} {
		args := []any{string(kind), id}
		if strings.HasPrefix(q, "DELETE FROM "+t+" ") {
			args = []any{id}
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, fmt.Errorf("remove %s %d: %w", kind, id, err)
		}
		if len(args) == 1 {
			n, _ := res.RowsAffected()
			removed = int(n)
		}
	}
	return removed, nil
}

// DropRecord removes a record the person let the source's delete have (store.WorkingCopy).
func (db *DB) DropRecord(ctx context.Context, kind store.Kind, id int64) error {
	t, err := db.kindTable(kind)
	if err != nil {
		return err
	}
	err = db.inTx(ctx, "drop record", func(tt *tx) error {
		tx, err := db.newWCTx(ctx, tt)
		if err != nil {
			return err
		}
		if db.Registry().Tree(kind) {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+t+` WHERE `+store.ParentField+` = ?`, id).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return store.DropWithChildren(id, n)
			}
		}
		_, err = db.removeLocal(ctx, tx, t, kind, id)
		return err
	})
	return mapErr("drop record", err)
}

// inSubtree reports whether document r belongs under the copy's subtree root: its parent is
// the root or a document the copy holds.
func (db *DB) inSubtree(ctx context.Context, tx *wcTx, r *store.Record, root int64) (bool, error) {
	p, _ := r.Fields[store.ParentField].(int64)
	if p == 0 {
		return false, nil
	}
	if p == root {
		return true, nil
	}
	t, err := tx.table(r.Kind)
	if err != nil {
		return false, err
	}
	var n int
	err = tx.QueryRowContext(ctx, `SELECT count(*) FROM `+t+` WHERE id = ?`, p).Scan(&n)
	return n > 0, err
}

// putSource writes r exactly as the source has it, as the record and as its base. The
// caller has set the applying flag.
func (db *DB) putSource(ctx context.Context, tx *wcTx, r *store.Record) error {
	reg := db.Registry()
	t, err := tx.table(r.Kind)
	if err != nil {
		return err
	}
	if r.Kind == subtreeKind(reg) && r.ID == tx.subtree && r.Fields[store.ParentField] != nil {
		// The subtree's root: its parent is not in the copy.
		c := *r
		c.Fields = r.Fields.Clone()
		delete(c.Fields, store.ParentField)
		r = &c
	}
	cols, args, err := db.sourceRow(r)
	if err != nil {
		return err
	}
	var base int64
	err = tx.QueryRowContext(ctx, `SELECT version FROM wc_base WHERE kind = ? AND record_id = ?`, string(r.Kind), r.ID).Scan(&base)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	case r.Version < base:
		// Versions on the source only grow (a restore too takes the next one): the source
		// lost writes this copy has seen. Nothing of this batch is written.
		return &store.Error{Code: store.EINVALID, Err: store.ErrSourceBehind, Message: fmt.Sprintf(
			"the source has %s %d at version %d, but this copy took version %d from it", r.Kind, r.ID, r.Version, base)}
	}
	if p, ok := r.Fields[store.ParentField].(int64); ok && reg.Tree(r.Kind) {
		// The parent has not come yet (a later page of a clone or a pull: ids do not
		// follow the tree). The record waits (Stale) and is read again once it has.
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+t+` WHERE id = ?`, p).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO wc_stale (kind, record_id) VALUES (?, ?)`, string(r.Kind), r.ID)
			return err
		}
	}
	if !tx.quiet {
		if cycle, err := localCycle(ctx, tx, reg, r); err != nil || cycle {
			// The copy's own move of an ancestor waits in the outbox or the conflict
			// queue; the source's parent would close a loop with it here. The record
			// waits (Stale) until that move is settled, as the source's tree is.
			if err == nil {
				_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO wc_stale (kind, record_id) VALUES (?, ?)`, string(r.Kind), r.ID)
			}
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM wc_stale WHERE kind = ? AND record_id = ?`, string(r.Kind), r.ID); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, upsert(t, cols, 1), args...); err != nil {
		if isForeignKey(err) {
			// A record it refers to is not in the copy (yet): it came later in the same
			// pull, or is outside the copy. The record waits (Stale), as a document
			// whose parent has not come does. SQLite undid this statement only.
			_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO wc_stale (kind, record_id) VALUES (?, ?)`, string(r.Kind), r.ID)
			return err
		}
		if isUnique(err) && len(reg.UniqueFields(r.Kind)) > 0 {
			// A local record (a create not yet pushed, or a key the source has since
			// given to another record) holds a unique field's key: the source's record waits until
			// that is settled (Stale). SQLite undid this statement only.
			_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO wc_stale (kind, record_id) VALUES (?, ?)`, string(r.Kind), r.ID)
			return err
		}
		return fmt.Errorf("write %s %d from the source: %w", r.Kind, r.ID, err)
	}
	if err := writeFolds(ctx, tx, reg, r.Kind, r.ID, reg.Folds(r.Kind, r.Fields)); err != nil {
		return err
	}
	// The copy's own history may run past the source's version: local saves the push sent
	// as fewer (a resolved conflict, changes dropped as unfit). The record has no local
	// state left, so those versions are gone; left, the next local save would write one
	// of their numbers again.
	if _, err := tx.ExecContext(ctx, `DELETE FROM history WHERE kind = ? AND record_id = ? AND version > ?`,
		string(r.Kind), r.ID, r.Version); err != nil {
		return fmt.Errorf("drop %s %d's local history past the source's version: %w", r.Kind, r.ID, err)
	}
	return putBase(ctx, tx, r.Kind, r.ID, r.Version)
}

// localCycle reports whether giving document r its source parent would put it under
// itself in the copy's tree.
func localCycle(ctx context.Context, tx *wcTx, reg *store.Registry, r *store.Record) (bool, error) {
	p, ok := r.Fields[store.ParentField].(int64)
	if !reg.Tree(r.Kind) || !ok {
		return false, nil
	}
	t, err := tx.table(r.Kind)
	if err != nil {
		return false, err
	}
	for range store.MaxDepth + 2 {
		if p == r.ID {
			return true, nil
		}
		var next sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT `+store.ParentField+` FROM `+t+` WHERE id = ?`, p).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !next.Valid) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		p = next.Int64
	}
	return true, nil // deeper than any tree may be: a loop
}

// sourceRow returns the columns and values that write r's row as the source has it (its
// search folds go to their side tables: writeFolds).
func (db *DB) sourceRow(r *store.Record) ([]string, []any, error) {
	cols := db.sourceColumns(r.Kind)
	args, err := db.appendSourceValues(make([]any, 0, len(cols)), r)
	if err != nil {
		return nil, nil, err
	}
	return cols, args, nil
}

// sourceColumns returns the columns of sourceRow's row of a record of kind, the same for
// every record of the kind.
func (db *DB) sourceColumns(kind store.Kind) []string {
	fields := db.Registry().Fields(kind)
	cols := make([]string, 0, len(fields)+5)
	cols = append(cols, "id")
	for _, f := range fields {
		cols = append(cols, quoteIdent(f.Name))
	}
	for _, f := range db.Registry().UniqueFields(kind) {
		cols = append(cols, quoteIdent(store.UniqueKeyColumn(f.Name)))
	}
	return append(cols, "version", "updated_at", "updated_by")
}

// appendSourceValues appends the values of sourceRow's row of r to args, in the order of
// sourceColumns(r.Kind).
func (db *DB) appendSourceValues(args []any, r *store.Record) ([]any, error) {
	args = append(args, r.ID)
	for _, f := range db.Registry().Fields(r.Kind) {
		v, ok := r.Fields[f.Name]
		if !ok {
			v = f.Zero()
		}
		c, err := encodeColumn(f, v)
		if err != nil {
			return args, err
		}
		args = append(args, c)
	}
	for _, f := range db.Registry().UniqueFields(r.Kind) {
		v, _ := r.Fields[f.Name].(string)
		args = append(args, store.SKUKey(v))
	}
	return append(args, r.Version, formatTime(r.UpdatedAt), r.UpdatedBy), nil
}

// upsert returns the statement that writes n rows of cols into table t, replacing rows with
// the same id.
func upsert(t string, cols []string, n int) string {
	set := make([]string, 0, len(cols)-1)
	for _, c := range cols[1:] {
		set = append(set, c+" = excluded."+c)
	}
	row := "(" + strings.Repeat("?, ", len(cols)-1) + "?)"
	rows := strings.Repeat(row+", ", n-1) + row
	return "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") VALUES " + rows +
		" ON CONFLICT (id) DO UPDATE SET " + strings.Join(set, ", ")
}

// bulkRows is how many records one statement of a bulk write holds.
const bulkRows = 64

// putSourceBulk writes records of one kind as putSource does, bulkRows to a statement: a
// clone writes a hundred thousand records, and a statement costs more than a row. Only for
// a copy without local state (tx.quiet), where no record needs a check of its own. A chunk
// that fails (a sku a local record holds) is written again record by record.
func (db *DB) putSourceBulk(ctx context.Context, tx *wcTx, recs []*store.Record) error {
	// The rows of the next chunk are built (encoded values, search folds, sku keys) in a
	// goroutine while SQLite writes the last one.
	chunks := make(chan rowChunk, 2)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(chunks)
		for len(recs) > 0 {
			n := min(bulkRows, len(recs))
			c := db.buildChunk(recs[:n])
			recs = recs[n:]
			select {
			case chunks <- c:
			case <-stop:
				return
			}
		}
	}()
	for c := range chunks {
		if c.err != nil || db.putChunk(ctx, tx, c) != nil {
			for _, r := range c.recs {
				if err := db.putSource(ctx, tx, r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// rowChunk is up to bulkRows records of one kind as one statement's values, or the reason
// they cannot be written together.
type rowChunk struct {
	recs  []*store.Record
	cols  []string
	args  []any
	base  []any
	ids   []int64
	folds []map[string]string // the search folds of recs, for writeFoldsBulk
	err   error
}

func (db *DB) buildChunk(recs []*store.Record) rowChunk {
	c := rowChunk{recs: recs, base: make([]any, 0, 3*len(recs))}
	kind := recs[0].Kind
	for _, r := range recs {
		cols, args, err := db.sourceRow(r)
		if err != nil {
			c.err = err
			return c
		}
		if r.Kind != kind || (c.cols != nil && !slices.Equal(cols, c.cols)) {
			c.err = errors.New("mixed rows")
			return c
		}
		c.cols, c.args = cols, append(c.args, args...)
		c.base = append(c.base, string(kind), r.ID, r.Version)
		c.ids, c.folds = append(c.ids, r.ID), append(c.folds, db.Registry().Folds(kind, r.Fields))
	}
	return c
}

func (db *DB) putChunk(ctx context.Context, tx *wcTx, c rowChunk) error {
	t, err := tx.table(c.recs[0].Kind)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, upsert(t, c.cols, len(c.recs)), c.args...); err != nil {
		return err
	}
	if err := writeFoldsBulk(ctx, tx, db.Registry(), c.recs[0].Kind, c.ids, c.folds); err != nil {
		return err
	}
	rows := strings.Repeat("(?, ?, ?), ", len(c.recs)-1) + "(?, ?, ?)"
	res, err := tx.ExecContext(ctx, `INSERT INTO wc_base (kind, record_id, version) VALUES `+rows+`
		ON CONFLICT (kind, record_id) DO UPDATE SET version = excluded.version WHERE excluded.version >= wc_base.version`, c.base...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && int(n) < len(c.recs) {
		// A record came at a version below the one the copy had from the source: the
		// caller writes the chunk record by record, and putSource says which.
		return errors.New("a record went back")
	}
	return nil
}

// putBase makes version the base version of a record. Its base values need no copy of
// their own: while the record has no outbox entries they are its values, and the oldest
// entry's Before holds them once it has.
func putBase(ctx context.Context, tx *wcTx, kind store.Kind, id, version int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO wc_base (kind, record_id, version) VALUES (?, ?, ?)
		ON CONFLICT (kind, record_id) DO UPDATE SET version = excluded.version`, string(kind), id, version)
	return err
}

// Stale returns the source's records the copy could not write yet (store.WorkingCopy).
func (db *DB) Stale(ctx context.Context) (map[store.Kind][]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT kind, record_id FROM wc_stale ORDER BY kind, record_id`)
	if err != nil {
		return nil, mapErr("read stale records", err)
	}
	defer rows.Close()
	out := map[store.Kind][]int64{}
	for rows.Next() {
		var kind string
		var id int64
		if err := rows.Scan(&kind, &id); err != nil {
			return nil, mapErr("read stale records", err)
		}
		out[store.Kind(kind)] = append(out[store.Kind(kind)], id)
	}
	return out, mapErr("read stale records", rows.Err())
}

// Outbox returns the entries waiting to be pushed (store.WorkingCopy).
func (db *DB) Outbox(ctx context.Context, limit int) ([]store.OutboxEntry, error) {
	q := `SELECT ` + entryColumns + ` FROM wc_outbox ORDER BY seq`
	args := []any{}
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr("read outbox", err)
	}
	return db.scanEntries(rows)
}

// entryColumns are the columns of wc_outbox that scanEntries reads.
const entryColumns = `seq, op, kind, record_id, base_version, before, after, key, actor, at`

// scanEntries reads the outbox entries of rows, which selects the columns Outbox names, and
// closes rows.
func (db *DB) scanEntries(rows *sql.Rows) ([]store.OutboxEntry, error) {
	defer rows.Close()
	var out []store.OutboxEntry
	for rows.Next() {
		var (
			e                 store.OutboxEntry
			op, kind          string
			before, after, at string
			err               error
		)
		if err := rows.Scan(&e.Seq, &op, &kind, &e.ID, &e.BaseVersion, &before, &after, &e.Key, &e.Actor, &at); err != nil {
			return nil, mapErr("read outbox", err)
		}
		e.Op, e.Kind = store.CopyOp(op), store.Kind(kind)
		if e.Before, err = db.decodeValues(e.Kind, before); err != nil {
			return nil, err
		}
		var unknown bool
		if e.After, unknown, err = db.decodeKnown(e.Kind, after); err != nil {
			return nil, err
		}
		if unknown {
			if err := keepUnknown(db.Registry(), e.Kind, before, after, e.After); err != nil {
				return nil, err
			}
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, mapErr("read outbox", rows.Err())
}

// findEntry reads the kind, record and base version of outbox entry seq.
func findEntry(ctx context.Context, tx *wcTx, seq int64) (kind store.Kind, id, base int64, op store.CopyOp, err error) {
	var k, o string
	err = tx.QueryRowContext(ctx, `SELECT kind, record_id, base_version, op FROM wc_outbox WHERE seq = ?`, seq).Scan(&k, &id, &base, &o)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, 0, "", store.Errorf(store.ENOTFOUND, "outbox entry %d is gone", seq)
	}
	return store.Kind(k), id, base, store.CopyOp(o), err
}

// AckEntry removes an entry that is now on the source (store.WorkingCopy).
func (db *DB) AckEntry(ctx context.Context, seq int64, rec *store.Record, rebase bool) error {
	return db.AckEntries(ctx, []store.Ack{{Seq: seq, Record: rec, Rebase: rebase}})
}

// AckEntries is AckEntry for several entries, in order (store.WorkingCopy): in one
// transaction, unless it is a background write (InBackground) that another write comes to
// wait for; then the entries acknowledged so far are committed, and the rest follow in
// another transaction (givesWay).
func (db *DB) AckEntries(ctx context.Context, acks []store.Ack) error {
	for len(acks) > 0 {
		done := 0
		rest := ctx
		err := db.inTx(ctx, "acknowledge outbox entries", func(t *tx) error {
			done = 0 // fn may run more than once
			tx, err := db.newWCTx(ctx, t)
			if err != nil {
				return err
			}
			for _, a := range acks {
				if done > 0 && t.givesWay() {
					rest = t.restOf(ctx)
					return nil
				}
				if err := db.ackEntry(ctx, tx, a.Seq, a.Record, a.Rebase); err != nil {
					return err
				}
				done++
			}
			return nil
		})
		if err != nil {
			return mapErr("acknowledge outbox entries", err)
		}
		acks, ctx = acks[done:], rest
	}
	return nil
}

// ackEntry acknowledges one entry inside tx.
func (db *DB) ackEntry(ctx context.Context, tx *wcTx, seq int64, rec *store.Record, rebase bool) error {
	kind, id, base, op, err := findEntry(ctx, tx, seq)
	if err != nil {
		return err
	}
	if op == store.CopyDelete {
		return ackDelete(ctx, tx, seq, kind, id) // rec is nil: the source has no record left
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM wc_outbox WHERE seq = ?`, seq); err != nil {
		return err
	}
	if err := applying(ctx, tx, true); err != nil {
		return err
	}
	if op == store.CopyCreate && rec.ID != id {
		// The source gave the record its id: the local one goes, the source's comes, and
		// what was queued for the local id follows it.
		if err := db.remapLocal(ctx, tx, kind, id, rec.ID); err != nil {
			return err
		}
		for _, q := range []string{`UPDATE wc_outbox SET record_id = ? WHERE kind = ? AND record_id = ?`,
			`UPDATE wc_conflicts SET record_id = ? WHERE kind = ? AND record_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, rec.ID, string(kind), id); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE wc_outbox SET base_version = ? WHERE kind = ? AND record_id = ? AND base_version = 0`,
			rec.Version, string(kind), rec.ID); err != nil {
			return err
		}
		id = rec.ID
		if err := db.putSource(ctx, tx, rec); err != nil {
			return err
		}
	} else if rebase {
		if _, err := tx.ExecContext(ctx, `UPDATE wc_outbox SET base_version = ? WHERE kind = ? AND record_id = ? AND base_version = ?`,
			rec.Version, string(kind), id, base); err != nil {
			return err
		}
	}
	busy, err := hasLocalState(ctx, tx, kind, id)
	if err != nil {
		return err
	}
	switch {
	case !busy:
		err = db.putSource(ctx, tx, rec)
	case rebase:
		// Later local edits were made on top of this one, which is now rec.Version.
		_, err = tx.ExecContext(ctx, `UPDATE wc_base SET version = ? WHERE kind = ? AND record_id = ? AND version = ?`,
			rec.Version, string(kind), id, base)
	}
	if err != nil {
		return err
	}
	return applying(ctx, tx, false)
}

// remapLocal gives the record created in the copy as local id the source's id, inside tx
// (the transaction of the create's acknowledgement, so a crash keeps both or neither): the
// local row goes (the caller writes the source's), and every document under it, with the
// parent ids in queued entries and conflicts, follows. A document with children keeps its
// row under the new id instead, unless a pull brought the source's row already, so that the
// children always have a parent to point at; foreign keys are checked at commit, once parent
// and children agree again. The caller has set the applying flag, so none of this is queued
// as a local change.
func (db *DB) remapLocal(ctx context.Context, tx *wcTx, kind store.Kind, local, id int64) error {
	t, err := tx.table(kind)
	if err != nil {
		return err
	}
	var have, children int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+t+" WHERE id = ?", id).Scan(&have); err != nil {
		return err
	}
	tree := db.Registry().Tree(kind)
	if tree {
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+t+` WHERE `+store.ParentField+` = ?)`, local).Scan(&children); err != nil {
			return err
		}
	}
	if children > 0 {
		// Unprepared, on the transaction: SQLite sets the flag when it prepares the pragma,
		// not when it runs it, so a statement from a cache (prepared earlier, perhaps outside
		// this transaction, whose end turned the flag off again) would leave the foreign
		// keys immediate, and the statements below would fail.
		if _, err := tx.Tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
			return fmt.Errorf("defer foreign keys: %w", err)
		}
	}
	if have > 0 || children == 0 {
		// The plain case, as cheap as a delete: the source's row comes in its place.
		_, err = tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE id = ?", local)
	} else {
		_, err = tx.ExecContext(ctx, "UPDATE "+t+" SET id = ? WHERE id = ?", id, local)
	}
	if err != nil {
		return fmt.Errorf("give %s %d the source's id %d: %w", kind, local, id, err)
	}
	if !tree {
		return nil
	}
	p := store.ParentField
	if children > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE `+t+` SET `+p+` = ? WHERE `+p+` = ?`, id, local); err != nil {
			return fmt.Errorf("move the children of %s %d to its source id %d: %w", kind, local, id, err)
		}
	}
	path := "'$." + p + "'"
	for _, q := range []string{
		`UPDATE wc_outbox SET before = json_set(before, ` + path + `, ?) WHERE kind = ? AND json_extract(before, ` + path + `) = ?`,
		`UPDATE wc_outbox SET after = json_set(after, ` + path + `, ?) WHERE kind = ? AND json_extract(after, ` + path + `) = ?`,
		`UPDATE wc_conflicts SET base = json_set(base, ` + path + `, ?) WHERE kind = ? AND json_extract(base, ` + path + `) = ?`,
		`UPDATE wc_conflicts SET mine = json_set(mine, ` + path + `, ?) WHERE kind = ? AND json_extract(mine, ` + path + `) = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, id, string(kind), local); err != nil {
			return fmt.Errorf("point queued changes at %s %d's source id %d: %w", kind, local, id, err)
		}
	}
	return nil
}

// QueueConflict replaces an outbox entry by a conflict (store.WorkingCopy).
func (db *DB) QueueConflict(ctx context.Context, seq int64, c store.CopyConflict) error {
	err := db.inTx(ctx, "queue conflict", func(t *tx) error {
		tx, err := db.newWCTx(ctx, t)
		if err != nil {
			return err
		}
		if _, _, _, _, err := findEntry(ctx, tx, seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM wc_outbox WHERE seq = ?`, seq); err != nil {
			return err
		}
		old, err := db.findConflict(ctx, tx, c.Kind, c.ID)
		switch {
		case err == nil:
			c = store.JoinConflict(old, c) // one conflict per record
		case store.ErrorCode(err) != store.ENOTFOUND:
			return err
		}
		return db.putConflict(ctx, tx, c)
	})
	return mapErr("queue conflict", err)
}

func (db *DB) putConflict(ctx context.Context, tx *wcTx, c store.CopyConflict) error {
	base, err := db.encodeValues(c.Kind, c.Base)
	if err != nil {
		return err
	}
	mine, err := db.encodeValues(c.Kind, c.Mine)
	if err != nil {
		return err
	}
	var theirs any
	if c.Theirs != nil {
		s, err := db.encodeValues(c.Kind, c.Theirs)
		if err != nil {
			return err
		}
		theirs = s
	}
	fields := c.Fields
	if fields == nil {
		fields = []string{}
	}
	at := c.At
	if at.IsZero() {
		at = tx.now
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO wc_conflicts
		(kind, record_id, op, reason, fields, base, mine, theirs, theirs_version, base_version, actor, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(c.Kind), c.ID, string(c.Op), c.Reason, jsonText(fields), base, mine, theirs, c.TheirsVersion, c.BaseVersion, c.Actor, formatTime(at))
	return err
}

// conflictColumns returns the columns scanConflict reads from wc_conflicts, the last one the
// version of the conflict's record in the copy (0 when it holds none).
func (db *DB) conflictColumns() string {
	reg := db.Registry()
	var b strings.Builder
	b.WriteString(`kind, record_id, op, reason, fields, base, mine, theirs, theirs_version, base_version, actor, at, coalesce(CASE kind`)
	for _, kind := range reg.Kinds() {
		t, err := reg.Table(kind)
		if err != nil {
			continue
		}
		b.WriteString(" WHEN " + sqlString(string(kind)) + " THEN (SELECT version FROM " + quoteIdent(t) + " WHERE id = record_id)")
	}
	b.WriteString(" ELSE NULL END, 0)")
	return b.String()
}

func (db *DB) scanConflict(sc scanner) (store.CopyConflict, error) {
	var (
		c                                store.CopyConflict
		kind, op, fields, base, mine, at string
		theirs                           sql.NullString
	)
	if err := sc.Scan(&kind, &c.ID, &op, &c.Reason, &fields, &base, &mine, &theirs, &c.TheirsVersion, &c.BaseVersion, &c.Actor, &at, &c.LocalVersion); err != nil {
		return c, err
	}
	c.Kind, c.Op = store.Kind(kind), store.CopyOp(op)
	var err error
	if err = json.Unmarshal([]byte(fields), &c.Fields); err != nil {
		return c, err
	}
	if c.Base, err = db.decodeValues(c.Kind, base); err != nil {
		return c, err
	}
	if c.Mine, err = db.decodeValues(c.Kind, mine); err != nil {
		return c, err
	}
	if theirs.Valid {
		if c.Theirs, err = db.decodeValues(c.Kind, theirs.String); err != nil {
			return c, err
		}
	}
	c.At, err = parseTime(at)
	return c, err
}

func (db *DB) findConflict(ctx context.Context, q querier, kind store.Kind, id int64) (store.CopyConflict, error) {
	c, err := db.scanConflict(q.QueryRowContext(ctx, `SELECT `+db.conflictColumns()+` FROM wc_conflicts WHERE kind = ? AND record_id = ?`, string(kind), id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, store.NoConflict(kind, id)
	}
	return c, err
}

// Conflicts returns the open conflicts (store.WorkingCopy).
func (db *DB) Conflicts(ctx context.Context) ([]store.CopyConflict, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+db.conflictColumns()+` FROM wc_conflicts ORDER BY kind, record_id`)
	if err != nil {
		return nil, mapErr("read conflicts", err)
	}
	defer rows.Close()
	var out []store.CopyConflict
	for rows.Next() {
		c, err := db.scanConflict(rows)
		if err != nil {
			return nil, mapErr("read conflicts", err)
		}
		out = append(out, c)
	}
	return out, mapErr("read conflicts", rows.Err())
}

// takeConflict reads the conflict of kind id in t and, when check accepts it, removes it from
// the queue: the first step of answering one, whatever the answer.
func (db *DB) takeConflict(ctx context.Context, t *tx, kind store.Kind, id int64, check func(store.CopyConflict) error) (*wcTx, store.CopyConflict, error) {
	tx, err := db.newWCTx(ctx, t)
	if err != nil {
		return nil, store.CopyConflict{}, err
	}
	c, err := db.findConflict(ctx, tx, kind, id)
	if err != nil {
		return nil, c, err
	}
	if err := check(c); err != nil {
		return nil, c, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM wc_conflicts WHERE kind = ? AND record_id = ?`, string(kind), id); err != nil {
		return nil, c, err
	}
	return tx, c, nil
}

// ResolveConflict closes a conflict with the values a person chose (store.WorkingCopy).
func (db *DB) ResolveConflict(ctx context.Context, kind store.Kind, id int64, vals store.Values) error {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return err
	}
	err = db.inTx(ctx, "resolve conflict", func(t *tx) error {
		tx, c, err := db.takeConflict(ctx, t, kind, id, func(c store.CopyConflict) error {
			if c.Gone() {
				return store.GoneFromSource(kind, id)
			}
			if c.Op == store.CopyDelete {
				return store.ResolveDeleteWhole(kind, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		// The chosen values become the local record's.
		if err := applying(ctx, tx, true); err != nil {
			return err
		}
		if err := db.writeLocal(ctx, tx, kind, id, vals, actor.Name); err != nil {
			return fmt.Errorf("write resolution: %w", err)
		}
		if err := applying(ctx, tx, false); err != nil {
			return err
		}
		if c.Theirs != nil {
			if err := putBase(ctx, tx, kind, id, c.TheirsVersion); err != nil {
				return err
			}
		}
		return db.queueResolution(ctx, tx, c, vals, actor.Name)
	})
	return mapErr("resolve conflict", err)
}

// writeLocal writes vals (copy columns) into the copy's record kind id as a write of actor:
// with the applying flag clear, the outbox triggers queue it as a local save would.
func (db *DB) writeLocal(ctx context.Context, tx *wcTx, kind store.Kind, id int64, vals store.Values, actor string) error {
	tbl, err := tx.table(kind)
	if err != nil {
		return err
	}
	reg := db.Registry()
	var sets []string
	var args []any
	for _, f := range db.copyColumns(kind) {
		v, ok := vals[f.Name]
		if !ok {
			continue
		}
		enc, err := encodeColumn(f, v)
		if err != nil {
			return err
		}
		sets, args = append(sets, quoteIdent(f.Name)+" = ?"), append(args, enc)
	}
	for _, f := range reg.UniqueFields(kind) {
		if v, ok := vals[f.Name].(string); ok {
			sets, args = append(sets, quoteIdent(store.UniqueKeyColumn(f.Name))+" = ?"), append(args, store.SKUKey(v))
		}
	}
	sets = append(sets, "version = version + 1", "updated_at = ?", "updated_by = ?")
	args = append(args, formatTime(tx.now), actor, id)
	if _, err := tx.ExecContext(ctx, "UPDATE "+tbl+" SET "+strings.Join(sets, ", ")+" WHERE id = ?", args...); err != nil {
		return err
	}
	return writeFolds(ctx, tx, reg, kind, id, reg.Folds(kind, vals))
}

// queueResolution adds the outbox entries that take a resolution to the source
// (store.Registry.ResolutionEntries).
func (db *DB) queueResolution(ctx context.Context, tx *wcTx, c store.CopyConflict, vals store.Values, actor string) error {
	for _, e := range db.Registry().ResolutionEntries(c, vals) {
		b, err := db.encodeValues(c.Kind, e.Before)
		if err != nil {
			return err
		}
		a, err := db.encodeValues(c.Kind, e.After)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO wc_outbox (op, kind, record_id, base_version, before, after, key, actor, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, string(e.Op), string(c.Kind), c.ID, e.BaseVersion, b, a,
			store.ResolveKey+randomHex(16), actor, formatTime(tx.now))
		if err != nil {
			return err
		}
	}
	return nil
}

// SetSource records where the source is found now (store.WorkingCopy).
func (db *DB) SetSource(ctx context.Context, source string) error {
	err := db.inTx(ctx, "set working copy source", func(tx *tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE wc_meta SET source = ?`, source)
		return err
	})
	return mapErr("set working copy source", err)
}

// MarkSynced records the end of a sync with nothing left to move (store.WorkingCopy).
func (db *DB) MarkSynced(ctx context.Context, at time.Time) error {
	err := db.inTx(ctx, "mark synced", func(tx *tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE wc_meta SET synced_at = ?`, formatTime(at))
		return err
	})
	return mapErr("mark synced", err)
}

// Checkpoint moves everything from the write-ahead log into the database file, so the file
// alone holds the store (a clone is made in a temporary file and then linked into place).
func (db *DB) Checkpoint(ctx context.Context) (bool, error) {
	busy, err := db.checkpointTruncate(ctx)
	if err != nil {
		return false, mapErr("checkpoint", err)
	}
	return !busy, nil
}

// refuseOnCopy refuses what a working copy cannot do: a lease would hold nobody back, since
// the others edit the source, not this file.
func (db *DB) refuseOnCopy(ctx context.Context) error {
	ok, err := db.isCopy(ctx, db.read)
	if err != nil {
		return mapErr("read working copy", err)
	}
	if ok {
		return store.CopyLeaseRefused(db.path)
	}
	return nil
}

// What DB.copyKnown holds.
const (
	copyUnknown int32 = iota
	copyNo
	copyYes
)

// copyWriter returns the state of the working copy when a write by actor must pass the
// working-copy rules (store.CheckCopyWriter), nil when it need not: an editor's write, or
// any write to a store that is not a working copy. An editor's save, the common one, reads
// nothing here, and a system save on a store that is no copy reads only once per DB
// (copyKnown), so the programs' hot-row saves keep their statement count. The read is made
// before the write transaction, outside the write lock: a store never stops being a working
// copy, and one becomes a copy only while it holds no record to write.
func (db *DB) copyWriter(ctx context.Context, actor store.Actor) (*store.CopyState, error) {
	if actor.Role == store.RoleEditor || db.copyKnown.Load() == copyNo {
		return nil, nil
	}
	s, err := db.CopyState(ctx)
	if store.ErrorCode(err) == store.ENOTFOUND {
		db.copyKnown.CompareAndSwap(copyUnknown, copyNo)
		return nil, nil
	}
	return s, err
}

// isUnique reports whether err is a unique constraint failing.
// isForeignKey reports whether err is SQLite's refusal of a row whose reference names no
// row.
func isForeignKey(err error) bool {
	code, ok := sqliteCode(err)
	return ok && code == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

func isUnique(err error) bool {
	code, ok := sqliteCode(err)
	return ok && code == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}
