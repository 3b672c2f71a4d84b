// Package sync clones a store into a working copy and syncs the copy back with the same
// conflict rules people see in the editor: relative changes are replayed with their keys,
// absolute changes are saved on the version they were made on, or merged field by field
// (merge.Records) when the source moved on, and real collisions wait in the copy's conflict
// queue for a person. It talks to both sides through store interfaces only, so any store can
// be the source.
package sync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// pageSize is how many records a clone or a pull reads from the source at a time.
const pageSize = 2000

// mergeAttempts bounds the merge-and-save loop of one absolute change whose source keeps
// moving under it.
const mergeAttempts = 5

// maxRounds bounds pull-then-push rounds: each round after the first only picks up the
// source's echo of what the previous one pushed.
const maxRounds = 5

// CloneOptions say what a clone copies.
type CloneOptions struct {
	Kinds   []store.Kind // the kinds to copy (empty: all)
	Subtree int64        // documents: only this one and its descendants (0: all)
	Source  string       // where the source was found, without a password (kept for sync)
	// Progress, when set, is called after each batch with records copied and the total.
	Progress func(done, total int)
}

// Clone makes dst, an empty store, a working copy of src. It reads the source's change-feed
// position before the records: a record that changes during the clone may be copied at a
// newer version than the position says, and the first sync reads it again, which is
// harmless because a pull always takes a record's current state. Each batch is written in
// one local transaction.
func Clone(ctx context.Context, src store.Store, dst store.WorkingCopy, o CloneOptions) (*store.CopyState, error) {
	kinds := o.Kinds
	if len(kinds) == 0 {
		kinds = []store.Kind{store.KindProduct, store.KindDocument}
	}
	if o.Subtree != 0 {
		if _, err := src.FindRecord(ctx, store.KindDocument, o.Subtree); err != nil {
			return nil, fmt.Errorf("clone: subtree: %w", err)
		}
	}
	pos, err := src.LastChangeID(ctx)
	if err != nil {
		return nil, fmt.Errorf("clone: read the source's change feed: %w", err)
	}
	st := store.CopyState{SourceID: src.StoreID(), Source: o.Source, Kinds: kinds, Subtree: o.Subtree, Position: pos}
	if err := dst.StartCopy(ctx, st); err != nil {
		return nil, fmt.Errorf("clone: %w", err)
	}
	total := 0
	for _, k := range kinds {
		n, err := src.CountRecords(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("clone: count %ss: %w", k, err)
		}
		total += n
	}
	done := 0
	for _, k := range kinds {
		if k == store.KindDocument && o.Subtree != 0 {
			n, err := cloneSubtree(ctx, src, dst, o.Subtree)
			if err != nil {
				return nil, err
			}
			done += n
			continue
		}
		rctx, stop := context.WithCancel(ctx)
		pages := readPages(rctx, src, k)
		for p := range pages {
			if p.err != nil {
				stop()
				return nil, fmt.Errorf("clone: read %ss: %w", k, p.err)
			}
			if err := dst.ApplySource(ctx, p.recs, 0); err != nil {
				stop()
				drain(pages)
				return nil, fmt.Errorf("clone: %w", err)
			}
			done += len(p.recs)
			if o.Progress != nil {
				o.Progress(done, total)
			}
		}
		stop()
	}
	return dst.CopyState(ctx)
}

// page is one page of records read from a source, or the error that ended the reading.
type page struct {
	recs []*store.Record
	err  error
}

// readPages reads every record of kind from src, page by page, ahead of the caller: the
// next page is read from the source while the copy writes the last one. The channel is
// closed after the last page or an error; a caller that stops early must drain it.
func readPages(ctx context.Context, src store.Store, kind store.Kind) <-chan page {
	ch := make(chan page, 2)
	go func() {
		defer close(ch)
		var after int64
		for {
			recs, err := src.FindRecords(ctx, store.Filter{Kind: kind, AfterID: after, Limit: pageSize})
			if err != nil {
				ch <- page{err: err}
				return
			}
			if len(recs) == 0 {
				return
			}
			ch <- page{recs: recs}
			after = recs[len(recs)-1].ID
		}
	}()
	return ch
}

