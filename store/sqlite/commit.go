package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Write transactions of one process on one file are queued in Go and committed in groups.
//
// SQLite lets one writer in at a time. Left to SQLite, the writers of a process meet in its
// busy handler, which sleeps 1, 2, 5, 10... ms between tries: a contended save's p99 was
// milliseconds while the lock itself was free most of that time. Here the writers of a
// process (every DB on the file, and every connection of each) queue in Go instead; the one
// at the head (the leader) takes every transaction waiting behind it, runs each in a
// SAVEPOINT of one BEGIN IMMEDIATE transaction of its own, and commits them together. Each
// keeps its own outcome: one that fails is rolled back to its savepoint and answered with
// its error, the others commit. Nothing is acknowledged before the COMMIT that holds it, so
// durability is as before, and as the transactions run one after the other under the write
// lock, each sees everything the ones before it wrote, as if committed one by one. What a
// group saves is the per-transaction work that does not depend on the size of the
// transaction: BEGIN and COMMIT, and the WAL frames of the pages the saves share (the hot
// row's page, the last page of the change log and of the key table), written once per
// group. Writers in other processes still meet at SQLite's lock (BEGIN IMMEDIATE,
// busy_timeout), which stays the guarantee between processes.

// writers holds the fileWriter of each database file this process writes.
var writers sync.Map // file path (absolute, symlinks resolved) -> *fileWriter

// writerOf returns this process's fileWriter of file. Two spellings of one file that
// resolve to different paths (hard links) get two: their writers only meet in SQLite's busy
// handler again.
func writerOf(file string) *fileWriter {
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	if real, err := filepath.EvalSymlinks(file); err == nil {
		file = real
	}
	w, _ := writers.LoadOrStore(file, &fileWriter{})
	return w.(*fileWriter)
}

// maxGroup bounds how many transactions one commit holds, so that a leader's own wait, and
// the work lost to a failed COMMIT, stay bounded.
const maxGroup = 64

// fileWriter is the queue of write transactions of this process on one file.
type fileWriter struct {
	mu      sync.Mutex
	queue   []*writeJob
	leading bool       // a leader is running a group; the next one is woken when it ends
	refs    int        // the DBs of the process that have the file open
	wc      *writeConn // the connection the groups run on (rawstmt.go); nil until the first
}

// writeJob is one write transaction waiting for its group.
type writeJob struct {
	db  *DB // the store that asked: its clock stamps the transaction
	ctx context.Context
	fn  func(*tx) error
	// bare, when set instead of fn, runs on the write connection outside any transaction,
	// in a group of its own (withWriteConn).
	bare func(context.Context, *sql.Conn) error
	// alone, when set, runs fn in a group of its own: a batch (batch.go), which must run
	// once and must not be rolled back with another's failure.
	alone  bool
	state  atomic.Int32 // jobQueued, then jobRunning or jobAbandoned
	queued time.Time    // when it was queued (priority.go)
	lead   chan struct{}
	done   chan error
}

const (
	jobQueued int32 = iota
	jobRunning
	jobAbandoned
)

// tryWrite runs fn in a write transaction and commits it, in a group with the other write
// transactions of this process waiting at the same time (see above). It waits for its turn
// as long as SQLite's busy handler would wait for the lock, or until ctx ends; a
// transaction that has started is waited for.
func (db *DB) tryWrite(ctx context.Context, fn func(*tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b := batchOf(ctx, db); b != nil {
		return b.savepoint(ctx, db, fn)
	}
	return db.tryWriteJob(ctx, &writeJob{db: db, ctx: ctx, fn: fn, lead: make(chan struct{}, 1), done: make(chan error, 1)})
}

// tryWriteJob queues j and waits for its answer (tryWrite).
func (db *DB) tryWriteJob(ctx context.Context, j *writeJob) error {
	w := db.writer
	j.queued = firstQueued(ctx)
	w.mu.Lock()
	w.queue = append(w.queue, j)
	if !w.leading {
		w.leading = true
		j.lead <- struct{}{}
	}
	w.mu.Unlock()

	timer := time.NewTimer(busyTimeout)
	defer timer.Stop()
	for {
		select {
		case err := <-j.done:
			return err
		case <-j.lead:
			// The leader's own transaction may not be in its group (a background write,
			// priority.go): its answer, or the lead again, comes later.
			db.lead(w)
		case <-ctx.Done():
			if db.abandon(w, j) {
				return ctx.Err()
			}
			ctx = context.Background() // it runs: wait for its answer
		case <-timer.C:
			if db.abandon(w, j) {
				return store.Errorf(store.EBUSY, "another write of this process held the database for %v; try again", busyTimeout)
			}
		}
	}
}

// withWriteConn runs fn on the file's write connection, outside any transaction, in the
// writers' queue: a checkpoint that must wait for no connection of the process (the write
// connection, left idle after a write, holds a TRUNCATE checkpoint of another connection
// back until the busy timeout).
func (db *DB) withWriteConn(ctx context.Context, fn func(context.Context, *sql.Conn) error) error {
	if db.readOnly != "" {
		return fn(ctx, nil)
	}
	return db.tryWriteJob(ctx, &writeJob{db: db, ctx: ctx, bare: fn, lead: make(chan struct{}, 1), done: make(chan error, 1)})
}

// abandon takes j out of the queue, unless it runs already (then it reports false and j's
// answer is to be waited for). When j had just been handed the lead, it leads all the same,
// so that the transactions queued behind it are not left waiting.
func (db *DB) abandon(w *fileWriter, j *writeJob) bool {
	w.mu.Lock()
	ok := j.state.CompareAndSwap(jobQueued, jobAbandoned)
	w.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case <-j.lead:
		db.lead(w)
	default:
	}
	return true
}

