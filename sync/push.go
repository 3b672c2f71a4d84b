package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/resave"
)

// outcome is what became of one outbox entry.
type outcome struct {
	rec      *store.Record       // applied: the record as the source has it now
	rebase   bool                // applied on exactly its base version
	merged   bool                // applied after a merge with the source's changes
	conflict *store.CopyConflict // not applied: queued for a person
	wait     *store.LeaseError   // not applied: a lease on the source holds the record
	fatal    error               // the source failed: stop the sync
}

// push sends the outbox, oldest entry first, several saves of distinct records at a time
// (runEnd), and settles each entry in that order. Entries of a record held by a lease wait,
// and so do that record's later entries, to keep their order.
func (s *syncer) push(ctx context.Context) (moved int, err error) {
	entries, err := s.wc.Outbox(ctx, 0)
	if err != nil {
		return 0, err
	}
	// Acknowledgements are written while the next entry travels to the source: the copy
	// and the source work at the same time. A create and a conflict wait for the writes
	// before them, since they change what later entries refer to.
	acks := startAcker(ctx, s.wc, s.opts.AckBatch)
	defer func() {
		if aerr := acks.wait(); err == nil {
			err = aerr
		}
	}()
	held := map[recKey]bool{}
	// A document's delete that waits holds its parent's delete too (a subtree deleted in
	// the copy): the parent's would meet the child on the source and become a conflict.
	hold := func(e *store.OutboxEntry) {
		held[recKey{e.Kind, e.ID}] = true
		if p, ok := e.Before[store.ParentField].(int64); ok && e.Op == store.CopyDelete && s.reg.Tree(e.Kind) {
			held[recKey{e.Kind, p}] = true
		}
	}
	s.rep.Waits, s.rep.Unfit = nil, nil
	// An entry that no longer fits the schema (the source's, which the copy took) stays in
	// the outbox, held with the record's later entries, until a person settles it.
	unfit := map[int64]bool{}
	for i := range entries {
		e := &entries[i]
		if why := s.reg.Unfit(e); len(why) > 0 {
			unfit[e.Seq] = true
			s.rep.Unfit = append(s.rep.Unfit, Unfit{Seq: e.Seq, Kind: e.Kind, ID: e.ID, Op: e.Op, Why: why})
			continue
		}
		// A field the schema dropped that the entry did not change is no part of it: it
		// must not reach a merge as a value the source took away.
		for _, vals := range []store.Values{e.Before, e.After} {
			for name := range vals {
				if _, err := s.reg.Field(e.Kind, name); err != nil {
					delete(vals, name)
				}
			}
		}
	}
	// Entries travel in runs (see runEnd), and what became of them is taken below in
	// outbox order, as if they had been pushed one by one. A run starts only once every
	// entry before it is settled: its entries are then as those entries left them (moved
	// to a created record's id, rebased, held).
	var run *flight
	defer func() {
		if run != nil {
			run.stop()
		}
	}()
	for i := range entries {
		e := &entries[i]
		k := recKey{e.Kind, e.ID}
		if unfit[e.Seq] {
			hold(e)
			continue
		}
		if held[k] {
			// Never an entry of the run in flight: a run takes no held record, and only
			// its own records can become held while it is settled.
			hold(e)
			continue
		}
		if run == nil || i >= run.end {
			if s.opts.PushLimit > 0 && moved >= s.opts.PushLimit {
				break
			}
			if run != nil {
				run.stop()
			}
			run = s.send(ctx, entries, i, runEnd(s.reg, entries, i, held, unfit))
		}
		o := run.outcome(i)
		switch {
		case o.fatal != nil:
			return moved, o.fatal
		case o.wait != nil:
			hold(e)
			l := o.wait.Lease
			s.rep.Waits = append(s.rep.Waits, Wait{Kind: e.Kind, ID: e.ID, Group: l.Group, Holder: l.Holder, Until: l.ExpiresAt})
		case o.conflict != nil:
			if err := acks.flush(); err != nil {
				return moved, err
			}
			if err := s.wc.QueueConflict(ctx, e.Seq, *o.conflict); err != nil {
				return moved, err
			}
			moved++
		case e.Op == store.CopyCreate:
			if err := acks.flush(); err != nil {
				return moved, err
			}
			if err := s.wc.AckEntry(ctx, e.Seq, o.rec, o.rebase); err != nil {
				return moved, err
			}
			if o.rec.ID != e.ID {
				// The later entries of the record follow it to its source id, as AckEntry
				// moved them in the copy.
				for j := i + 1; j < len(entries); j++ {
					l := &entries[j]
					if l.Kind == e.Kind && l.ID == e.ID {
						l.ID = o.rec.ID
						if l.BaseVersion == 0 {
							l.BaseVersion = o.rec.Version
						}
					}
					if s.reg.Tree(e.Kind) && l.Kind == e.Kind {
						// Documents under the new one (created there, or moved there) follow
						// it too.
						repoint(l.Before, e.ID, o.rec.ID)
						repoint(l.After, e.ID, o.rec.ID)
					}
				}
			}
			moved++
			s.rep.Pushed++
		default:
			acks.ack(e.Seq, o.rec, o.rebase)
			if o.rebase {
				// As AckEntry does in the copy: the record's later entries made on the same
				// version were made on top of this one, which the source now has.
				for j := i + 1; j < len(entries); j++ {
					if l := &entries[j]; l.Kind == e.Kind && l.ID == e.ID && l.BaseVersion == e.BaseVersion {
						l.BaseVersion = o.rec.Version
					}
				}
			}
			moved++
			s.rep.Pushed++
			if o.merged {
				s.rep.Merged++
			}
		}
	}
	return moved, nil
}