// drain empties pages so that its reader ends.
func drain(pages <-chan page) {
	for range pages {
	}
}

// cloneSubtree copies document root and its descendants, parents before children.
func cloneSubtree(ctx context.Context, src store.Store, dst store.WorkingCopy, root int64) (int, error) {
	var all []*store.Record
	var after int64
	for {
		recs, err := src.FindRecords(ctx, store.Filter{Kind: store.KindDocument, AfterID: after, Limit: pageSize})
		if err != nil {
			return 0, fmt.Errorf("clone: read documents: %w", err)
		}
		if len(recs) == 0 {
			break
		}
		all = append(all, recs...)
		after = recs[len(recs)-1].ID
	}
	children := map[int64][]*store.Record{}
	var top *store.Record
	for _, r := range all {
		if r.ID == root {
			top = r
		}
		if p, ok := r.Fields[store.ParentField].(int64); ok {
			children[p] = append(children[p], r)
		}
	}
	if top == nil {
		return 0, store.Errorf(store.ENOTFOUND, "clone: document %d is not on the source", root)
	}
	level := []*store.Record{top}
	n := 0
	for len(level) > 0 {
		if err := dst.ApplySource(ctx, level, 0); err != nil {
			return n, fmt.Errorf("clone: %w", err)
		}
		n += len(level)
		var next []*store.Record
		for _, r := range level {
			next = append(next, children[r.ID]...)
		}
		level = next
	}
	return n, nil
}

// Wait is a local change held back because a lease on the source covers it.
type Wait struct {
	Kind   store.Kind `json:"kind"`
	ID     int64      `json:"id"`
	Group  string     `json:"group"`
	Holder string     `json:"holder"`
	Until  time.Time  `json:"until"`
}

// Report is what a sync did and what is left.
type Report struct {
	Pulled    int                  // records the copy took from the source
	Pushed    int                  // outbox entries now on the source
	Merged    int                  // of those, how many were merged with the source's changes
	Conflicts []store.CopyConflict // open conflicts after the sync
	Waits     []Wait               // changes held back by leases on the source
	Position  int64                // the source's change-feed position the copy has read to
	Pending   int                  // outbox entries left (those waiting for leases)
	PullTime  time.Duration        // time spent pulling
	PushTime  time.Duration        // time spent pushing
}

// InSync reports whether the copy and the source agree: nothing waits and nothing collides.
func (r *Report) InSync() bool { return len(r.Conflicts) == 0 && len(r.Waits) == 0 && r.Pending == 0 }

// Sync pulls the source's changes since the copy's position and pushes the copy's outbox,
// round after round until nothing moves. Each step is one local transaction, so a sync
// stopped anywhere (a crash, a lost connection) loses nothing, and the next sync continues:
// keys make a re-sent push harmless. An error means the source could not be read or written
// at all; what was done until then stays done.
func Sync(ctx context.Context, src store.Store, wc store.WorkingCopy) (*Report, error) {
	st, err := wc.CopyState(ctx)
	if err != nil {
		return nil, err
	}
	if id := src.StoreID(); id != st.SourceID {
		return nil, store.Errorf(store.EINVALID, "the source is not the store this copy was cloned from (store id %s, the copy's source is %s)", id, st.SourceID)
	}
	s := &syncer{src: src, wc: wc, reg: wc.Registry(), rep: &Report{}}
	for round := 0; round < maxRounds; round++ {
		start := time.Now()
		pulled, err := s.pull(ctx, st)
		s.rep.PullTime += time.Since(start)
		if err != nil {
			return s.rep, err
		}
		start = time.Now()
		pushed, err := s.push(ctx)
		s.rep.PushTime += time.Since(start)
		if err != nil {
			return s.rep, err
		}
		if pulled == 0 && pushed == 0 {
			break
		}
		if st, err = wc.CopyState(ctx); err != nil {
			return s.rep, err
		}
	}
	if st, err = wc.CopyState(ctx); err != nil {
		return s.rep, err
	}
	s.rep.Position, s.rep.Pending = st.Position, st.Pending
	if s.rep.Conflicts, err = wc.Conflicts(ctx); err != nil {
		return s.rep, err
	}
	if s.rep.InSync() {
		if err := wc.MarkSynced(ctx, time.Now()); err != nil {
			return s.rep, err
		}
	}
	return s.rep, nil
}

