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
// the batch's transaction (tryWrite), with a clock reading of its own, in place of a
// transaction of its own.
//
// As a group of writes (commit.go), a batch first runs without a savepoint per write: most
// writes succeed, and a savepoint costs two statements a write, and each of them makes the
// FTS5 indexes write their pending terms out. When a write fails, the batch is rolled back
// and run again from the start with a savepoint around each write, so that the one that
// fails leaves nothing and the others stay.

// batchKey is the context key of the batch a write joins.
type batchKey struct{}

// batch is a running batch: the transaction writes join, and the file's writer it holds.
type batch struct {
	w *fileWriter
	t *tx
	// savepoints is set on the second run, which puts each write in a savepoint; failed is
	// the error of the first run's first failed write, after which no write runs.
	savepoints bool
	failed     error
}

// errRedo is what the writes of a batch's first run return once a write has failed: the
// batch is run again with a savepoint per write.
var errRedo = errors.New("write batch: an earlier write of the batch failed; it runs again, each write in a savepoint")

// batchOf returns the batch that ctx carries for db's file, or nil.
func batchOf(ctx context.Context, db *DB) *batch {
	b, _ := ctx.Value(batchKey{}).(*batch)
	if b == nil || b.w != db.writer {
		return nil
	}
	return b
}

// WriteBatch runs fn in one write transaction that every write made with fn's context
// joins (store.Batcher): first without a savepoint per write, then, when a write failed,
// once more from the start with one. It waits for the write lock as any write does; EBUSY
// when it does not get it, EINVALID when the store is read-only or a batch is already
// running in ctx. fn's error is returned as it is, after everything of the batch has been
// rolled back.
func (db *DB) WriteBatch(ctx context.Context, fn func(context.Context) error) error {
	if db.readOnly != "" {
		return db.errReadOnly("write batch", db.readOnly)
	}
	if batchOf(ctx, db) != nil {
		return store.Errorf(store.EINVALID, "write batch: a batch is running already")
	}
	for _, savepoints := range []bool{false, true} {
		if err := ctx.Err(); err != nil {
			return err
		}
		var fnErr error
		redo := false
		j := &writeJob{db: db, ctx: ctx, alone: true, lead: make(chan struct{}, 1), done: make(chan error, 1),
			fn: func(t *tx) error {
				b := &batch{w: db.writer, t: t, savepoints: savepoints}
				fnErr = fn(context.WithValue(ctx, batchKey{}, b))
				if b.failed != nil {
					redo = true
					return errRedo
				}
				return fnErr
			}}
		err := db.tryWriteJob(ctx, j)
		switch {
		case redo && !savepoints:
			continue
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
	return nil // not reached: the second run has savepoints
}

// savepoint runs fn, a write of db, in b's transaction: in a savepoint of its own on the
// batch's second run, whose failure rolls it back; on the first run without one, a failure
// marking the batch to be run again.
func (b *batch) savepoint(ctx context.Context, db *DB, fn func(*tx) error) error {
	if b.failed != nil {
		return b.failed
	}
	t := &tx{Tx: b.t.Tx, wc: b.t.wc, txCtx: b.t.txCtx, now: db.now().UTC()}
	if !b.savepoints {
		err := fn(t)
		if err != nil {
			b.failed = errRedo
		}
		return err
	}
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