// pushWorkers is how many entries of a run travel to the source at the same time. A push is
// bound by round trips and by the source's commit of each save, not by work on either side, so
// a few in flight hide most of the waiting. The PostgreSQL store's pool has at least this many
// connections; a SQLite source takes one write at a time and makes the others wait.
const pushWorkers = 4

// runEnd returns the end of the run of entries that starts at i: the entries that may travel
// to the source at the same time, since none of them can change what becomes of another.
// They are plain saves of distinct records, none of them held or unfit, and none changing a
// unique field.
//
// Everything else is pushed alone, in order: a create gives later entries the source's id;
// a move or a delete reaches beyond its record (the tree a move is checked against, the
// children a delete meets, the parent a waiting delete holds); a second entry of a record is
// rebased on (or held by) the first's outcome; and a unique field (a sku) is unique on the
// source, so a save that takes a key another save of the run gives up could arrive first and
// be refused. A held or unfit entry is not pushed at all, so a run stops there too.
func runEnd(reg *store.Registry, entries []store.OutboxEntry, i int, held map[recKey]bool, unfit map[int64]bool) int {
	if !plainSave(reg, &entries[i]) {
		return i + 1
	}
	seen := map[recKey]bool{}
	j := i
	for ; j < len(entries); j++ {
		e := &entries[j]
		k := recKey{e.Kind, e.ID}
		if !plainSave(reg, e) || held[k] || seen[k] || unfit[e.Seq] {
			break
		}
		seen[k] = true
	}
	return j
}

// plainSave reports whether e is a save that may travel with others (see runEnd).
func plainSave(reg *store.Registry, e *store.OutboxEntry) bool {
	if e.Op != store.CopySave {
		return false
	}
	for _, f := range reg.UniqueFields(e.Kind) {
		if slices.Contains(e.Changed(), f.Name) {
			return false
		}
	}
	return true
}

// flight is a run of outbox entries, entries[from:end], sent to the source by up to
// pushWorkers goroutines. Their outcomes arrive in any order; outcome waits for one.
type flight struct {
	from   int
	end    int
	outs   []outcome
	done   []chan struct{} // done[j] is closed once outs[j] is written
	cancel context.CancelFunc
}

