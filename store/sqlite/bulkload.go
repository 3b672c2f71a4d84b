package sqlite

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tandem-editor/tandem/store"
)

var _ store.BulkLoader = (*DB)(nil)

// A load (store.Loader): an import's creates of new records, outside any batch, each call
// one transaction (BEGIN IMMEDIATE) on a bulk connection of its own (bulk.go), as a clone's
// load. Per row, a create through the store's write connection paid for far more than its
// row: the outside-write triggers' check of the writer (a table-valued pragma per row), the
// FTS5 triggers of the search side table (and FTS5's flush of its pending terms at each
// statement's savepoint), the statement journals of multi-row statements spilled to a
// temporary file, and database/sql's conversion of every argument. The load connection
// runs with triggers off (SQLITE_DBCONFIG_ENABLE_TRIGGER) and statement journals in memory,
// and writes what the triggers would have, set-wise per call: the search rows' FTS5 entries
// in one INSERT … SELECT. It writes nothing else for them: the outside-write triggers do
// nothing for tandem's own writes (they are the write connection's, whose attached
// database they look for), and the load writes the history versions, changes and keys a
// create writes itself (bulkcreate.go's). A kind whose tables carry an INSERT trigger the
// load does not know of is not loaded (the batch path creates its records).
//
// The checks are the bulk create's (bulkcreate.go), made in the load's transaction: keys
// not held, unique values free, refs to existing records, no refold waiting, the store's
// schema not newer than the client's. Other connections see each call's records once it
// commits; this process's feed subscribers are woken then.

// loader is a DB's Loader: its bulk connection and what it found of each kind's triggers.
type loader struct {
	db       *DB
	c        *bulkConn
	loadable map[store.Kind]bool
}

// OpenLoader opens a load connection to the store's file (store.BulkLoader); nil when the
// store is read-only or a working copy.
func (db *DB) OpenLoader(ctx context.Context) (store.Loader, error) {
	if db.readOnly != "" {
		return nil, nil
	}
	copied, err := db.isCopy(ctx, db.read)
	if err != nil || copied {
		return nil, mapErr("open a load", err)
	}
	c, err := openBulk(ctx, db.wdsn)
	if err != nil {
		return nil, mapErr("open a load", err)
	}
	// Statement journals in memory (a multi-row statement's spilled to a file past 64 KiB),
	// and no trigger: the load writes what they would (see above).
	if err := c.exec("PRAGMA temp_store = MEMORY"); err != nil {
		c.close()
		return nil, fmt.Errorf("open a load: %w", err)
	}
	rc := sqlite3.Xsqlite3_db_config(c.tls, c.db, sqlite3.SQLITE_DBCONFIG_ENABLE_TRIGGER, libc.VaList(c.out, int32(0), uintptr(0)))
	if rc != sqlite3.SQLITE_OK {
		err := c.err(rc)
		c.close()
		return nil, fmt.Errorf("open a load: turn triggers off: %w", err)
	}
	return &loader{db: db, c: c, loadable: map[store.Kind]bool{}}, nil
}

// Close closes the load connection.
func (l *loader) Close() error {
	l.c.close()
	return nil
}

// CreateRecords creates the leading records of recs in one transaction of the load
// (store.Loader): the same records, checks and logs as DB.CreateRecords in a batch.
func (l *loader) CreateRecords(ctx context.Context, recs []store.NewRecord) ([]*store.Record, error) {
	db := l.db
	reg := db.Registry()
	plans := reg.PlanBulk(ctx, recs)
	if len(plans) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var created []*store.Record
	err := l.tx(func(now, dbNow time.Time) error {
		created = nil
		newer, err := reg.StoreSchemaNewer(loaderSchema{l.c})
		if err != nil || newer {
			return err
		}
		created, err = store.CreateInRuns(plans, func(run []*store.CreatePlan) ([]*store.Record, error) {
			ok, err := l.kindLoadable(reg, run[0].Kind)
			if err != nil || !ok {
				return nil, err
			}
			n, err := l.checked(reg, run)
			if err != nil {
				return nil, err
			}
			return l.insert(reg, run[:n], now, dbNow)
		})
		return err
	})
	if err != nil {
		return nil, mapErr("create records", err)
	}
	if len(created) > 0 {
		db.commits.Broadcast()
	}
	return created, nil
}

// tx runs fn in a write transaction of the load connection and commits it; fn is given
// the time of the writes (the store's clock, as a create's) and the database's clock.
func (l *loader) tx(fn func(now, dbNow time.Time) error) error {
	c := l.c
	if err := c.exec("BEGIN IMMEDIATE"); err != nil {
		return err
	}
	err := func() error {
		var s string
		if err := c.query(`SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`, nil, func(r []any) error {
			s, _ = r[0].(string)
			return nil
		}); err != nil {
			return fmt.Errorf("read database clock: %w", err)
		}
		dbNow, err := parseTime(s)
		if err != nil {
			return err
		}
		return fn(l.db.now().UTC(), dbNow)
	}()
	if err == nil {
		err = c.exec("COMMIT")
	}
	if err != nil {
		_ = c.rollback()
		return err
	}
	return nil
}

