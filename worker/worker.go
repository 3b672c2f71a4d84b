// Package worker runs tandem's background workers: programs that keep system-owned fields
// in step with what people write. The schema names the fields each task keeps (worker:
// checksum, thumbnail or wordcount on a field; the sample's checksum, thumbnail and
// word_count); a task does nothing on kinds without one. A worker is a system
// writer. For every record whose derived value is stale it takes a lease on the record's
// system group (kept alive by locks, so several workers share the work and never do one
// record at the same moment), claims a job idempotency key for the record version it computes
// from (so a redelivered job does nothing twice), and writes inside the store's short
// database lock (Records.LockedUpdate) with the lease token. The store turns those writes
// into operation-log entries, never history versions.
package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/tandem-editor/tandem/locks"
	"github.com/tandem-editor/tandem/store"
)

// Defaults for Options.
const (
	DefaultInterval = 2 * time.Second
	DefaultLeaseTTL = 30 * time.Second
	pageSize        = 200
)

// Options tune a worker. The zero value is ready to use.
type Options struct {
	// Interval is the pause between passes in Run; zero means DefaultInterval.
	Interval time.Duration
	// LeaseTTL is the TTL of the per-record system lease (renewed by a heartbeat while the
	// job runs); zero means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Logf, when set, receives one line per job and per pass (for a -v flag or a log file).
	Logf func(format string, args ...any)
}

// Summary counts what a worker did.
type Summary struct {
	Done    int // records written
	Skipped int // stale records left to others: leased, job already claimed or done, changed meanwhile
	Failed  int // jobs that failed (their key is marked FAILED so a later pass tries again)
}

// Add returns the sum of two summaries.
func (s Summary) Add(o Summary) Summary {
	return Summary{Done: s.Done + o.Done, Skipped: s.Skipped + o.Skipped, Failed: s.Failed + o.Failed}
}

// String is the summary line the CLI prints: "done 3, skipped 1, failed 0".
func (s Summary) String() string {
	return fmt.Sprintf("done %d, skipped %d, failed %d", s.Done, s.Skipped, s.Failed)
}

// Worker runs one task against one store.
type Worker struct {
	st   store.Store
	task Task
	opts Options
}

// New returns a worker for task on st.
func New(st store.Store, task Task, opts Options) *Worker {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	return &Worker{st: st, task: task, opts: opts}
}

// ActorName is the name a worker for task writes as: "worker:checksum@host:pid", so the
// operation log says which process did the work.
func ActorName(task string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("worker:%s@%s:%d", task, host, os.Getpid())
}

// Run makes passes every Interval until ctx ends and returns the summed summary. ctx must
// carry a system actor, and the store must not be a working copy (see RunOnce); either
// refusal ends Run at once. A pass that fails as a whole (the store unreachable) is logged
// and retried at the next interval; otherwise only the end of ctx ends Run, which then
// returns nil.
func (w *Worker) Run(ctx context.Context) (Summary, error) {
	var total Summary
	if err := w.check(ctx); err != nil {
		return total, err
	}
	for {
		s, err := w.pass(ctx)
		total = total.Add(s)
		if ctx.Err() != nil {
			return total, nil
		}
		if err != nil {
			w.logf("pass failed: %v", err)
		}
		select {
		case <-ctx.Done():
			return total, nil
		case <-time.After(w.opts.Interval):
		}
	}
}

// RunOnce makes one pass over every record of the kinds whose schema has a field the task
// keeps (Task.Kinds; none is no error) and does the stale ones.
// ctx must carry a system actor (EINVALID otherwise). A working copy is refused
// (EFORBIDDEN, store.CheckCopyWriter): it takes no system writes, so the worker runs
// against the copy's source. It returns an error only when the pass itself could not run
// (listing records failed, ctx ended); failures of single jobs are counted in the summary.
func (w *Worker) RunOnce(ctx context.Context) (Summary, error) {
	if err := w.check(ctx); err != nil {
		return Summary{}, err
	}
	return w.pass(ctx)
}

// check refuses what no pass can work with: an actor that is not the system, a store that
// is a working copy. It runs before the first pass, so a worker started on a copy says so
// at once rather than failing each job on the lease a copy cannot grant.
func (w *Worker) check(ctx context.Context) error {
	a, err := store.ActorFrom(ctx)
	if err != nil {
		return err
	}
	if a.Role != store.RoleSystem {
		return store.Errorf(store.EINVALID, "a worker writes system fields and must run as system, not %s", a.Role)
	}
	cs, err := store.CopyOf(ctx, w.st)
	if err == nil && cs != nil {
		err = store.CheckCopyWriter(cs, a)
	}
	if err != nil {
		return fmt.Errorf("worker %s: %w", w.task.Name, err)
	}
	return nil
}

// pass is one pass of RunOnce, after check.
func (w *Worker) pass(ctx context.Context) (Summary, error) {
	var s Summary
	reg := w.st.Registry()
	kinds := w.task.Kinds(reg)
	if len(kinds) == 0 {
		w.logf("no field of the schema names worker %s: nothing to keep", w.task.Name)
	}
	for _, kind := range kinds {
		var after int64
		for {
			recs, err := w.st.FindRecords(ctx, store.Filter{Kind: kind, AfterID: after, Limit: pageSize})
			if err != nil {
				return s, fmt.Errorf("worker %s: list %ss: %w", w.task.Name, kind, err)
			}
			for _, r := range recs {
				after = r.ID
				if stale(r, w.task.Derive(reg, r)) == nil {
					continue
				}
				switch res := w.job(ctx, r); res {
				case jobDone:
					s.Done++
				case jobSkipped:
					s.Skipped++
				case jobFailed:
					s.Failed++
				}
				if err := ctx.Err(); err != nil {
					return s, err
				}
			}
			if len(recs) < pageSize {
				break
			}
		}
	}
	w.logf("pass: %s", s)
	return s, nil
}

