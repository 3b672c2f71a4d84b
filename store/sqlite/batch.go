package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strings"

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

//
// A create in a batch does not write its search folds (and so its FTS5 index entries) as it
// goes: the batch keeps them and writes them, a statement for many records, before it
// commits (flushFolds), so each FTS5 index takes the batch's new terms at once instead of
// a segment per record. A write of the batch that is not a create writes the folds waiting
// first, so that a fold it writes is never overwritten by an older one. The batch's own
// reads of the fold tables (none today: checks read the records' rows) would not see the
// waiting ones; the store's other reads do not see the batch before it commits anyway.

// batchKey is the context key of the batch a write joins.
type batchKey struct{}

// createKey marks the context of a create (CreateRecord) that runs in a batch: its folds
// wait for the batch's end, and the folds waiting need not be written before it.
type createKey struct{}

// pendingFolds are a created record's search folds that its batch writes before it commits.
type pendingFolds struct {
	reg   *store.Registry
	kind  store.Kind
	id    int64
	folds map[string]string
}

// foldChunk is how many records' folds one statement writes at most: two arguments each,
// well under SQLite's limit on a statement's arguments. A statement writes a power of two
// records' folds, so that the file's statement cache holds a few of these statements for
// each side table, not one for every size a batch has.
const foldChunk = 256

// batch is a running batch: the transaction writes join, and the file's writer it holds.
type batch struct {
	w *fileWriter
	t *tx
	// savepoints is set on the second run, which puts each write in a savepoint; failed is
	// the error of the first run's first failed write, after which no write runs.
	savepoints bool
	failed     error
	// folds are the search folds of the batch's creates, not written yet (flushFolds).
	folds []pendingFolds
	// notCopy is set once a create of the batch found the store is no working copy: a batch
	// cannot make it one, so the batch's other creates need not look again.
	notCopy bool
}

// checkCopyCreateIn is checkCopyCreate in t, which looks whether the store is a working copy
// once a batch rather than once a create.
func (db *DB) checkCopyCreateIn(ctx context.Context, t *tx, kind store.Kind, id int64) error {
	if b := t.batch; b != nil {
		if b.notCopy {
			return nil
		}
		ok, err := db.isCopy(ctx, t)
		if err != nil {
			return fmt.Errorf("read working copy: %w", err)
		}
		if !ok {
			b.notCopy = true
			return nil
		}
	}
	return db.checkCopyCreate(ctx, t, kind, id)
}

// flushFolds writes the folds waiting in b (pendingFolds) into their side tables, many
// records to a statement, in the batch's transaction.
func (b *batch) flushFolds(ctx context.Context) error {
	for len(b.folds) > 0 {
		first := b.folds[0]
		n := 1
		for n < len(b.folds) && n < foldChunk && b.folds[n].reg == first.reg && b.folds[n].kind == first.kind {
			n++
		}
		n = 1 << (bits.Len(uint(n)) - 1)
		ids := make([]int64, n)
		folds := make([]map[string]string, n)
		for i, p := range b.folds[:n] {
			ids[i], folds[i] = p.id, p.folds
		}
		if err := writeFoldsBulk(ctx, b.t, first.reg, first.kind, ids, folds); err != nil {
			return err
		}
		b.folds = b.folds[n:]
	}
	b.folds = nil
	return nil
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
				if fnErr != nil {
					return fnErr
				}
				return b.flushFolds(ctx)
			}}
		err := db.tryWriteJob(ctx, j)
		switch {
		case redo && !savepoints:
			continue
		case err == nil:
			db.committed()
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
	t := &tx{Tx: b.t.Tx, wc: b.t.wc, txCtx: b.t.txCtx, now: db.now().UTC(), batch: b}
	if ctx.Value(createKey{}) == nil {
		if err := b.flushFolds(ctx); err != nil {
			b.failed = err
			return err
		}
	}
	waiting := len(b.folds)
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
		b.folds = b.folds[:waiting] // the write's own, rolled back with it
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

var _ store.KeyLister = (*DB)(nil)

// listKeysChunk is how many keys one statement of ListKeys looks up.
const listKeysChunk = 500

// ListKeys returns which of keys (in scope) the store holds, of any status
// (store.KeyLister), read a few hundred to a statement.
func (db *DB) ListKeys(ctx context.Context, scope string, keys []string) (map[string]bool, error) {
	found := map[string]bool{}
	for len(keys) > 0 {
		n := min(len(keys), listKeysChunk)
		args := make([]any, 0, n+1)
		args = append(args, scope)
		for _, k := range keys[:n] {
			args = append(args, k)
		}
		rows, err := db.read.QueryContext(ctx, "SELECT key FROM idempotency WHERE scope = ? AND key IN ("+
			strings.TrimSuffix(strings.Repeat("?, ", n), ", ")+")", args...)
		if err != nil {
			return nil, mapErr("list idempotency keys", err)
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return nil, mapErr("list idempotency keys", err)
			}
			found[k] = true
		}
		if err := rows.Close(); err != nil {
			return nil, mapErr("list idempotency keys", err)
		}
		if err := rows.Err(); err != nil {
			return nil, mapErr("list idempotency keys", err)
		}
		keys = keys[n:]
	}
	return found, nil
}