// send starts pushing entries[from:end] and returns at once. The workers take the entries in
// outbox order, so the first outcomes, which are settled first, come first.
func (s *syncer) send(ctx context.Context, entries []store.OutboxEntry, from, end int) *flight {
	ctx, cancel := context.WithCancel(ctx)
	f := &flight{from: from, end: end, outs: make([]outcome, end-from), done: make([]chan struct{}, end-from), cancel: cancel}
	next := make(chan int, end-from)
	for j := range f.done {
		f.done[j] = make(chan struct{})
		next <- j
	}
	close(next)
	for range min(pushWorkers, end-from) {
		go func() {
			for j := range next {
				if err := ctx.Err(); err != nil {
					f.outs[j] = outcome{fatal: err}
				} else {
					f.outs[j] = s.pushEntry(ctx, &entries[from+j])
				}
				close(f.done[j])
			}
		}()
	}
	return f
}

// outcome waits for what became of entry i, which is in the run.
func (f *flight) outcome(i int) outcome {
	<-f.done[i-f.from]
	return f.outs[i-f.from]
}

// stop cancels what is still travelling (a sync stopped by a failure) and waits until no
// worker touches the source or the entries any more. An entry that reached the source but
// is not acknowledged is sent again by the next sync, which is harmless (see Sync).
func (f *flight) stop() {
	f.cancel()
	for _, d := range f.done {
		<-d
	}
}

// repoint gives vals the parent id to instead of from, when it holds from.
func repoint(vals store.Values, from, to int64) {
	if p, ok := vals[store.ParentField].(int64); ok && p == from {
		vals[store.ParentField] = to
	}
}

// acker writes acknowledgements to the copy in order, in a goroutine of its own.
type acker struct {
	ctx  context.Context
	wc   store.WorkingCopy
	max  int // the most acknowledgements in one local transaction
	ch   chan ackReq
	done chan error
}

type ackReq struct {
	seq    int64
	rec    *store.Record
	rebase bool
}

// defaultAckBatch is the most acknowledgements written in one local transaction when
// Options.AckBatch is 0.
const defaultAckBatch = 64

func startAcker(ctx context.Context, wc store.WorkingCopy, max int) *acker {
	if max <= 0 {
		max = defaultAckBatch
	}
	a := &acker{ctx: ctx, wc: wc, max: max, ch: make(chan ackReq, defaultAckBatch), done: make(chan error, 1)}
	go func() {
		var err error
		for r := range a.ch {
			// What queued up meanwhile goes in the same local transaction.
			batch := []store.Ack{{Seq: r.seq, Record: r.rec, Rebase: r.rebase}}
		more:
			for len(batch) < a.max {
				select {
				case r2, ok := <-a.ch:
					if !ok {
						break more
					}
					batch = append(batch, store.Ack{Seq: r2.seq, Record: r2.rec, Rebase: r2.rebase})
				default:
					break more
				}
			}
			if err == nil { // after a failure the rest stay in the outbox: re-sent next time
				err = wc.AckEntries(ctx, batch)
			}
		}
		a.done <- err
	}()
	return a
}

// ack queues the acknowledgement of entry seq.
func (a *acker) ack(seq int64, rec *store.Record, rebase bool) {
	a.ch <- ackReq{seq, rec, rebase}
}

// flush waits until every queued acknowledgement is written and starts over.
func (a *acker) flush() error {
	err := a.wait()
	*a = *startAcker(a.ctx, a.wc, a.max)
	return err
}

// wait ends the acker once everything queued is written.
func (a *acker) wait() error {
	close(a.ch)
	return <-a.done
}

// Via is how the source's history names a write a sync made for a working copy.
const Via = "offline copy"

// actorCtx is the context of a source write made for entry e: its author, as an editor,
// with where and when the edit was made for the source's history.
func actorCtx(ctx context.Context, e *store.OutboxEntry) context.Context {
	return store.WithActor(ctx, entryActor(e))
}