// insertTrigger finds the event of a trigger's SQL (after its name).
var insertTrigger = regexp.MustCompile(`(?is)\b(INSERT|UPDATE|DELETE)\b`)

// kindLoadable reports whether the load knows every INSERT trigger of the tables a create
// of kind writes: the outside-write triggers (which do nothing for tandem's writes) and the
// search side table's FTS5 trigger (whose work the load does). Read once per kind.
func (l *loader) kindLoadable(reg *store.Registry, kind store.Kind) (bool, error) {
	if ok, seen := l.loadable[kind]; seen {
		return ok, nil
	}
	t, err := reg.Table(kind)
	if err != nil {
		return false, err
	}
	ft, err := foldTable(reg, kind)
	if err != nil {
		return false, err
	}
	fts, err := searchTable(reg, kind)
	if err != nil {
		return false, err
	}
	ok := true
	err = l.c.query(`SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'
		AND tbl_name IN (?, ?, 'history', 'changes', 'idempotency', 'sqlite_sequence')`, []any{t, ft}, func(r []any) error {
		name, _ := r[0].(string)
		tbl, _ := r[1].(string)
		sql, _ := r[2].(string)
		rest := sql
		if i := strings.Index(sql, name); i >= 0 {
			rest = sql[i+len(name):]
		}
		ev := insertTrigger.FindString(rest)
		switch {
		case !strings.EqualFold(ev, "INSERT"):
		case tbl == t && strings.HasPrefix(name, t+"_outside_") && strings.Contains(sql, "name = 'tandem_writer'"):
		case tbl == ft && name == t+"_fts_insert" && strings.Contains(sql, "INSERT INTO "+quoteIdent(fts)+" (rowid, fold) VALUES (new.key, new.fold)"):
		default:
			ok = false
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("read the triggers of %s: %w", t, err)
	}
	l.loadable[kind] = ok
	return ok, nil
}

// checked returns how many of the leading plans (all of one kind) pass a create's checks,
// as bulkChecked does in a batch (checkedPrefix), asked on the load connection.
func (l *loader) checked(reg *store.Registry, plans []*store.CreatePlan) (int, error) {
	return l.db.checkedPrefix(loadPresence{l.c}, reg, plans)
}

// loadPresence is presence on a load connection.
type loadPresence struct{ c *bulkConn }

func (p loadPresence) strings(query string, lead, vals []any) (map[string]bool, error) {
	return loadPresent[string](p.c, query, lead, vals)
}

func (p loadPresence) ids(query string, vals []any) (map[int64]bool, error) {
	return loadPresent[int64](p.c, query, nil, vals)
}

func (p loadPresence) exists(query string, args ...any) (bool, error) {
	var ok bool
	err := p.c.query(query, args, func(r []any) error {
		ok = r[0] != int64(0)
		return nil
	})
	return ok, err
}

// loadPresent is presentAmong on a load connection.
func loadPresent[T comparable](c *bulkConn, query string, lead []any, vals []any) (map[T]bool, error) {
	found := map[T]bool{}
	for len(vals) > 0 {
		n := min(len(vals), bulkLookup)
		err := c.query(query+"("+placeholders(n)+")", append(append([]any{}, lead...), vals[:n]...), func(r []any) error {
			if v, ok := r[0].(T); ok {
				found[v] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		vals = vals[n:]
	}
	return found, nil
}

// insert writes the records plans describe (of one kind, checked), as bulkInsert does, and
// their search rows and FTS5 entries; it returns the records. None when the ids SQLite
// would give them left history or search rows behind (a table's sequence reset by another
// program): CreateRecord's, one by one.
func (l *loader) insert(reg *store.Registry, plans []*store.CreatePlan, now, dbNow time.Time) ([]*store.Record, error) {
	if len(plans) == 0 {
		return nil, nil
	}
	db, c := l.db, l.c
	kind := plans[0].Kind
	name, err := reg.Table(kind)
	if err != nil {
		return nil, err
	}
	ft, err := foldTable(reg, kind)
	if err != nil {
		return nil, err
	}
	var first int64
	if err := c.query("SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?), 0), coalesce((SELECT max(id) FROM "+
		quoteIdent(name)+"), 0)) + 1", []any{name}, func(r []any) error {
		first, _ = r[0].(int64)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read the next id of %s: %w", kind, err)
	}
	folded := len(reg.FoldedFields(kind)) > 0
	old := "SELECT EXISTS (SELECT 1 FROM history WHERE kind = ? AND record_id >= ?)"
	args := []any{string(kind), first}
	if folded {
		old += " OR EXISTS (SELECT 1 FROM " + quoteIdent(ft) + " WHERE key >= ?)"
		args = append(args, first<<slotBits)
	}
	var left bool
	if err := c.query("SELECT "+strings.TrimPrefix(old, "SELECT "), args, func(r []any) error {
		left = r[0] != int64(0)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	if left {
		return nil, nil
	}
	recs := make([]*store.Record, 0, len(plans))
	for done := 0; done < len(plans); {
		n := chunkOf(len(plans) - done)
		q, args, err := db.recordsInsert(reg, first+int64(done), plans[done:done+n], now)
		if err != nil {
			return nil, err
		}
		var scanErr error
		if err := c.query(q, args, func(r []any) error {
			rec, err := db.scanRecord(reg, kind, rawRowOf(r))
			if err != nil {
				scanErr = err
				return err
			}
			recs = append(recs, rec)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("write %ss: %w", kind, err)
		}
		if scanErr != nil {
			return nil, scanErr
		}
		done += n
	}
	for i, r := range recs {
		if r.ID != first+int64(i) {
			return nil, fmt.Errorf("create %s %d: its insert returned %d", kind, first+int64(i), r.ID)
		}
	}
	hist, changes, err := logArgs(reg, recs, plans, now)
	if err != nil {
		return nil, err
	}
	if err := loaderRows(c, historyInsert, 9, hist); err != nil {
		return nil, fmt.Errorf("write history: %w", err)
	}
	if err := loaderRows(c, changesInsert, 10, changes); err != nil {
		return nil, fmt.Errorf("write change log: %w", err)
	}
	if err := loaderRows(c, keysInsert, 8, keyArgs(recs, plans, dbNow)); err != nil {
		return nil, fmt.Errorf("record idempotency keys: %w", err)
	}
	if folded {
		if err := l.writeFolds(reg, kind, recs, plans); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// writeFolds writes the search rows of recs, as a batch's flushFolds does, and their FTS5
// entries in one statement: what the side table's trigger writes row by row.
func (l *loader) writeFolds(reg *store.Registry, kind store.Kind, recs []*store.Record, plans []*store.CreatePlan) error {
	t, err := reg.Table(kind)
	if err != nil {
		return err
	}
	ft, err := foldTable(reg, kind)
	if err != nil {
		return err
	}
	fts, err := searchTable(reg, kind)
	if err != nil {
		return err
	}
	for _, name := range reg.FoldedFields(kind) {
		col := store.FoldColumn(name)
		var slot int64
		found := false
		if err := l.c.query("SELECT slot FROM "+slotsTable+" WHERE tbl = ? AND field = ?", []any{t, name}, func(r []any) error {
			slot, found = r[0].(int64)
			return nil
		}); err != nil {
			return fmt.Errorf("read the search slot of %s.%s: %w", t, name, err)
		}
		if !found {
			return store.Errorf(store.EINTERNAL, "%s.%s has no search slot; the store's search tables are damaged", t, name)
		}
		var args []any
		for i, r := range recs {
			// The value splitFolds would give col: the last column of that name.
			v, ok := "", false
			for _, c := range plans[i].Extra {
				if c.Name == col {
					v, ok = c.Value, true
				}
			}
			if ok {
				args = append(args, searchKey(r.ID, slot), v)
			}
		}
		for len(args) > 0 {
			n := chunkOf(len(args) / 2)
			if err := l.c.exec(foldUpsert(ft, n), args[:2*n]...); err != nil {
				return fmt.Errorf("write the search text of %d %ss (%s): %w", n, kind, name, err)
			}
			args = args[2*n:]
		}
	}
	lo, hi := recs[0].ID<<slotBits, recs[len(recs)-1].ID<<slotBits|slotMask
	if err := l.c.exec("INSERT INTO "+quoteIdent(fts)+" (rowid, fold) SELECT key, fold FROM "+quoteIdent(ft)+" WHERE key BETWEEN ? AND ?", lo, hi); err != nil {
		return fmt.Errorf("index the search text of %d %ss: %w", len(recs), kind, err)
	}
	return nil
}

// loaderRows is execRows on a load connection.
func loaderRows(c *bulkConn, insert string, k int, args []any) error {
	for len(args) > 0 {
		n := chunkOf(len(args) / k)
		if err := c.exec(insert+rowsOf(n, k), args[:n*k]...); err != nil {
			return err
		}
		args = args[n*k:]
	}
	return nil
}

// rawRowOf is a load connection's row as rawRow scans it.
func rawRowOf(r []any) rawRow {
	row := make(rawRow, len(r))
	for i, v := range r {
		row[i] = v
	}
	return row
}

// loaderSchema reads the version of the store's schema on a load connection, for
// Registry.StoreSchemaNewer (which asks no more of it).
type loaderSchema struct{ c *bulkConn }

func (s loaderSchema) SchemaVersion() (int64, error) {
	var v int64
	err := s.c.query("SELECT "+schemaVersionSQL, nil, func(r []any) error {
		v, _ = r[0].(int64)
		return nil
	})
	return v, err
}

func (s loaderSchema) StoredSchema(int64) (*store.Registry, error) {
	return nil, fmt.Errorf("a load reads no stored schema")
}
