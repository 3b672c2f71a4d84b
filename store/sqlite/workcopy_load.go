package sqlite

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tandem-editor/tandem/store"
)

var _ store.CopyLoader = (*DB)(nil)

// loadRows is how many records one INSERT of LoadCopy holds: a statement costs more than a
// row, and a product row has about twenty values, far below SQLite's 32,766 parameters.
const loadRows = 256

// maxBacklog is how many chunks at most wait for their folds and base versions to be
// written (loadRows): enough to fill the writer's waits for the encoder, few enough that a
// load's memory does not grow with the source.
const maxBacklog = 8

// loadHashSize is the memory, in bytes, an FTS5 index may hold its pending terms in while
// BuildSearchIndex rebuilds it; ftsHashSize is FTS5's own default, put back after.
const (
	loadHashSize = 64 << 20
	ftsHashSize  = 1 << 20
)

// LoadCopy writes a clone's records of a kind that is not a tree in one transaction
// (store.CopyLoader).
//
// Per row, a product written through the table's triggers and indexes costs far more than
// the row itself: four FTS5 trigram indexes flushed at every statement (FTS5 writes its
// pending terms out at each statement's savepoint, leaving thousands of small segments to
// merge), the outbox triggers' check of the applying flag, and six secondary b-trees. So the
// load takes the table's triggers and indexes out inside its transaction, writes the rows
// alone, then builds each index once from the sorted rows and puts the triggers back, all
// before the commit: no other connection ever sees the table without them, and a load that
// fails or is killed leaves the copy as it was. The FTS5 indexes, the largest part of the
// work, are left empty, with their triggers, for BuildSearchIndex (workcopy_search.go);
// search scans the folded text meanwhile. The schema is read from sqlite_master, so whatever
// indexes and triggers the migrations made are the ones put back or built later.
//
// The transaction runs on a bulk connection of its own (bulk.go), not on the store's write
// connection: binding some two million arguments through the driver cost a third of the
// load. It is BEGIN IMMEDIATE like every write of the store, and waits for another writer
// as they do; it is not part of the process's group commit (commit.go), whose transactions
// wait for it the same way.
//
// The page cache stays at its default: a large one costs more than it saves here, because
// the pure-Go allocator returns every page to the system one by one when it shrinks or
// closes (measured: 64 MiB of cache, 1.2 s more system time for 100,000 products).
func (db *DB) LoadCopy(ctx context.Context, kind store.Kind, read func(put func(*store.Record) error) error) error {
	reg := db.Registry()
	if reg.Tree(kind) {
		return store.Errorf(store.EINVALID, "load working copy: %ss are a tree, not loaded in bulk (each needs its parent first)", kind)
	}
	t, err := reg.Table(kind)
	if err != nil {
		return err
	}
	if db.readOnly != "" {
		return db.errReadOnly("load working copy", db.readOnly)
	}
	err = db.bulkTx(ctx, func(c *bulkConn) error {
		if err := checkLoadable(c, db.path, kind, t); err != nil {
			return err
		}
		// The tables the load writes rows into: the record's and the side table of its
		// search folds (foldTable), so that their triggers and indexes are taken out and
		// their FTS5 index rebuilt.
		tables := []string{t}
		if len(reg.FoldedFields(kind)) > 0 {
			ft, err := foldTable(reg, kind)
			if err != nil {
				return err
			}
			tables = append(tables, ft)
		}
		schema, err := takeOutSchema(c, tables)
		if err != nil {
			return err
		}
		if err := db.loadRows(ctx, c, t, kind, read); err != nil {
			return err
		}
		if err := schema.putBack(c); err != nil {
			return err
		}
		return deferSearch(c, kind, schema.fts, schema.ftsTriggers)
	})
	if err == nil {
		db.searchBuilt.Store(false)
		db.committed()
	}
	return mapErr("load working copy", err)
}

// bulkTx runs fn in one write transaction (BEGIN IMMEDIATE) on a bulk connection of its own
// to the file (bulk.go), with the settings of the store's write connections, and commits
// it when fn returns nil; otherwise, or when the commit fails, nothing fn wrote stays.
func (db *DB) bulkTx(ctx context.Context, fn func(*bulkConn) error) error {
	c, err := openBulk(ctx, db.wdsn)
	if err != nil {
		return err
	}
	defer c.close()
	if err := c.exec("BEGIN IMMEDIATE"); err != nil {
		return err
	}
	err = fn(c)
	if err == nil {
		err = c.exec("COMMIT") // refused once ctx has ended
	}
	if err != nil {
		_ = c.rollback()
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			// An interrupted statement fails with SQLite's "interrupted": say why.
			return fmt.Errorf("%w (%v)", cerr, err)
		}
		return err
	}
	return nil
}