// entryActor is the actor of the source writes made for entry e. An entry a resolution
// queued (store.ResolveKey) was decided when the person resolved the conflict: history says
// resolved, at that time.
func entryActor(e *store.OutboxEntry) store.Actor {
	return store.Actor{Name: e.Actor, Role: store.RoleEditor, Via: Via, EditedAt: e.At, Resolved: strings.HasPrefix(e.Key, store.ResolveKey)}
}

func (s *syncer) pushEntry(ctx context.Context, e *store.OutboxEntry) outcome {
	ctx = actorCtx(ctx, e)
	switch e.Op {
	case store.CopySave:
		return s.pushSave(ctx, e)
	case store.CopyMove:
		return s.pushMove(ctx, e)
	case store.CopyCreate:
		return s.pushCreate(ctx, e)
	case store.CopyDelete:
		return s.pushDelete(ctx, e)
	}
	return outcome{fatal: store.Errorf(store.EINVALID, "outbox entry %d: unknown operation %q", e.Seq, e.Op)}
}

// refused turns a source error into an outcome: leases wait, refusals that a person must
// look at become conflicts, anything else stops the sync. A conflict carries the source's
// record as theirs unless the source no longer has it (CopyConflict.Gone).
func (s *syncer) refused(ctx context.Context, e *store.OutboxEntry, err error) outcome {
	var le *store.LeaseError
	if errors.As(err, &le) && !le.Lost {
		return outcome{wait: le}
	}
	switch store.ErrorCode(err) {
	case store.ENOTFOUND, store.EINVALID, store.EFORBIDDEN:
		// Not found may name the record or another one (a move's new parent): the record is
		// looked up either way, so that the reason says which.
		var theirs *store.Record
		gone := false
		if e.Op != store.CopyCreate {
			cur, ferr := s.src.FindRecord(ctx, e.Kind, e.ID)
			switch store.ErrorCode(ferr) {
			case "":
				theirs = cur
			case store.ENOTFOUND:
				gone = true
			default:
				return outcome{fatal: fmt.Errorf("sync: %s %d: %w", e.Kind, e.ID, ferr)}
			}
		}
		c := &store.CopyConflict{Op: e.Op, Kind: e.Kind, ID: e.ID, Reason: reason(e, err, gone), Base: e.Before, Mine: e.After, BaseVersion: e.BaseVersion, Actor: e.Actor, At: e.At}
		if theirs != nil {
			c.Theirs, c.TheirsVersion = theirs.Fields, theirs.Version
		}
		return outcome{conflict: c}
	}
	return outcome{fatal: fmt.Errorf("sync: %s %d: %w", e.Kind, e.ID, err)}
}

// reason is what a conflict of entry e says of the source's refusal err; gone: the source
// does not have e's record.
func reason(e *store.OutboxEntry, err error, gone bool) string {
	switch {
	case store.ErrorCode(err) != store.ENOTFOUND:
	case gone:
		return "not on the source any more: " + err.Error()
	case e.Op == store.CopyMove:
		return "the new parent is not on the source: " + err.Error()
	case e.Op == store.CopyCreate && e.After[store.ParentField] != nil:
		return "the parent is not on the source: " + err.Error()
	}
	return err.Error()
}