type syncer struct {
	src store.Store
	wc  store.WorkingCopy
	reg *store.Registry
	rep *Report
}

// pull takes the source's changes after the copy's position: the records they name are read
// as they are now and written to the copy with the new position, batch by batch.
func (s *syncer) pull(ctx context.Context, st *store.CopyState) (int, error) {
	pos, n := st.Position, 0
	stale, err := s.wc.Stale(ctx)
	if err != nil {
		return 0, err
	}
	for kind, ids := range stale {
		recs, err := s.src.FindRecords(ctx, store.Filter{Kind: kind, IDs: ids})
		if err != nil {
			return n, fmt.Errorf("sync: read %ss: %w", kind, err)
		}
		if err := s.wc.ApplySource(ctx, recs, 0); err != nil {
			return n, fmt.Errorf("sync: %w", err)
		}
	}
	for {
		chs, err := s.src.Changes(ctx, pos, pageSize)
		if err != nil {
			return n, fmt.Errorf("sync: read the source's changes: %w", err)
		}
		if len(chs) == 0 {
			return n, nil
		}
		ids := map[store.Kind][]int64{}
		seen := map[recKey]bool{}
		for _, c := range chs {
			switch c.Event {
			case store.EventCreated, store.EventSaved, store.EventMoved:
			default:
				continue
			}
			k := recKey{c.Kind, c.RecordID}
			if !st.InScope(c.Kind) || seen[k] {
				continue
			}
			seen[k] = true
			ids[c.Kind] = append(ids[c.Kind], c.RecordID)
		}
		var recs []*store.Record
		for _, kind := range []store.Kind{store.KindDocument, store.KindProduct} {
			if len(ids[kind]) == 0 {
				continue
			}
			rs, err := s.src.FindRecords(ctx, store.Filter{Kind: kind, IDs: ids[kind]})
			if err != nil {
				return n, fmt.Errorf("sync: read changed %ss: %w", kind, err)
			}
			recs = append(recs, rs...)
		}
		pos = chs[len(chs)-1].ID
		if err := s.wc.ApplySource(ctx, recs, pos); err != nil {
			return n, fmt.Errorf("sync: %w", err)
		}
		n += len(recs)
		s.rep.Pulled += len(recs)
	}
}

type recKey struct {
	kind store.Kind
	id   int64
}

// outcome is what became of one outbox entry.
type outcome struct {
	rec      *store.Record       // applied: the record as the source has it now
	rebase   bool                // applied on exactly its base version
	merged   bool                // applied after a merge with the source's changes
	conflict *store.CopyConflict // not applied: queued for a person
	wait     *store.LeaseError   // not applied: a lease on the source holds the record
	fatal    error               // the source failed: stop the sync
}

