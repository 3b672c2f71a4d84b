package sqlite

import (
	"context"
	"errors"

	"github.com/tandem-editor/tandem/store"
)

var _ store.Batcher = (*DB)(nil)

// A batch (store.Batcher) is one write transaction that many writes join: it runs as a
// write job of its own in the file's queue (commit.go), on the write connection, so it is
// marked as tandem's own writes are (outside.go) and holds SQLite's write lock until it
// commits. Each write made with the batch's context runs its usual transaction function in
// a savepoint of the batch's transaction (tryWrite), with a clock reading of its own, in
// place of a transaction of its own.

// batchKey is the context key of the batch a write joins.
type batchKey struct{}

// batch is a running batch: the transaction writes join, and the file's writer it holds.
type batch struct {
	w *fileWriter
	t *tx
}

// batchOf returns the batch that ctx carries for db's file, or nil.
func batchOf(ctx context.Context, db *DB) *batch {
	b, _ := ctx.Value(batchKey{}).(*batch)
	if b == nil || b.w != db.writer {
		return nil
	}
	return b
}

// WriteBatch runs fn in one write transaction that every write made with fn's context
// joins, each in a savepoint (store.Batcher). It waits for the write lock as any write
// does; EBUSY when it does not get it, EINVALID when the store is read-only or a batch is
// already running in ctx. fn's error is returned as it is, after everything of the batch
// has been rolled back.
func (db *DB) WriteBatch(ctx context.Context, fn func(context.Context) error) error {
	if db.readOnly != "" {
		return db.errReadOnly("write batch", db.readOnly)
	}
	if batchOf(ctx, db) != nil {
		return store.Errorf(store.EINVALID, "write batch: a batch is running already")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var fnErr error
	j := &writeJob{db: db, ctx: ctx, alone: true, lead: make(chan struct{}, 1), done: make(chan error, 1),
		fn: func(t *tx) error {
			fnErr = fn(context.WithValue(ctx, batchKey{}, &batch{w: db.writer, t: t}))
			return fnErr
		}}
	err := db.tryWriteJob(ctx, j)
	switch {
	case err == nil:
		db.commits.Broadcast()
		return nil
	case fnErr != nil && errors.Is(err, fnErr):
		return err // the caller's own error, or a store error it passed on
	case isReadOnly(err):
		return db.errReadOnly("write batch", "SQLite refused to write it")
	}
	return mapErr("write batch", err)
}

// savepoint runs fn, a write of db, in a savepoint of b's transaction: what fn wrote stays
// in the batch when it returns nil and is rolled back when it returns an error, which is
// returned.
func (b *batch) savepoint(ctx context.Context, db *DB, fn func(*tx) error) error {
	t := &tx{Tx: b.t.Tx, wc: b.t.wc, txCtx: b.t.txCtx, now: db.now().UTC()}
	bg := context.WithoutCancel(ctx)
	if _, err := t.ExecContext(ctx, "SAVEPOINT batch_write"); err != nil {
		return err
	}
	if err := fn(t); err != nil {
		if _, rerr := t.ExecContext(bg, "ROLLBACK TO batch_write"); rerr != nil {
			// SQLite rolled the whole transaction back (an I/O error, a full disk): the
			// batch's commit fails with it.
			return errors.Join(err, rerr)
		}
		_, _ = t.ExecContext(bg, "RELEASE batch_write")
		return err
	}
	_, err := t.ExecContext(bg, "RELEASE batch_write")
	return err
}