// pushSave sends a save: counters as deltas with the entry's key (never applied twice, no
// version check), the other fields on the entry's base version, merged when the source
// moved on.
func (s *syncer) pushSave(ctx context.Context, e *store.OutboxEntry) outcome {
	set, add := store.Values{}, map[string]int64{}
	for _, name := range e.Changed() {
		f, err := s.reg.Field(e.Kind, name)
		if err != nil {
			continue
		}
		if f.Rule == store.RuleCounter {
			a, _ := e.After[name].(int64)
			b, _ := e.Before[name].(int64)
			if a != b {
				add[name] = a - b
			}
			continue
		}
		set[name] = e.After[name]
	}
	var o outcome
	if len(set) > 0 {
		o = s.pushAbsolute(ctx, e, set)
		if o.rec == nil {
			return o
		}
	}
	if len(add) > 0 {
		res, err := s.update(ctx, e, store.Update{Add: add, IdempotencyKey: e.Key + ":add"})
		if err != nil {
			return s.refused(ctx, e, err)
		}
		// Later entries were made on top of this one; they may move onto the source's
		// version only if no other write came between the parts (for deltas alone, between
		// the base and the delta), so that a later delete does not meet the copy's own
		// change as the source's. A replay (a crash lost the acknowledgement) counts when
		// its first application came right there and nothing came since.
		settled := res.Record.Version == res.Version
		if o.rec != nil {
			o.rebase = o.rebase && settled && (res.Version == o.rec.Version+1 || res.Replayed && res.Version == o.rec.Version)
		} else {
			o.rebase = settled && res.Version == e.BaseVersion+1
		}
		o.rec = res.Record
	}
	if o.rec == nil {
		// Nothing differed (a save that was undone): take the record as it is.
		r, err := s.src.FindRecord(ctx, e.Kind, e.ID)
		if err != nil {
			return s.refused(ctx, e, err)
		}
		o.rec = r
	}
	return o
}

// pushAbsolute saves the absolute part of a save on its base version; on a conflict it
// merges (base = what the edit was made on, mine = the edit, theirs = the source now) and
// saves the merge on the source's version, up to resave.MaxRounds times.
func (s *syncer) pushAbsolute(ctx context.Context, e *store.OutboxEntry, set store.Values) outcome {
	// No key: the version check makes a re-sent absolute save harmless. Sent again after a
	// crash, it meets its own write as a conflict, and the merge below finds nothing left
	// to write. (A key would cost a row on the source for every save.)
	res, err := s.update(ctx, e, store.Update{BaseVersion: e.BaseVersion, Set: set})
	if err == nil {
		return outcome{rec: res.Record, rebase: !res.Replayed && !res.Unchanged}
	}
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		return s.refused(ctx, e, err)
	}
	base, mine := store.Values{}, store.Values{}
	for _, f := range s.reg.CopyFields(e.Kind) {
		if f.Rule == store.RuleCounter {
			continue // pushed as a delta
		}
		if v, ok := e.Before[f.Name]; ok {
			base[f.Name] = v
		}
		if v, ok := e.After[f.Name]; ok {
			mine[f.Name] = v
		}
	}
	out, err := resave.Merge(ctx, s.reg, e.Kind, base, mine, ce.Current, func(ctx context.Context, theirs *store.Record, changes store.Values) (*store.Record, error) {
		if len(changes) == 0 {
			return theirs, nil
		}
		res, err := s.update(ctx, e, store.Update{BaseVersion: theirs.Version, Set: changes})
		if err != nil {
			return nil, err
		}
		return res.Record, nil
	})
	var kept *resave.KeptChangingError
	switch {
	case errors.As(err, &kept):
		return outcome{fatal: err} // it names the record
	case err != nil:
		return s.refused(ctx, e, err)
	case out.Collisions != nil:
		theirs, cur := out.Theirs, store.Values{}
		for _, f := range s.reg.CopyFields(e.Kind) {
			if f.Rule != store.RuleCounter {
				cur[f.Name] = theirs.Fields[f.Name]
			}
		}
		return outcome{conflict: &store.CopyConflict{Op: e.Op, Kind: e.Kind, ID: e.ID, Reason: "changed on both sides",
			Fields: out.Collisions, Base: base, Mine: mine, Theirs: cur, BaseVersion: e.BaseVersion, TheirsVersion: theirs.Version, Actor: e.Actor, At: e.At}}
	case len(out.Changes) == 0:
		// The source holds the edit already. When it is there because this entry was
		// pushed before (a crash lost the acknowledgement), the later entries were made
		// on top of it, as after a plain save.
		own := s.ownSince(ctx, e, e.BaseVersion, out.Theirs.Version)
		return outcome{rec: out.Theirs, merged: !own, rebase: own}
	}
	return outcome{rec: out.Saved, merged: true}
}