// push sends the outbox, oldest entry first. Entries of a record held by a lease wait, and so
// do that record's later entries, to keep their order.
func (s *syncer) push(ctx context.Context) (moved int, err error) {
	entries, err := s.wc.Outbox(ctx, 0)
	if err != nil {
		return 0, err
	}
	// Acknowledgements are written while the next entry travels to the source: the copy
	// and the source work at the same time. A create and a conflict wait for the writes
	// before them, since they change what later entries refer to.
	acks := startAcker(ctx, s.wc)
	defer func() {
		if aerr := acks.wait(); err == nil {
			err = aerr
		}
	}()
	held := map[recKey]bool{}
	s.rep.Waits = nil
	for i := range entries {
		e := &entries[i]
		k := recKey{e.Kind, e.ID}
		if held[k] {
			continue
		}
		o := s.pushEntry(ctx, e)
		switch {
		case o.fatal != nil:
			return moved, o.fatal
		case o.wait != nil:
			held[k] = true
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
					if l := &entries[j]; l.Kind == e.Kind && l.ID == e.ID {
						l.ID = o.rec.ID
						if l.BaseVersion == 0 {
							l.BaseVersion = o.rec.Version
						}
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

// acker writes acknowledgements to the copy in order, in a goroutine of its own.
type acker struct {
	ctx  context.Context
	wc   store.WorkingCopy
	ch   chan ackReq
	done chan error
}

type ackReq struct {
	seq    int64
	rec    *store.Record
	rebase bool
}

func startAcker(ctx context.Context, wc store.WorkingCopy) *acker {
	a := &acker{ctx: ctx, wc: wc, ch: make(chan ackReq, 64), done: make(chan error, 1)}
	go func() {
		var err error
		for r := range a.ch {
			if err == nil { // after a failure the rest stay in the outbox: re-sent next time
				err = wc.AckEntry(ctx, r.seq, r.rec, r.rebase)
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
	*a = *startAcker(a.ctx, a.wc)
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
	return store.WithActor(ctx, store.Actor{Name: e.Actor, Role: store.RoleEditor, Via: Via, EditedAt: e.At})
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
	}
	return outcome{fatal: store.Errorf(store.EINVALID, "outbox entry %d: unknown operation %q", e.Seq, e.Op)}
}

// refused turns a source error into an outcome: leases wait, refusals that a person must
// look at become conflicts, anything else stops the sync.
func refused(e *store.OutboxEntry, err error, theirs *store.Record) outcome {
	var le *store.LeaseError
	if errors.As(err, &le) && !le.Lost {
		return outcome{wait: le}
	}
	switch store.ErrorCode(err) {
	case store.ENOTFOUND, store.EINVALID, store.EFORBIDDEN:
		c := &store.CopyConflict{Op: e.Op, Kind: e.Kind, ID: e.ID, Reason: reason(err), Base: e.Before, Mine: e.After, BaseVersion: e.BaseVersion, Actor: e.Actor, At: e.At}
		if theirs != nil {
			c.Theirs, c.TheirsVersion = theirs.Fields, theirs.Version
		}
		return outcome{conflict: c}
	}
	return outcome{fatal: fmt.Errorf("sync: %s %d: %w", e.Kind, e.ID, err)}
}

func reason(err error) string {
	if store.ErrorCode(err) == store.ENOTFOUND {
		return "not on the source any more: " + err.Error()
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
		res, err := s.src.UpdateRecord(ctx, e.Kind, e.ID, store.Update{Add: add, IdempotencyKey: e.Key + ":add"})
		if err != nil {
			return refused(e, err, nil)
		}
		// Later entries were made on top of this one; they may move onto the source's
		// version only if no other write came between the two parts.
		o.rebase = o.rebase && o.rec != nil && res.Version == o.rec.Version+1 && !res.Replayed
		o.rec = res.Record
	}
	if o.rec == nil {
		// Nothing differed (a save that was undone): take the record as it is.
		r, err := s.src.FindRecord(ctx, e.Kind, e.ID)
		if err != nil {
			return refused(e, err, nil)
		}
		o.rec = r
	}
	return o
}

// pushAbsolute saves the absolute part of a save on its base version; on a conflict it
// merges (base = what the edit was made on, mine = the edit, theirs = the source now) and
// saves the merge on the source's version, a bounded number of times.
func (s *syncer) pushAbsolute(ctx context.Context, e *store.OutboxEntry, set store.Values) outcome {
	res, err := s.src.UpdateRecord(ctx, e.Kind, e.ID, store.Update{BaseVersion: e.BaseVersion, Set: set, IdempotencyKey: e.Key + ":set"})
	if err == nil {
		return outcome{rec: res.Record, rebase: !res.Replayed && !res.Unchanged}
	}
	for attempt := 0; attempt < mergeAttempts; attempt++ {
		var ce *store.ConflictError
		if !errors.As(err, &ce) {
			return refused(e, err, nil)
		}
		theirs := ce.Current
		base, mine, cur := store.Values{}, store.Values{}, store.Values{}
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
			cur[f.Name] = theirs.Fields[f.Name]
		}
		m := merge.Records(s.reg, e.Kind, base, mine, cur)
		if m.Conflicts() > 0 {
			var fields []string
			for _, f := range m.Fields {
				if f.State == merge.FieldConflict {
					fields = append(fields, f.Field.Name)
				}
			}
			return outcome{conflict: &store.CopyConflict{Op: e.Op, Kind: e.Kind, ID: e.ID, Reason: "changed on both sides",
				Fields: fields, Base: base, Mine: mine, Theirs: cur, BaseVersion: e.BaseVersion, TheirsVersion: theirs.Version, Actor: e.Actor, At: e.At}}
		}
		changes, err2 := m.Changes()
		if err2 != nil {
			return outcome{fatal: err2}
		}
		if len(changes) == 0 {
			return outcome{rec: theirs, merged: true} // the source holds the edit already
		}
		key := fmt.Sprintf("%s:merge@%d", e.Key, theirs.Version)
		res, err = s.src.UpdateRecord(ctx, e.Kind, e.ID, store.Update{BaseVersion: theirs.Version, Set: changes, IdempotencyKey: key})
		if err == nil {
			return outcome{rec: res.Record, merged: true}
		}
	}
	return refused(e, err, nil)
}

// pushMove replays a move. A move has no base version: it is checked against the source's
// tree as it is now, and one that would form a cycle there becomes a conflict.
func (s *syncer) pushMove(ctx context.Context, e *store.OutboxEntry) outcome {
	var parent *int64
	if p, ok := e.After[store.ParentField].(int64); ok {
		parent = &p
	}
	res, err := s.src.MoveDocument(ctx, e.ID, store.Move{Parent: parent})
	if err != nil {
		o := refused(e, err, nil)
		if o.conflict != nil {
			o.conflict.Fields = []string{store.ParentField}
			if cur, ferr := s.src.FindRecord(ctx, e.Kind, e.ID); ferr == nil {
				o.conflict.Theirs = store.Values{store.ParentField: cur.Fields[store.ParentField]}
				o.conflict.TheirsVersion = cur.Version
			}
		}
		return o
	}
	return outcome{rec: res.Record}
}

// ScopeCreate is the idempotency scope of the creates a sync makes on the source. A create
// takes no idempotency key of its own, so the sync claims the entry's key in the source's
// key table around it: a create that was made and then lost its acknowledgement (a crash) is
// found there and not made twice.
const ScopeCreate = "copy-create"

// createPending is how long a claimed create key stays claimed: a create takes
// milliseconds, and a sync that died holding the claim blocks the next one this long.
const createPending = 5 * time.Second

// createKeep is how long the source remembers a create's key.
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
		return refused(e, err, nil)
	}
	if !claim.Claimed {
		var id int64
		if _, err := fmt.Sscan(string(claim.Record.Result), &id); err != nil {
			return outcome{fatal: fmt.Errorf("sync: create key %s holds %q, not a record id", e.Key, claim.Record.Result)}
		}
		rec, err := s.src.FindRecord(ctx, e.Kind, id)
		if err != nil {
			return refused(e, err, nil)
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
		o := refused(e, err, nil)
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
		title, _ := vals["title"].(string)
		recs, err := s.src.FindRecords(ctx, store.Filter{Kind: e.Kind, Search: title})
		if err != nil {
			return nil, fmt.Errorf("sync: look up %q: %w", title, err)
		}
		cands = recs
	}
	who := store.Actor{Name: e.Actor, Via: Via, EditedAt: e.At}.HistoryName()
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
