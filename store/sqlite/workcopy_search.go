package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/tandem-editor/tandem/store"
)

// A clone leaves its search indexes to be built later. Building the FTS5 trigram index of
// 100,000 products' four searched fields is most of a clone's CPU (about 0.8 s of 1.8 s),
// and nothing needs it to find the right records: every searched field's folded text is in
// its kind's side table (foldTable) from the load on, and a search without the index scans
// it with instr(), the exact substring test the index answers (lookupCondition with indexed
// false). So LoadCopy writes the side tables, leaves each FTS5 table empty and without the
// triggers that keep it current, and records that in search_pending (migration
// search_pending), in the same transaction as the rows. Until the index is built:
//
//   - a search of that kind scans the side tables (searchIndexed), and finds what the index
//     would find: the side tables are written by every save as always;
//   - the FTS5 tables stay empty and no trigger writes them: an external-content FTS5 table
//     must never be told to delete a row it did not index;
//   - the first open of the copy with write access builds them (buildSearch), in one
//     transaction: each FTS5 table rebuilt from its side table, its triggers made, the
//     pending rows gone. A build that fails or is killed leaves the copy as it was, and
//     the next open builds again; an open that may not write leaves it to a later one.
//
// Opening builds before any migration runs, so that a migration always finds the schema
// its scripts were written for.

// searchPendingVersion is the schema version that made search_pending: an older file has
// no index left to build.
const searchPendingVersion = 12

// deferSearch records, in the load's transaction on c, that the FTS5 tables fts of kind
// are empty and that triggers (the DDL of every trigger that writes one of them) are to be
// made when they are built.
func deferSearch(c *bulkConn, kind store.Kind, fts, triggers []string) error {
	if len(fts) == 0 {
		return nil
	}
	for _, name := range fts {
		var own []string
		for _, ddl := range triggers {
			if namesObject(ddl, name) {
				own = append(own, ddl)
			}
		}
		b, err := json.Marshal(own)
		if err != nil {
			return fmt.Errorf("defer the search index: %w", err)
		}
		if err := c.exec(`INSERT INTO search_pending (fts, kind, triggers) VALUES (?, ?, ?)`,
			name, string(kind), string(b)); err != nil {
			return fmt.Errorf("defer the search index %s: %w", name, err)
		}
	}
	return nil
}

// searchPending reports whether q sees an index left to build, of kind or ("") of any.
func searchPending(ctx context.Context, q rowQueryer, kind store.Kind) (bool, error) {
	var pending bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM search_pending WHERE ? IN ('', kind))`, string(kind)).Scan(&pending)
	return pending, err
}

// searchIndexed reports whether a search of kind may use the FTS5 indexes: false while a
// clone's load has left them to be built. Once none is left, none ever is again (only a
// load into a fresh copy leaves one), so the answer is kept.
func (db *DB) searchIndexed(ctx context.Context, kind store.Kind) (bool, error) {
	if db.searchBuilt.Load() {
		return true, nil
	}
	pending, err := searchPending(ctx, db.read, kind)
	if err != nil {
		return false, fmt.Errorf("read the search index's state: %w", err)
	}
	if !pending {
		if other, err := searchPending(ctx, db.read, ""); err == nil && !other {
			db.searchBuilt.Store(true)
		}
	}
	return !pending, nil
}

// BuildSearchIndex builds the search indexes that a clone left to be built (see above) and
// reports whether there were any. Opening a copy with write access calls it; it is safe to
// call at any time, from any number of processes: the build runs in one write transaction
// that looks again for what is left under the lock.
func (db *DB) BuildSearchIndex(ctx context.Context) (bool, error) {
	if db.readOnly != "" {
		return false, nil
	}
	if pending, err := searchPending(ctx, db.read, ""); err != nil || !pending {
		if err == nil {
			db.searchBuilt.Store(true)
		}
		return false, mapErr("build the search index", err)
	}
	built := false
	err := db.inTx(ctx, "build the search index", func(t *tx) error {
		var err error
		built, err = buildSearch(ctx, t)
		return err
	})
	if err != nil {
		return false, err
	}
	db.searchBuilt.Store(true)
	return built, nil
}

// buildSearch is BuildSearchIndex in the write transaction t: it builds every index left
// to be built and reports whether there was one. A schema change runs it first, so that
// it never writes a search table whose index is left empty (its triggers are made again).
func buildSearch(ctx context.Context, t *tx) (bool, error) {
	pending, err := searchPending(ctx, t.Tx, "")
	if err != nil || !pending {
		return false, err
	}
	rows, err := t.Tx.QueryContext(ctx, `SELECT fts, triggers FROM search_pending ORDER BY fts`)
	if err != nil {
		return false, fmt.Errorf("read the search index's state: %w", err)
	}
	type index struct {
		fts      string
		triggers []string
	}
	var todo []index
	for rows.Next() {
		var ix index
		var triggers string
		if err := rows.Scan(&ix.fts, &triggers); err != nil {
			rows.Close()
			return false, fmt.Errorf("read the search index's state: %w", err)
		}
		if err := json.Unmarshal([]byte(triggers), &ix.triggers); err != nil {
			rows.Close()
			return false, fmt.Errorf("read the search index's state (%s): %w", ix.fts, err)
		}
		todo = append(todo, ix)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read the search index's state: %w", err)
	}
	for _, ix := range todo {
		if err := rebuildFTS(ctx, t.Tx, ix.fts); err != nil {
			return false, err
		}
		for _, q := range ix.triggers {
			if _, err := t.Tx.ExecContext(ctx, q); err != nil {
				return false, fmt.Errorf("build search index %s: make its trigger: %w", ix.fts, err)
			}
		}
	}
	if _, err := t.Tx.ExecContext(ctx, `DELETE FROM search_pending`); err != nil {
		return false, fmt.Errorf("build the search index: %w", err)
	}
	return true, nil
}

// rebuildFTS fills the FTS5 table name from its content, inside tx. FTS5 writes its pending
// terms out as a new segment whenever they pass hashsize, and merges segments as they pile
// up: with room for all of them, a rebuild writes one segment and merges nothing (a third
// less work). FTS5's default comes back after the rebuild.
func rebuildFTS(ctx context.Context, tx *sql.Tx, name string) error {
	special := "INSERT INTO " + quoteName(name) + " (" + quoteName(name) + ", rank) VALUES (?, ?)"
	rebuild := "INSERT INTO " + quoteName(name) + " (" + quoteName(name) + ") VALUES ('rebuild')"
	for _, q := range []struct {
		sql  string
		args []any
	}{{special, []any{"hashsize", loadHashSize}}, {rebuild, nil}, {special, []any{"hashsize", ftsHashSize}}} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("build search index %s: %w", name, err)
		}
	}
	return nil
}