// pushDelete deletes the record on the source on the entry's base version, with its key. A
// source that changed the record since is a conflict (store.DeletedHere) with the source's
// record as theirs; a record the source deleted already is done (nothing twice). A refusal
// (a document with children the copy did not have) is a conflict with its reason: a subtree
// is never deleted on the source without a person seeing it.
func (s *syncer) pushDelete(ctx context.Context, e *store.OutboxEntry) outcome {
	err := withLease(s.leaseToken(e), func(token string) error {
		_, err := s.src.DeleteRecord(ctx, e.Kind, e.ID, store.Delete{ExpectVersion: e.BaseVersion, IdempotencyKey: e.Key, LeaseToken: token})
		return err
	})
	var ce *store.ConflictError
	switch {
	case err == nil:
		return outcome{}
	case store.ErrorCode(err) == store.ENOTFOUND:
		return outcome{} // deleted on the source already
	case errors.As(err, &ce):
		return outcome{conflict: &store.CopyConflict{Op: e.Op, Kind: e.Kind, ID: e.ID, Reason: store.DeletedHere,
			Base: e.Before, Mine: e.Before, Theirs: ce.Current.Fields, BaseVersion: e.BaseVersion, TheirsVersion: ce.Current.Version,
			Actor: e.Actor, At: e.At}}
	}
	o := s.refused(ctx, e, err)
	if o.conflict != nil {
		o.conflict.Mine = e.Before
		if o.conflict.Theirs == nil {
			return outcome{} // refused, then deleted on the source meanwhile: done
		}
	}
	return o
}

// pushMove replays a move. A move has no base version: it is checked against the source's
// tree as it is now, and one that would form a cycle there becomes a conflict.
func (s *syncer) pushMove(ctx context.Context, e *store.OutboxEntry) outcome {
	var parent *int64
	if p, ok := e.After[store.ParentField].(int64); ok {
		parent = &p
	}
	res, err := s.src.MoveRecord(ctx, e.Kind, e.ID, store.Move{Parent: parent})
	if err != nil {
		o := s.refused(ctx, e, err)
		if o.conflict != nil {
			o.conflict.Fields = []string{store.ParentField}
			if cur, ferr := s.src.FindRecord(ctx, e.Kind, e.ID); ferr == nil {
				o.conflict.Theirs = store.Values{store.ParentField: cur.Fields[store.ParentField]}
				o.conflict.TheirsVersion = cur.Version
			}
		}
		return o
	}
	// Made on exactly its base (or met as its own earlier push): the record's later entries
	// were made on top of it.
	rebase := res.Record.Version == e.BaseVersion+1 && (!res.Unchanged || s.ownSince(ctx, e, e.BaseVersion, res.Record.Version))
	return outcome{rec: res.Record, rebase: rebase}
}

// ownSince reports whether every version of e's record after from, up to to, was written by
// a push of e itself (its author, from a working copy, with its edit time, as history names
// it): a re-sent entry meeting its own write after a crash. At most two versions are read
// (a save's absolute part and its deltas).
func (s *syncer) ownSince(ctx context.Context, e *store.OutboxEntry, from, to int64) bool {
	if to <= from || to-from > 2 {
		return false
	}
	who := entryActor(e).HistoryName()
	for v := from + 1; v <= to; v++ {
		ver, err := s.src.FindVersion(ctx, e.Kind, e.ID, v)
		if err != nil || ver.Actor != who {
			return false
		}
	}
	return true
}

// ScopeCreate is the idempotency scope of the creates a sync makes on the source. A create
// takes no idempotency key of its own, so the sync claims the entry's key in the source's
// key table around it: a create that was made and then lost its acknowledgement (a crash) is
// found there and not made twice.
const ScopeCreate = "copy-create"

