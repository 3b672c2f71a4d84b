package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
)

var _ store.Batcher = (*DB)(nil)

// A batch (store.Batcher) is one transaction on a connection of the pool, which is marked
// as tandem's own (outside.go), that many writes join: each write made with the batch's
// context runs its usual transaction function inside a savepoint of the batch's
// transaction (runTx) in place of a transaction of its own. The rows a batch writes, and
// the change log's writer lock its first change takes (feed.go), are held until it commits.
// Unlike SQLite's, a batch here always puts each write in a savepoint: a first run without
// them, rolled back when a write fails, would leave the ids its creates took from their
// sequences unused, and the records the second run creates would not get the ids a row by
// row import gives them.
//
// fn runs once.

// batchKey is the context key of the batch a write joins.
type batchKey struct{}

// batch is a running batch: the store it belongs to and its transaction.
type batch struct {
	db *DB
	tx pgx.Tx
}

// batchOf returns the batch that ctx carries for db, or nil.
func batchOf(ctx context.Context, db *DB) *batch {
	b, _ := ctx.Value(batchKey{}).(*batch)
	if b == nil || b.db != db {
		return nil
	}
	return b
}

// WriteBatch runs fn in one transaction that every write made with fn's context joins,
// each in a savepoint (store.Batcher). EINVALID when a batch is running already in ctx;
// EUNAVAILABLE (and the other codes of a lost or refused transaction) when the commit
// fails: nothing of the batch stays then. fn's error is returned as it is, after the batch
// has been rolled back.
func (db *DB) WriteBatch(ctx context.Context, fn func(context.Context) error) error {
	if batchOf(ctx, db) != nil {
		return store.Errorf(store.EINVALID, "write batch: a batch is running already")
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return db.mapErr("write batch", err)
	}
	if err := fn(context.WithValue(ctx, batchKey{}, &batch{db: db, tx: tx})); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return db.mapErr("write batch", err)
	}
	db.committed()
	return nil
}

// savepoint runs fn, a write's transaction function, in a savepoint of b's transaction:
// what fn wrote stays in the batch when it returns nil and is rolled back when it returns
// an error, which is returned.
func (b *batch) savepoint(ctx context.Context, fn func(pgx.Tx) error) error {
	sp, err := b.tx.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(sp); err != nil {
		_ = sp.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return sp.Commit(ctx)
}

var _ store.KeyLister = (*DB)(nil)

// keysQuery reads which of the keys $2 (in scope $1) the store holds: a probe of the
// primary key for each (the LIMIT keeps the lookup a subquery run per key). The plain
// "scope = $1 AND key = ANY($2)" let the planner, on a table its statistics still thought
// small as an import filled it, read every key of the scope and test it against the keys
// asked for: 20 ms a batch at 100,000 keys (300 ms in a generic plan, without the hashed
// array), 6 s of a 100,000-row load, against 1 to 2 ms for the probes.
const keysQuery = `SELECT i.key FROM unnest($2::text[]) AS k(key),
	LATERAL (SELECT key FROM idempotency WHERE scope = $1 AND key = k.key LIMIT 1) i`

// ListKeys returns which of keys (in scope) the store holds, of any status
// (store.KeyLister), in one query.
func (db *DB) ListKeys(ctx context.Context, scope string, keys []string) (map[string]bool, error) {
	found := map[string]bool{}
	err := db.read(ctx, "list idempotency keys", func(q querier) error {
		clear(found)
		rows, err := q.Query(ctx, keysQuery, scope, keys)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return err
			}
			found[k] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}
