package sqlite

import (
	"context"
	"time"
)

// Background writes: a working copy's own upkeep (a sync's acknowledgements, the source's
// records it pulls, its position) written while a person saves in the same copy.
//
// The writers of a process on one file queue in Go (commit.go) and the one at the head runs
// a group of them in one transaction. A person's save that queued behind a sync's write,
// or joined its group, waited for all of it: an acknowledgement of 60 pushed saves, or the
// pull of the source's echo of them, is milliseconds of work under the write lock. A write
// made under InBackground's context is therefore never grouped with another write, and
// waits while any other write of the process is queued (up to backgroundPatience, so that
// a stream of saves cannot hold it back for ever): a save then waits at most for the one
// background transaction already running, and its caller keeps those short (sync.Options).
// Order between writes that wait at the same time was never promised (they are concurrent
// calls), so none is broken; each write still runs whole, alone or in its group.
//
// A background write that found the queue empty runs; a save queued a moment later would
// wait for all of it, and the writer's goroutine, which competes for the CPU with the
// source's pushes and the person's saves, may be off the CPU for milliseconds in the
// middle of it. So a background write made of independent steps (the acknowledgements of
// several pushed changes) asks between two steps whether another write waits (givesWay),
// and if so commits the steps it did and queues the rest as a new write: a save then waits
// for one step, not for the whole batch. The rest keeps the time the write was first
// queued, and a write that has waited backgroundPatience gives way no more: under a stream
// of saves the sync still moves, a batch per backgroundPatience at least.

// backgroundPatience is how long a background write lets later writes go first; after it,
// it runs at its turn in the queue.
const backgroundPatience = 100 * time.Millisecond

// backgroundKey marks a context whose writes are background writes.
type backgroundKey struct{}

// queuedKey carries the time the background write whose rest a context's write is was first
// queued (givesWay).
type queuedKey struct{}

// givingWay is how long after it was first queued a background write still gives way
// between its steps (a variable for the tests).
var givingWay = backgroundPatience

// InBackground returns ctx marked so that the store's writes under it give way to its other
// writers in this process: they run alone, after the writes queued with them (see above).
// Reads and the outcome of each write are as without it.
func (db *DB) InBackground(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// isBackground reports whether j was queued under InBackground's context.
func (j *writeJob) isBackground() bool {
	b, _ := j.ctx.Value(backgroundKey{}).(bool)
	return b
}

// othersWaiting reports whether a write that is not a background write is queued (and not
// abandoned) on w.
func (w *fileWriter) othersWaiting() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range w.queue {
		if j.state.Load() == jobQueued && !j.isBackground() {
			return true
		}
	}
	return false
}

// givesWay reports whether t, the transaction of a background write running alone, should
// end at this point between two of its steps, because another write of the process waits
// for the lock (see above). A caller that ends there commits the steps it did and queues
// the rest as a new write under restOf's context. Outside a background write (and inside a
// batch) it is false.
func (t *tx) givesWay() bool {
	return t.waiting != nil && time.Since(t.queued) < givingWay && t.waiting.othersWaiting()
}

// restOf returns ctx for the rest of the background write that t gave way in: it keeps
// the time that write was first queued.
func (t *tx) restOf(ctx context.Context) context.Context {
	return context.WithValue(ctx, queuedKey{}, t.queued)
}

// firstQueued is the time the write queued under ctx counts as queued since: now, or the
// time of the write whose rest it is (restOf).
func firstQueued(ctx context.Context) time.Time {
	if q, ok := ctx.Value(queuedKey{}).(time.Time); ok {
		return q
	}
	return time.Now()
}

// nextGroup takes the next group off queue (in queue order, at least one job, when queue
// has a job that is not abandoned): the writes that are not background writes, up to
// maxGroup, stopping before one that must run alone (withWriteConn's, a batch) unless it is
// the first; or, when there is none or the background write at the head has waited
// backgroundPatience, that background write alone. Abandoned jobs are dropped: their callers
// have their answer. rest keeps the order of the jobs left.
func nextGroup(queue []*writeJob, now time.Time) (group, rest []*writeJob) {
	live := queue[:0:0]
	for _, j := range queue {
		if j.state.Load() != jobAbandoned {
			live = append(live, j)
		}
	}
	if len(live) == 0 {
		return nil, nil
	}
	if head := live[0]; head.isBackground() && now.Sub(head.queued) >= backgroundPatience {
		return live[:1], live[1:]
	}
	closed := false // a job that runs alone ends the group
	for _, j := range live {
		single := j.bare != nil || j.alone
		switch {
		case j.isBackground() || closed:
			rest = append(rest, j)
		case single && len(group) > 0:
			rest = append(rest, j)
			closed = true
		default:
			group = append(group, j)
			closed = single || len(group) >= maxGroup
		}
	}
	if len(group) == 0 {
		return live[:1], live[1:]
	}
	return group, rest
}