// createPending is how long a claimed create key stays claimed: a create takes
// milliseconds, and a sync that died holding the claim blocks the next one this long.
const createPending = 5 * time.Second

// createKeep dates a completed create key's ExpiresAt. The source keeps the key itself for
// good (store.DefaultCompletedTTL), so a create re-sent however late finds it.
const createKeep = 90 * 24 * time.Hour

// pushCreate creates the record on the source, which gives it its id. A product whose sku
// the source has already is a conflict on sku.
func (s *syncer) pushCreate(ctx context.Context, e *store.OutboxEntry) outcome {
	vals := store.Values{}
	for _, f := range s.reg.CopyFields(e.Kind) {
		if v, ok := e.After[f.Name]; ok {
			vals[f.Name] = v
		}
	}
	if p, ok := e.After[store.ParentField].(int64); ok {
		vals[store.ParentField] = p
	}
	hash := store.RequestHash(e.Kind, 0, store.Update{Set: vals})
	claim, err := s.src.ClaimKey(ctx, ScopeCreate, e.Key, hash, createPending)
	if store.ErrorCode(err) == store.EBUSY {
		// A sync that died while creating this record holds the claim: wait it out once.
		select {
		case <-ctx.Done():
			return outcome{fatal: ctx.Err()}
		case <-time.After(createPending + time.Second):
		}
		claim, err = s.src.ClaimKey(ctx, ScopeCreate, e.Key, hash, createPending)
	}
	if err != nil {
		return s.refused(ctx, e, err)
	}
	if !claim.Claimed {
		var id int64
		if _, err := fmt.Sscan(string(claim.Record.Result), &id); err != nil {
			return outcome{fatal: fmt.Errorf("sync: create key %s holds %q, not a record id", e.Key, claim.Record.Result)}
		}
		rec, err := s.src.FindRecord(ctx, e.Kind, id)
		if err != nil {
			return s.refused(ctx, e, err)
		}
		return outcome{rec: rec}
	}
	// A sync killed between the create and CompleteKey left the claim pending: the record
	// may be on the source already. Its first history version says who made it, from a
	// working copy, edited when; with the same values, it is this entry's.
	if own, err := s.findOwnCreate(ctx, e, vals); err != nil {
		return outcome{fatal: err}
	} else if own != nil {
		if err := s.src.CompleteKey(ctx, ScopeCreate, e.Key, []byte(fmt.Sprint(own.ID)), createKeep); err != nil {
			return outcome{fatal: fmt.Errorf("sync: record the create of %s %d: %w", e.Kind, own.ID, err)}
		}
		return outcome{rec: own}
	}
	if sku, ok := vals["sku"].(string); ok && e.Kind == store.KindProduct {
		if other, err := s.findSKU(ctx, sku); err != nil {
			return outcome{fatal: err}
		} else if other != nil {
			_ = s.src.FailKey(ctx, ScopeCreate, e.Key)
			return outcome{conflict: &store.CopyConflict{Op: e.Op, Kind: e.Kind, ID: e.ID,
				Reason: fmt.Sprintf("sku %s is taken on the source by product %d", sku, other.ID),
				Fields: []string{"sku"}, Base: store.Values{}, Mine: e.After, Actor: e.Actor, At: e.At}}
		}
	}
	rec, err := s.src.CreateRecord(ctx, e.Kind, vals)
	if err != nil {
		_ = s.src.FailKey(ctx, ScopeCreate, e.Key)
		o := s.refused(ctx, e, err)
		if o.conflict != nil && e.Kind == store.KindProduct {
			o.conflict.Fields = []string{"sku"}
		}
		return o
	}
	if err := s.src.CompleteKey(ctx, ScopeCreate, e.Key, []byte(fmt.Sprint(rec.ID)), createKeep); err != nil {
		return outcome{fatal: fmt.Errorf("sync: record the create of %s %d: %w", e.Kind, rec.ID, err)}
	}
	return outcome{rec: rec}
}