// checkLoadable refuses a load into a file that is not a fresh working copy of kind (the
// file's name is path, for the message).
func checkLoadable(c *bulkConn, path string, kind store.Kind, t string) error {
	isCopy := false
	if err := c.query(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'wc_meta'`, nil, func(r []any) error {
		isCopy = r[0] != int64(0)
		return nil
	}); err != nil {
		return fmt.Errorf("read working copy: %w", err)
	}
	if !isCopy {
		return store.Errorf(store.ENOTFOUND, "%s is not a working copy (tandem clone makes one)", path)
	}
	var (
		busy, full bool
		kinds      string
	)
	if err := c.query(`SELECT EXISTS (SELECT 1 FROM wc_outbox) OR EXISTS (SELECT 1 FROM wc_conflicts)
		OR EXISTS (SELECT 1 FROM wc_stale), (SELECT kinds FROM wc_meta), EXISTS (SELECT 1 FROM `+t+`)`, nil, func(r []any) error {
		busy, full = r[0] != int64(0), r[2] != int64(0)
		kinds, _ = r[1].(string)
		return nil
	}); err != nil {
		return fmt.Errorf("read working copy: %w", err)
	}
	switch {
	case busy:
		return store.Errorf(store.EINVALID, "load working copy: the copy has outbox entries, conflicts or stale records; a load goes into a fresh copy")
	case !strings.Contains(kinds, `"`+string(kind)+`"`):
		return store.Errorf(store.EINVALID, "load working copy: the copy does not copy %ss", kind)
	case full:
		return store.Errorf(store.EINVALID, "load working copy: the copy holds %s already; a load goes into a fresh copy", t)
	}
	return nil
}

// loadChunk is up to loadRows records as one INSERT's values, or the error that ended the
// reading or the encoding.
type loadChunk struct {
	n    int
	cols []string
	args []bulkValue // the statement's arguments
	// folds holds, for each folded field (store.FoldedFields), the arguments of its side
	// table's INSERT: id and fold of each record that has the field.
	folds [][]bulkValue
	// base holds the arguments of the chunk's wc_base rows: kind, id and version of each.
	base []bulkValue
	err  error
}

// errLoadStopped is what put returns to LoadCopy's read once the load has failed.
var errLoadStopped = errors.New("load working copy: the load stopped")

// loadRows writes the records read hands over into table t, their search folds into their
// side tables and their base versions into wc_base, loadRows records to a statement. read runs in a goroutine, and put
// encodes each record there (values and sku key: sourceRow; folds: store.FoldValue of each
// folded field that the record has, as store.Folds gives them to every write of a source
// record) into the next chunk while SQLite writes the last one; read may reuse a record
// once put returns, as a store.RecordStreamer does, so none is copied. The statements run
// on the bulk connection bc, with arguments the encoder has made bulkValues (converted as
// database/sql converts them, on the encoder's goroutine).
func (db *DB) loadRows(ctx context.Context, bc *bulkConn, t string, kind store.Kind, read func(put func(*store.Record) error) error) error {
	reg := db.Registry()
	folded := reg.FoldedFields(kind)
	ft, err := foldTable(reg, kind)
	if err != nil {
		return err
	}
	slots := make([]int64, len(folded)) // each folded field's slot in the search keys
	for i, name := range folded {
		found := false
		err := bc.query("SELECT slot FROM "+slotsTable+" WHERE tbl = ? AND field = ?", []any{t, name}, func(r []any) error {
			slots[i], found = r[0].(int64)
			return nil
		})
		if err == nil && !found {
			err = store.Errorf(store.EINTERNAL, "no search slot; the store's search tables are damaged")
		}
		if err != nil {
			return fmt.Errorf("read the search slot of %s.%s: %w", t, name, err)
		}
	}
	chunks := make(chan loadChunk, 4)
	// spare hands the written chunks' buffers back to the encoder, which fills them again:
	// a chunk's arguments are some 4,000 values, and making new ones for each of hundreds
	// of chunks was a third of what the load allocated (and the collector then scanned).
	spare := make(chan loadChunk, cap(chunks)+2)
	stop := make(chan struct{})
	defer func() {
		close(stop)
		for range chunks { // let the encoder end before the transaction does
		}
	}()
	go func() {
		defer close(chunks)
		send := func(c loadChunk) bool {
			select {
			case chunks <- c:
				return true
			case <-stop:
				return false
			}
		}
		fresh := func() loadChunk {
			select {
			case c := <-spare:
				return c
			default:
				return loadChunk{}
			}
		}
		// The columns are the same for every record of kind (sourceColumns); vals holds
		// one record's values at a time.
		cols := db.sourceColumns(kind)
		vals := make([]any, 0, len(cols))
		c := fresh()
		put := func(r *store.Record) error {
			select {
			case <-stop: // the writer failed: read no further
				return errLoadStopped
			default:
			}
			if r.Kind != kind {
				return store.Errorf(store.EINVALID, "load working copy: a %s among the %ss", r.Kind, kind)
			}
			var err error
			if vals, err = db.appendSourceValues(vals[:0], r); err != nil {
				return fmt.Errorf("%s %d: %w", kind, r.ID, err)
			}
			if c.cols == nil {
				c.cols = cols
				if cap(c.args) < loadRows*len(cols) {
					c.args = make([]bulkValue, 0, loadRows*len(cols))
				}
			}
			if c.args, err = appendBulkValues(c.args, vals...); err != nil {
				return fmt.Errorf("%s %d: %w", kind, r.ID, err)
			}
			if len(c.folds) != len(folded) {
				c.folds = make([][]bulkValue, len(folded))
				for i := range c.folds {
					c.folds[i] = make([]bulkValue, 0, 2*loadRows)
				}
			}
			for i, name := range folded {
				if v, ok := r.Fields[name]; ok {
					c.folds[i] = append(c.folds[i], intValue(searchKey(r.ID, slots[i])), textValue(store.FoldValue(v)))
				}
			}
			c.base = append(c.base, textValue(string(kind)), intValue(r.ID), intValue(r.Version))
			if c.n++; c.n == loadRows {
				if !send(c) {
					return errLoadStopped
				}
				c = fresh()
			}
			return nil
		}
		if err := read(put); err != nil {
			if !errors.Is(err, errLoadStopped) {
				send(loadChunk{err: err})
			}
			return
		}
		if c.n > 0 {
			send(c)
		}
	}()
	// The statements' text, made once per size: every chunk but the last has loadRows
	// records.
	rowsSQL, baseSQL, foldSQL := map[int]string{}, map[int]string{}, map[int]string{}
	// rest writes what a chunk holds beside its rows (its search folds and base versions),
	// then hands its buffers back to the encoder.
	rest := func(c loadChunk) error {
		for i, args := range c.folds {
			n := len(args) / 2
			if n == 0 {
				continue
			}
			q, ok := foldSQL[n]
			if !ok {
				q = foldUpsert(ft, n)
				foldSQL[n] = q
			}
			if err := bc.queryValues(q, args, nil); err != nil {
				return fmt.Errorf("write the search text of %d %ss (%s): %w", n, kind, folded[i], err)
			}
		}
		q, ok := baseSQL[c.n]
		if !ok {
			q = "INSERT INTO wc_base (kind, record_id, version) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", c.n), ", ") +
				" ON CONFLICT (kind, record_id) DO UPDATE SET version = excluded.version"
			baseSQL[c.n] = q
		}
		if err := bc.queryValues(q, c.base, nil); err != nil {
			return fmt.Errorf("write base versions: %w", err)
		}
		// The statements have run: their arguments may be overwritten.
		c.n, c.cols, c.args, c.base = 0, nil, c.args[:0], c.base[:0]
		for i := range c.folds {
			c.folds[i] = c.folds[i][:0]
		}
		select {
		case spare <- c:
		default:
		}
		return nil
	}
	// The rows of each chunk are written as it comes; the rest of it may wait (backlog)
	// and is written while the encoder has no chunk ready, so that the writer, which the
	// load's time hangs on, does not sit idle while the source is read and encoded.
	var backlog []loadChunk
	for {
		var (
			c  loadChunk
			ok bool
		)
		if len(backlog) >= maxBacklog {
			// The encoder is ahead: the backlog is written before more rows, so that it
			// holds a few chunks' values at most (each one's ~4,000 arguments and texts).
			if err := rest(backlog[0]); err != nil {
				return err
			}
			backlog = backlog[1:]
			continue
		}
		if len(backlog) > 0 {
			select {
			case c, ok = <-chunks:
			default:
				if err := rest(backlog[0]); err != nil {
					return err
				}
				backlog = backlog[1:]
				continue
			}
		} else {
			c, ok = <-chunks
		}
		if !ok {
			break
		}
		if c.err != nil {
			return c.err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		q, ok := rowsSQL[c.n]
		if !ok {
			q = insertRows(t, c.cols, c.n)
			rowsSQL[c.n] = q
		}
		if err := bc.queryValues(q, c.args, nil); err != nil {
			return fmt.Errorf("write %s from the source: %w", t, err)
		}
		backlog = append(backlog, c)
	}
	for _, c := range backlog {
		if err := rest(c); err != nil {
			return err
		}
	}
	return nil
}

// insertRows returns the statement that inserts n rows of cols into table t.
func insertRows(t string, cols []string, n int) string {
	row := "(" + strings.Repeat("?, ", len(cols)-1) + "?)"
	return "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") VALUES " + strings.Repeat(row+", ", n-1) + row
}

// loadSchema is what a load takes out of a table and puts back: the DDL of its triggers
// and of its indexes (the ones a CREATE INDEX made; those of a column's UNIQUE stay), and
// the FTS5 tables whose content is the table.
type loadSchema struct {
	triggers, indexes []string
	fts               []string
	// ftsTriggers are the DDL of the triggers that write the FTS5 tables in fts (they
	// name one), which the load leaves out (deferSearch).
	ftsTriggers []string
}

// ftsContent finds an FTS5 table's content table in its DDL.
var ftsContent = regexp.MustCompile(`(?i)\bcontent\s*=\s*['"]?(\w+)['"]?`)

// takeOutSchema drops the triggers and indexes of tables in c's transaction and returns
// them, with the FTS5 tables whose content is one of tables.
func takeOutSchema(c *bulkConn, tables []string) (*loadSchema, error) {
	loaded := func(t string) bool {
		return slices.ContainsFunc(tables, func(l string) bool { return strings.EqualFold(l, t) })
	}
	s := &loadSchema{}
	var drop, triggers []string
	err := c.query(`SELECT type, name, tbl_name, sql FROM sqlite_master
		WHERE sql IS NOT NULL AND (type IN ('trigger', 'index') OR type = 'table' AND sql LIKE '%fts5%')
		ORDER BY type, name`, nil, func(r []any) error {
		typ, _ := r[0].(string)
		name, _ := r[1].(string)
		tbl, _ := r[2].(string)
		ddl, _ := r[3].(string)
		switch {
		case typ == "trigger" && loaded(tbl):
			triggers = append(triggers, ddl)
			drop = append(drop, "DROP TRIGGER "+quoteName(name))
		case typ == "index" && loaded(tbl):
			s.indexes = append(s.indexes, ddl)
			drop = append(drop, "DROP INDEX "+quoteName(name))
		case typ == "table":
			if m := ftsContent.FindStringSubmatch(ddl); m != nil && loaded(m[1]) {
				s.fts = append(s.fts, name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	// The rows come ordered by type: every FTS5 table ("table") is known before the
	// triggers are sorted here.
	for _, ddl := range triggers {
		if slices.ContainsFunc(s.fts, func(fts string) bool { return namesObject(ddl, fts) }) {
			s.ftsTriggers = append(s.ftsTriggers, ddl)
		} else {
			s.triggers = append(s.triggers, ddl)
		}
	}
	for _, q := range drop {
		if err := c.exec(q); err != nil {
			return nil, fmt.Errorf("load %s: %s: %w", strings.Join(tables, ", "), q, err)
		}
	}
	return s, nil
}

// putBack builds the indexes again and makes the triggers again, in c's transaction, but
// for those of the FTS5 tables: deferSearch leaves them to buildSearch.
func (s *loadSchema) putBack(c *bulkConn) error {
	for _, q := range s.indexes {
		if err := c.exec(q); err != nil {
			if isUnique(err) || isConstraint(err) {
				return store.Errorf(store.EINVALID, "load working copy: the source's records break this store's rule (%s): %v", q, err)
			}
			return fmt.Errorf("build index: %w", err)
		}
	}
	for _, q := range s.triggers {
		if err := c.exec(q); err != nil {
			return fmt.Errorf("put trigger back: %w", err)
		}
	}
	return nil
}

// namesObject reports whether the DDL ddl names the schema object name (as a whole word).
func namesObject(ddl, name string) bool {
	return regexp.MustCompile(`(?i)(^|[^\w])` + regexp.QuoteMeta(name) + `($|[^\w])`).MatchString(ddl)
}

// quoteName quotes a schema object's name (read from sqlite_master) for DDL.
func quoteName(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// isConstraint reports whether err is a constraint failing.
func isConstraint(err error) bool {
	code, ok := sqliteCode(err)
	return ok && code&0xff == sqlite3.SQLITE_CONSTRAINT
}