type jobResult int

// failed reports a job that did not complete. A job cut off because the worker is stopping
// (SIGTERM, ctx ended) is not a failure: it is skipped, and its key, marked FAILED, lets the
// next pass do it.
func (w *Worker) failed(ctx context.Context, name string, err error) jobResult {
	if ctx.Err() != nil {
		w.logf("%s: skipped: interrupted by shutdown: %v", name, err)
		return jobSkipped
	}
	w.logf("%s: failed: %v", name, err)
	return jobFailed
}

const (
	jobDone jobResult = iota
	jobSkipped
	jobFailed
)

// JobKey is the idempotency key (scope store.ScopeJob) of task's job on one version of a
// record: the version it computes from, so the job for one version is done at most once.
func JobKey(task string, kind store.Kind, id, version int64) string {
	return fmt.Sprintf("%s:%s:%d:v%d", task, kind, id, version)
}

// jobResultJSON is what a completed job key stores.
type jobResultJSON struct {
	Version    int64        `json:"version,omitempty"` // the record's version after the write
	Superseded bool         `json:"superseded,omitempty"`
	Fields     store.Values `json:"fields,omitempty"`
}

// job brings one stale record up to date, seen at version r.Version.
func (w *Worker) job(ctx context.Context, r *store.Record) jobResult {
	name := fmt.Sprintf("%s %s %d v%d", w.task.Name, r.Kind, r.ID, r.Version)
	held, err := locks.Acquire(ctx, w.st, store.LeaseRequest{Kind: r.Kind, RecordID: r.ID, Group: store.GroupSystem, TTL: w.opts.LeaseTTL}, locks.Options{})
	if err != nil {
		// ENOTFOUND: deleted since the page was read (tandem delete).
		if c := store.ErrorCode(err); c == store.ELEASE || c == store.ENOTFOUND {
			w.logf("%s: skipped: %v", name, err)
			return jobSkipped
		}
		return w.failed(ctx, name, err)
	}
	defer func() {
		if err := held.Release(context.WithoutCancel(ctx)); err != nil {
			w.logf("%s: %v", name, err)
		}
	}()

	key := JobKey(w.task.Name, r.Kind, r.ID, r.Version)
	want := w.task.Derive(w.st.Registry(), r)
	reqHash := store.RequestHash(r.Kind, r.ID, store.Update{BaseVersion: r.Version, Set: want})
	claim, err := w.st.ClaimKey(ctx, store.ScopeJob, key, reqHash, store.DefaultPendingTTL)
	switch {
	case store.ErrorCode(err) == store.EBUSY:
		w.logf("%s: skipped: job claimed by another worker", name)
		return jobSkipped
	case err != nil:
		return w.failed(ctx, name, fmt.Errorf("claim job: %w", err))
	case !claim.Claimed:
		w.logf("%s: skipped: job already done", name)
		return jobSkipped
	}

	var written store.Values
	res, err := w.st.LockedUpdate(ctx, r.Kind, r.ID, func(cur *store.Record) (store.Update, error) {
		written = nil
		if cur.Version != r.Version {
			// Changed since the pass saw it: this job's version is history; the next pass
			// computes from the new version under its own key.
			return store.Update{}, nil
		}
		written = stale(cur, w.task.Derive(w.st.Registry(), cur))
		if written == nil {
			return store.Update{}, nil
		}
		return store.Update{BaseVersion: cur.Version, Set: written, LeaseToken: held.Token()}, nil
	})
	if err == nil {
		select {
		case lerr := <-held.Lost():
			// The store checked the token in the write's transaction, so the write was
			// valid; report the lease loss so the operator sees a heartbeat problem.
			w.logf("%s: lease lost after the write: %v", name, lerr)
		default:
		}
	}
	if err != nil {
		bg := context.WithoutCancel(ctx)
		if ferr := w.st.FailKey(bg, store.ScopeJob, key); ferr != nil {
			w.logf("%s: mark job failed: %v", name, ferr)
		}
		if c := store.ErrorCode(err); c == store.ELEASE || c == store.ECONFLICT || c == store.EBUSY || c == store.ENOTFOUND {
			w.logf("%s: skipped: %v", name, err)
			return jobSkipped
		}
		return w.failed(ctx, name, err)
	}

	out := jobResultJSON{Superseded: res == nil, Fields: written}
	if res != nil {
		out.Version = res.Record.Version
	}
	result, _ := json.Marshal(out)
	if err := w.st.CompleteKey(context.WithoutCancel(ctx), store.ScopeJob, key, result, store.DefaultCompletedTTL); err != nil {
		w.logf("%s: complete job: %v", name, err)
	}
	if res == nil {
		w.logf("%s: skipped: changed meanwhile or already up to date", name)
		return jobSkipped
	}
	w.logf("%s: done: v%d", name, res.Record.Version)
	return jobDone
}

func (w *Worker) logf(format string, args ...any) {
	if w.opts.Logf != nil {
		w.opts.Logf(format, args...)
	}
}