// lead runs one group: every transaction queued now, in queue order, on the file's write
// connection (a transaction that runs outside any, withWriteConn's, in a group of its own).
// Then it wakes the next leader, the first transaction queued since, if any.
func (db *DB) lead(w *fileWriter) {
	// Let the writers just answered by the last group queue their next transaction first:
	// the group grows, and a commit is shared by more saves.
	runtime.Gosched()
	w.mu.Lock()
	group, rest := nextGroup(w.queue, time.Now())
	w.queue = rest
	w.mu.Unlock()

	if len(group) > 0 {
		db.runGroup(group)
	}
	w.mu.Lock()
	for len(w.queue) > 0 && w.queue[0].state.Load() == jobAbandoned {
		w.queue = w.queue[1:]
	}
	if len(w.queue) == 0 {
		w.leading = false
	} else {
		w.queue[0].lead <- struct{}{}
	}
	w.mu.Unlock()
}

// runGroup runs the transactions of group in one SQLite transaction and answers each. A
// group of one runs as a plain transaction under its own context, as the store always did;
// in a larger one BEGIN and COMMIT run under no single caller's context (the busy timeout
// bounds them). A larger group runs first without savepoints: saves rarely fail, and a
// savepoint costs two statements a save. When one fails, the group is rolled back and run
// again from the start with a savepoint around each transaction (each may run more than
// once, as inTx says), so that the one that fails is rolled back alone.
func (db *DB) runGroup(group []*writeJob) {
	if j := group[0]; j.bare != nil {
		err := j.ctx.Err()
		if !j.state.CompareAndSwap(jobQueued, jobRunning) {
			return // abandoned: its caller has its answer
		}
		var wc *writeConn
		if err == nil {
			wc, err = db.writer.writeConn(j.ctx, db)
		}
		if err == nil {
			err = j.bare(j.ctx, wc.conn)
			wc.dropConn(err)
		}
		j.done <- err
		return
	}
	answer := make([]error, len(group))
	ran := make([]bool, len(group))
	ctx := context.Background()
	if len(group) == 1 {
		ctx = group[0].ctx
	}
	finish := func(err error) {
		for i, j := range group {
			if !ran[i] {
				continue // abandoned: its caller has its answer
			}
			if answer[i] == nil {
				answer[i] = err
			}
			j.done <- answer[i]
		}
	}
	wc, err := db.writer.writeConn(ctx, db)
	var sqlTx *sql.Tx
	if err == nil {
		sqlTx, err = wc.conn.BeginTx(ctx, nil)
	}
	running := 0
	for i, j := range group {
		if ran[i] = j.state.CompareAndSwap(jobQueued, jobRunning); ran[i] {
			running++
		}
	}
	if err != nil {
		if wc != nil {
			wc.dropConn(err)
		}
		finish(err)
		return
	}
	savepoints := false
	for {
		failed, err := db.runJobs(ctx, wc, sqlTx, group, ran, answer, savepoints)
		if err != nil {
			_ = sqlTx.Rollback()
			wc.dropConn(err)
			finish(err)
			return
		}
		if !failed || savepoints || running == 1 {
			if failed && running == 1 {
				_ = sqlTx.Rollback()
				finish(nil)
				return
			}
			break
		}
		_ = sqlTx.Rollback()
		clear(answer)
		if sqlTx, err = wc.conn.BeginTx(ctx, nil); err != nil {
			wc.dropConn(err)
			finish(err)
			return
		}
		savepoints = true
	}
	err = sqlTx.Commit()
	wc.dropConn(err)
	finish(err)
}

// runJobs runs the running transactions of group in sqlTx (on wc), each answer in answer.
// Without savepoints it stops at the first that fails and reports it (failed); with them, the one
// that fails is rolled back to its savepoint and the others go on. err is an error of the
// SQLite transaction itself, which the caller rolls back.
func (db *DB) runJobs(ctx context.Context, wc *writeConn, sqlTx *sql.Tx, group []*writeJob, ran []bool, answer []error, savepoints bool) (failed bool, err error) {
	stmts := &tx{Tx: sqlTx, wc: wc, txCtx: ctx}
	exec := func(q string) error {
		_, err := stmts.ExecContext(ctx, q)
		return err
	}
	for i, j := range group {
		if !ran[i] {
			continue
		}
		t := &tx{Tx: sqlTx, wc: wc, txCtx: ctx, now: j.db.now().UTC()}
		if len(group) == 1 && j.isBackground() {
			t.waiting, t.queued = db.writer, j.queued
		}
		if !savepoints {
			if answer[i] = j.fn(t); answer[i] != nil {
				return true, nil
			}
			continue
		}
		if err := exec("SAVEPOINT save"); err != nil {
			return failed, err
		}
		if answer[i] = j.fn(t); answer[i] != nil {
			failed = true
			if err := exec("ROLLBACK TO save"); err != nil {
				// SQLite rolled the whole transaction back (an I/O error, a full disk):
				// what the group wrote before is gone too.
				return failed, err
			}
		}
		if err := exec("RELEASE save"); err != nil {
			return failed, err
		}
	}
	return failed, nil
}