// findSKU returns the source's product whose sku is the same as sku (store.SKUKey), or nil.
func (s *syncer) findSKU(ctx context.Context, sku string) (*store.Record, error) {
	recs, err := s.src.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: sku})
	if err != nil {
		return nil, fmt.Errorf("sync: look up sku %s: %w", sku, err)
	}
	for _, r := range recs {
		if other, _ := r.Fields["sku"].(string); store.SKUKey(other) == store.SKUKey(sku) {
			return r, nil
		}
	}
	return nil, nil
}

// sameValues is true when got holds every value of want.
func sameValues(got, want store.Values) bool {
	for name, v := range want {
		if !store.Equal(got[name], v) {
			return false
		}
	}
	return true
}

// findOwnCreate looks on the source for the record entry e created in a sync that died
// before it could record so: same natural key (sku, title), same values, and a first history
// version made by e's author from a working copy with e's edit time.
func (s *syncer) findOwnCreate(ctx context.Context, e *store.OutboxEntry, vals store.Values) (*store.Record, error) {
	var cands []*store.Record
	switch e.Kind {
	case store.KindProduct:
		sku, _ := vals["sku"].(string)
		r, err := s.findSKU(ctx, sku)
		if err != nil || r == nil {
			return nil, err
		}
		cands = []*store.Record{r}
	default:
		titleField := s.reg.TitleField(e.Kind)
		title, _ := vals[titleField].(string)
		if f, err := s.reg.Field(e.Kind, titleField); err == nil && f.Search {
			recs, err := s.src.FindRecords(ctx, store.Filter{Kind: e.Kind, Search: title})
			if err != nil {
				return nil, fmt.Errorf("sync: look up %q: %w", title, err)
			}
			cands = recs
			break
		}
		// A title no search looks in (a kind with no searched field refuses a search): the
		// records whose fields hold the create's values, read a page at a time.
		for after := int64(0); ; {
			recs, err := s.src.FindRecords(ctx, store.Filter{Kind: e.Kind, AfterID: after, Limit: 500})
			if err != nil {
				return nil, fmt.Errorf("sync: look up %q: %w", title, err)
			}
			for _, r := range recs {
				if sameValues(r.Fields, vals) {
					cands = append(cands, r)
				}
			}
			if len(recs) < 500 {
				break
			}
			after = recs[len(recs)-1].ID
		}
	}
	who := entryActor(e).HistoryName()
	for _, r := range cands {
		v, err := s.src.FindVersion(ctx, e.Kind, r.ID, 1)
		if store.ErrorCode(err) == store.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sync: read %s %d's first version: %w", e.Kind, r.ID, err)
		}
		if v.Actor != who {
			continue
		}
		same := true
		for name, want := range vals {
			if !store.Equal(v.Snapshot[name], want) {
				same = false
				break
			}
		}
		if same {
			return r, nil
		}
	}
	return nil, nil
}

// update saves u of e's record on the source, presenting the person's lease on it, if any
// (Options.LeaseToken).
func (s *syncer) update(ctx context.Context, e *store.OutboxEntry, u store.Update) (res *store.UpdateResult, err error) {
	err = withLease(s.leaseToken(e), func(token string) error {
		u.LeaseToken = token
		res, err = s.src.UpdateRecord(ctx, e.Kind, e.ID, u)
		return err
	})
	return res, err
}

// leaseToken is the token of the person's lease on e's record ("" when none).
func (s *syncer) leaseToken(e *store.OutboxEntry) string {
	if s.opts.LeaseToken == nil || e.Op == store.CopyCreate {
		return ""
	}
	return s.opts.LeaseToken(e.Kind, e.ID)
}

// withLease runs write with token; when the source says the token is no longer valid, it
// runs write again without one, as a change made without a lease.
func withLease(token string, write func(token string) error) error {
	err := write(token)
	var le *store.LeaseError
	if token != "" && errors.As(err, &le) && le.Lost {
		return write("")
	}
	return err
}
