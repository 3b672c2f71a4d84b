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

	"github.com/tandem-editor/tandem/store"
)

// pageSize is how many records a clone or a pull reads from the source at a time.
const pageSize = 2000

// maxRounds bounds pull-then-push rounds: each round after the first only picks up the
// source's echo of what the previous one pushed.
const maxRounds = 5

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
	Removed   int                  // records the source deleted that left the copy (edited ones stay, as conflicts)
	Pushed    int                  // outbox entries now on the source
	Merged    int                  // of those, how many were merged with the source's changes
	Conflicts []store.CopyConflict // open conflicts after the sync
	Waits     []Wait               // changes held back by leases on the source
	Position  int64                // the source's change-feed position the copy has read to
	Pending   int                  // outbox entries left (those waiting for leases)
	Deletes   []Ref                // of those, the local deletes
	Held      []Held               // the source's records the copy could not take yet
	Repushed  int                  // records Repush queued again as changes (their conflicts are in Conflicts)
	PullTime  time.Duration        // time spent pulling
	PushTime  time.Duration        // time spent pushing
	// Schema is the source's schema change the copy took before it pulled (nil: none).
	Schema *SchemaTaken
	// Unfit are the outbox entries that no longer fit the copy's schema, which is the
	// source's: they stay pending, not pushed, with the record's later entries.
	Unfit []Unfit
}

// SchemaTaken is the source's schema change a sync took into the copy.
type SchemaTaken struct {
	From    int64    `json:"from_version"`
	To      int64    `json:"to_version"`
	Changes []string `json:"changes"` // one line each (store.SchemaChange.String)
}

// Unfit is a local change that no longer fits the source's schema: its kind or a field it
// changes is gone, or a value it sets is no longer allowed. It stays in the outbox.
type Unfit struct {
	Seq  int64        `json:"seq"`
	Kind store.Kind   `json:"kind"`
	ID   int64        `json:"id"`
	Op   store.CopyOp `json:"op"`
	Why  []string     `json:"why"`
}

// Held is a record of the source that a sync read but could not write into the copy yet,
// because a local change it collides with is not settled (store.WorkingCopy.Stale): the copy
// shows the record as it was, or not at all, until then.
type Held struct {
	Kind   store.Kind `json:"kind"`
	ID     int64      `json:"id"`
	Reason string     `json:"reason"` // why, and what settles it
}

// Ref names a record.
type Ref struct {
	Kind store.Kind `json:"kind"`
	ID   int64      `json:"id"`
}

// refusal is an error of a sync refused before anything moved.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// Refused reports whether err stopped a sync before anything moved: the source is another
// store, or was put back from an older backup. The next sync does not continue it; it is
// refused the same way until a person acts.
func Refused(err error) bool {
	var r refusal
	return errors.As(err, &r)
}

// PendingDeletes lists the deletes made in the copy that the source does not have yet,
// oldest first.
func PendingDeletes(ctx context.Context, wc store.WorkingCopy) ([]Ref, error) {
	st, err := wc.CopyState(ctx)
	if err != nil || st.Deletes == 0 {
		return nil, err
	}
	es, err := wc.Outbox(ctx, 0)
	if err != nil {
		return nil, err
	}
	var out []Ref
	for _, e := range es {
		if e.Op == store.CopyDelete {
			out = append(out, Ref{Kind: e.Kind, ID: e.ID})
		}
	}
	return out, nil
}

// InSync reports whether the copy and the source agree: nothing waits and nothing collides.
func (r *Report) InSync() bool {
	return len(r.Conflicts) == 0 && len(r.Waits) == 0 && r.Pending == 0 && len(r.Held) == 0 && len(r.Unfit) == 0
}

// takeSchema makes the source's schema the copy's when the source's version is newer
// (store.WorkingCopy.TakeSchema), before any record is pulled: the records the pull reads
// are the source's, in its schema.
func takeSchema(ctx context.Context, src store.Store, wc store.WorkingCopy) (*SchemaTaken, error) {
	next, cur := src.Registry(), wc.Registry()
	if next.Version() <= cur.Version() || next.Legacy() {
		return nil, nil
	}
	d, err := wc.TakeSchema(ctx, next)
	if err != nil {
		return nil, fmt.Errorf("sync: take the source's schema version %d: %w", next.Version(), err)
	}
	if d == nil {
		return nil, nil
	}
	t := &SchemaTaken{From: cur.Version(), To: next.Version(), Changes: []string{}}
	for _, c := range d.Changes {
		t.Changes = append(t.Changes, c.Desc)
	}
	return t, nil
}

// Sync pulls the source's changes since the copy's position and pushes the copy's outbox,
// round after round until nothing moves. Each step is one local transaction, so a sync
// stopped anywhere (a crash, a lost connection) loses nothing, and the next sync continues:
// a re-sent push is harmless (deltas and creates carry keys, other saves a version check).
// An error means the source could not be read or written at all; what was done until then
// stays done. Another store than the copy's source, and a source that went back in time (a
// *RewoundError), are refused (EINVALID) before anything moves.
func Sync(ctx context.Context, src store.Store, wc store.WorkingCopy) (*Report, error) {
	return SyncWith(ctx, src, wc, Options{})
}

// Options are what SyncWith takes besides the two stores.
type Options struct {
	// LeaseToken, when set, returns the token of a lease that the person of the copy holds
	// on the source's record kind id ("" when none). The push presents it with the record's
	// saves and deletes, so that their own lease does not hold their changes back; a token
	// the source no longer honours (the lease expired or was released) is dropped and the
	// change sent as any other.
	LeaseToken func(kind store.Kind, id int64) string
	// AckBatch is the most acknowledgements of pushed changes written to the copy in one
	// local transaction (0: 64), and ApplyBatch the most of the source's records a pull
	// writes in one (0: a page of the source's change feed, up to 2000). Smaller ones keep
	// each write to the copy short, for a copy a person saves in at the same time (the
	// background sync); larger ones take fewer commits. A pull's position moves with the
	// last write of each page, so a pull stopped between two writes reads the page again.
	AckBatch, ApplyBatch int
	// Passes bounds the pull-then-push passes of the sync (0: until nothing moves, at most
	// 5). A sync that runs again when the source's feed tells of its own pushes (the
	// background sync) needs one: the next pass would only pull their echo, and under a
	// stream of saves it would push the saves made meanwhile, and the next pass again, so
	// that the sync never pauses.
	Passes int
	// PushLimit, when set, ends a push once that many outbox entries are settled, at the
	// end of a run of saves sent together: the rest wait for the next sync, as after a
	// sync stopped there. A sync that runs often (the background sync) keeps each of its
	// rounds short with it while saves pile up.
	PushLimit int
}

// SyncWith is Sync with options.
func SyncWith(ctx context.Context, src store.Store, wc store.WorkingCopy, o Options) (*Report, error) {
	st, err := wc.CopyState(ctx)
	if err != nil {
		return nil, err
	}
	if err := sameSource(src, st); err != nil {
		return nil, err
	}
	if err := checkPosition(ctx, src, wc, st); err != nil {
		return nil, err
	}
	taken, err := takeSchema(ctx, src, wc)
	if err != nil {
		return nil, err
	}
	if taken != nil {
		if st, err = wc.CopyState(ctx); err != nil {
			return nil, err
		}
	}
	s := &syncer{src: src, wc: wc, reg: wc.Registry(), rep: &Report{Schema: taken}, opts: o}
	passes := maxRounds
	if o.Passes > 0 {
		passes = min(o.Passes, maxRounds)
	}
	for round := 0; round < passes; round++ {
		start := time.Now()
		pulled, err := s.pull(ctx, st)
		s.rep.PullTime += time.Since(start)
		if err != nil {
			return s.rep, behind(ctx, wc, err)
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
	if s.rep.Deletes, err = PendingDeletes(ctx, wc); err != nil {
		return s.rep, err
	}
	if s.rep.Conflicts, err = wc.Conflicts(ctx); err != nil {
		return s.rep, err
	}
	if s.rep.Held, err = s.held(ctx); err != nil {
		return s.rep, err
	}
	// The source was reached and the pull and the push ran to their end: that is a sync,
	// whatever conflicts or lease waits it left (status says "last sync" of this).
	if err := wc.MarkSynced(ctx, time.Now()); err != nil {
		return s.rep, err
	}
	return s.rep, nil
}

// checkPosition makes sure the source still has the change the copy read last, as it was
// (store.ChangeMark): one lookup by id. A source put back from an older backup has lost the
// changes after the backup; once written to again, it hands out their ids anew, to other
// changes. A pull from the copy's position would then never read those, and the copy would
// keep values the source lost, both sides calling themselves in sync. Such a source is
// refused (a *RewoundError) before anything moves. A copy that has not kept the mark of its
// position yet (made by an older tandem) takes it here, once the change is found.
func checkPosition(ctx context.Context, src store.Store, wc store.WorkingCopy, st *store.CopyState) error {
	if st.Position == 0 {
		return nil // the source's log was empty at the clone: nothing read can be lost
	}
	chs, err := src.Changes(ctx, st.Position-1, 1)
	if err != nil {
		return fmt.Errorf("sync: read the source's change feed: %w", err)
	}
	rw := &RewoundError{Position: st.Position, Read: st.Mark, Pending: st.Pending, Conflicts: st.Conflict}
	switch {
	case len(chs) == 0 || chs[0].ID != st.Position:
		if rw.Last, err = src.LastChangeID(ctx); err != nil {
			return fmt.Errorf("sync: read the source's change feed: %w", err)
		}
	case st.Mark == "":
		return wc.ApplySource(ctx, nil, store.PointOf(chs[0]))
	case store.ChangeMark(chs[0]) != st.Mark:
		rw.Now = store.ChangeMark(chs[0])
	default:
		return nil
	}
	return refusal{rw}
}

// behind turns err, the error of a pull, into the refusal of a source that went back in time
// when it is one: the source has a record at a version below the one the copy took from it
// (store.ErrSourceBehind). The mark of the copy's position cannot tell that when the copy
// took its mark on a source that had already gone back (a copy made by an older tandem, see
// checkPosition); the versions of the records read since can.
func behind(ctx context.Context, wc store.WorkingCopy, err error) error {
	var se *store.Error
	if !errors.Is(err, store.ErrSourceBehind) || !errors.As(err, &se) {
		return err
	}
	rw := &RewoundError{Behind: se.Message}
	if st, serr := wc.CopyState(ctx); serr == nil {
		rw.Position, rw.Pending, rw.Conflicts = st.Position, st.Pending, st.Conflict
	}
	return refusal{rw}
}

// sameSource refuses (EINVALID) a source that is not the store the copy was cloned from.
func sameSource(src store.Store, st *store.CopyState) error {
	if id := src.StoreID(); id != st.SourceID {
		return refusal{store.Errorf(store.EINVALID, "the source is not the store this copy was cloned from (store id %s, "+
			"the copy's source is %s); nothing was pulled or pushed", id, st.SourceID)}
	}
	return nil
}

// RewoundError is the refusal of a source that no longer has the change the copy read
// last, as the copy read it: it was put back from an older backup. Nothing was pulled or
// pushed. Its code is EINVALID.
type RewoundError struct {
	Position  int64  // the change the copy has read the source up to
	Read      string // that change as the copy read it (store.ChangeMark; "" when not kept)
	Now       string // the change the source has under that id now ("" when none)
	Last      int64  // when Now is "": the source's newest change id
	Pending   int    // the copy's outbox entries, which stay
	Conflicts int    // the copy's open conflicts, which stay
	// Behind, when set, is how a pull found out instead: a record the source has at a
	// version below the one the copy took ("the source has product 1 at version 2, but
	// this copy took version 3 from it"). Nothing was pushed then; pages pulled before it
	// were written as the source has them.
	Behind string
}

// Error says what happened; the command that prints it adds the ways on.
func (e *RewoundError) Error() string {
	if e.Behind != "" {
		return fmt.Sprintf("the source went back in time: %s; versions on a source only grow, so it was put back "+
			"from an older backup, and writes this copy read are not on it any more. Nothing was pushed; the copy keeps its "+
			"records and its own work (%s, %s)", e.Behind, count(e.Pending, "pending change"), count(e.Conflicts, "conflict"))
	}
	read := fmt.Sprintf("change %d", e.Position)
	if e.Read != "" {
		read = fmt.Sprintf("change %d (%s)", e.Position, e.Read)
	}
	var now string
	switch {
	case e.Now != "":
		now = fmt.Sprintf("the source's change %d is now another one (%s)", e.Position, e.Now)
	case e.Last < e.Position:
		now = fmt.Sprintf("the source's change log ends at change %d", e.Last)
	default:
		now = fmt.Sprintf("the source has no change %d any more", e.Position)
	}
	return fmt.Sprintf("the source went back in time: this copy has read its changes up to %s, but %s. The source was put back "+
		"from an older backup, and changes this copy read are not on it any more; writes made there since may carry ids this "+
		"copy counts as read, and a pull would never see them. Nothing was pulled or pushed; the copy keeps its records "+
		"and its own work (%s, %s)", read, now, count(e.Pending, "pending change"), count(e.Conflicts, "conflict"))
}

// count says "1 conflict", "2 conflicts".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Unwrap gives the error its code, EINVALID, for store.ErrorCode.
func (e *RewoundError) Unwrap() error { return &store.Error{Code: store.EINVALID, Message: e.Error()} }

// Repush is the way on from a source that went back in time (RewoundError) that keeps the
// copy's work: it puts the copy's values to the source again as changes, through the usual
// push and conflict queue, and then syncs. It reads the source's newest feed point and then
// every record of the copy's kinds, and sets each record of the copy against the source's
// (store.WorkingCopy.Repush, one local transaction): a field the copy edited on a value the
// source still has is pushed as an edit, merged field by field as usual if the source moves
// meanwhile; any other field that differs (a write the source lost, or one made on it
// after the restore: the copy cannot tell which) makes the record a conflict that keeps
// the copy's value until a person answers; a record the source lost is a conflict of a
// create (answering mine creates it there anew). The copy's position becomes the source's
// newest change. On a source that did not go back in time (the check of Sync passes) it is a
// plain Sync: there a value the source changed is simply newer, and a repush would make it a
// conflict for nothing. EINVALID when the source is another store.
func Repush(ctx context.Context, src store.Store, wc store.WorkingCopy) (*Report, error) {
	st, err := wc.CopyState(ctx)
	if err != nil {
		return nil, err
	}
	if err := sameSource(src, st); err != nil {
		return nil, err
	}
	// The records read below are in the source's schema: the copy takes it first.
	taken, err := takeSchema(ctx, src, wc)
	if err != nil {
		return nil, err
	}
	if st, err = wc.CopyState(ctx); err != nil {
		return nil, err
	}
	var rw *RewoundError
	switch err := checkPosition(ctx, src, wc, st); {
	case err == nil:
		// The mark matches; a pull may still meet a record the source has at an older
		// version than the copy took (behind), and then the repush goes on from there.
		rep, err := Sync(ctx, src, wc)
		if !errors.As(err, &rw) {
			return rep, err
		}
	case !errors.As(err, &rw):
		return nil, err
	}
	at, err := lastPoint(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("repush: %w", err)
	}
	var recs []*store.Record
	for _, kind := range st.Kinds {
		var after int64
		for {
			rs, err := src.FindRecords(ctx, store.Filter{Kind: kind, AfterID: after, Limit: pageSize})
			if err != nil {
				return nil, fmt.Errorf("repush: read %ss: %w", kind, err)
			}
			if len(rs) == 0 {
				break
			}
			recs = append(recs, rs...)
			after = rs[len(rs)-1].ID
		}
	}
	queued, _, err := wc.Repush(ctx, recs, at)
	if err != nil {
		return nil, fmt.Errorf("repush: %w", err)
	}
	rep, err := Sync(ctx, src, wc)
	if rep != nil {
		rep.Repushed = queued
		if rep.Schema == nil {
			rep.Schema = taken
		}
	}
	return rep, err
}

type syncer struct {
	src  store.Store
	wc   store.WorkingCopy
	reg  *store.Registry
	rep  *Report
	opts Options
}

// order returns the copy's kinds in the order a pull writes them: tree kinds first (a
// record's parent before it), then the others, each so that what a record refers to comes
// before it (store.Registry.WriteOrder).
func (s *syncer) order() []store.Kind {
	var trees, rest []store.Kind
	for _, k := range s.reg.WriteOrder() {
		if s.reg.Tree(k) {
			trees = append(trees, k)
		} else {
			rest = append(rest, k)
		}
	}
	return append(trees, rest...)
}

// pull takes the source's changes after the copy's position: the records they name are read
// as they are now and written to the copy with the new position, batch by batch.
func (s *syncer) pull(ctx context.Context, st *store.CopyState) (int, error) {
	pos, n := st.Position, 0
	stale, err := s.wc.Stale(ctx)
	if err != nil {
		return 0, err
	}
	// A record read again here counts when it came in (a resolution gave the record back to
	// the source's, theirs) or went (a document the source deleted, once what held it in the
	// copy, a conflict or a local child, is settled); one that still waits does not. They do
	// not count as moved for the rounds: nothing here is pushed.
	var back []recKey
	for kind, ids := range stale {
		recs, err := s.src.FindRecords(ctx, store.Filter{Kind: kind, IDs: ids})
		if err != nil {
			return n, fmt.Errorf("sync: read %ss: %w", kind, err)
		}
		if gone := missing(ids, recs); len(gone) > 0 {
			removed, err := s.wc.ApplyGone(ctx, kind, gone, store.FeedPoint{})
			if err != nil {
				return n, fmt.Errorf("sync: %w", err)
			}
			s.rep.Removed += removed
		}
		if err := s.wc.ApplySource(ctx, recs, store.FeedPoint{}); err != nil {
			return n, fmt.Errorf("sync: %w", err)
		}
		for _, r := range recs {
			back = append(back, recKey{r.Kind, r.ID})
		}
	}
	if len(back) > 0 {
		waiting, err := s.staleSet(ctx)
		if err != nil {
			return n, err
		}
		for _, k := range back {
			if !waiting[k] {
				s.rep.Pulled++
			}
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
			case store.EventCreated, store.EventSaved, store.EventMoved, store.EventDeleted, store.EventRestored:
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
		// Each record is read as the source has it now: one deleted (and not restored since)
		// is not found, and goes from the copy. The deletes go after the other records,
		// which may move a document's children away first, and with the new position.
		var recs []*store.Record
		gone := map[store.Kind][]int64{}
		order := s.order()
		for _, kind := range order {
			if len(ids[kind]) == 0 {
				continue
			}
			rs, err := s.src.FindRecords(ctx, store.Filter{Kind: kind, IDs: ids[kind]})
			if err != nil {
				return n, fmt.Errorf("sync: read changed %ss: %w", kind, err)
			}
			recs = append(recs, rs...)
			if g := missing(ids[kind], rs); len(g) > 0 {
				gone[kind] = g
			}
		}
		last := store.PointOf(chs[len(chs)-1])
		pos = last.ID
		at := last
		if len(gone) > 0 {
			at = store.FeedPoint{}
		}
		if err := s.apply(ctx, recs, at); err != nil {
			return n, err
		}
		var kinds []store.Kind
		for i := len(order) - 1; i >= 0; i-- {
			// Referrers before what they refer to: the source deleted both.
			if kind := order[i]; len(gone[kind]) > 0 {
				kinds = append(kinds, kind)
			}
		}
		for i, kind := range kinds {
			at := store.FeedPoint{}
			if i == len(kinds)-1 {
				at = last // the position moves with the last write of the page only
			}
			removed, err := s.wc.ApplyGone(ctx, kind, gone[kind], at)
			if err != nil {
				return n, fmt.Errorf("sync: %w", err)
			}
			n += len(gone[kind])
			s.rep.Removed += removed
		}
		n += len(recs)
		taken, err := s.taken(ctx, recs)
		if err != nil {
			return n, err
		}
		s.rep.Pulled += taken
	}
}

// apply writes recs, a page's records as the source has them, to the copy, moving its
// position to at (none: zero) with the last of them: in writes of Options.ApplyBatch
// records, in order (what a record refers to comes before it). Records written before the
// position moves are read and written again by the next pull if this one stops: they are
// the source's, so that writes them as they are.
func (s *syncer) apply(ctx context.Context, recs []*store.Record, at store.FeedPoint) error {
	for n := s.opts.ApplyBatch; n > 0 && len(recs) > n; recs = recs[n:] {
		if err := s.wc.ApplySource(ctx, recs[:n], store.FeedPoint{}); err != nil {
			return fmt.Errorf("sync: %w", err)
		}
	}
	if err := s.wc.ApplySource(ctx, recs, at); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}

// taken counts the records of recs that ApplySource wrote: those it held back (Stale) are
// not pulled yet, and the report names them (Held).
func (s *syncer) taken(ctx context.Context, recs []*store.Record) (int, error) {
	waiting, err := s.staleSet(ctx)
	if err != nil || len(waiting) == 0 {
		return len(recs), err
	}
	n := 0
	for _, r := range recs {
		if !waiting[recKey{r.Kind, r.ID}] {
			n++
		}
	}
	return n, nil
}

// staleSet returns the records the copy holds back (store.WorkingCopy.Stale) as a set.
func (s *syncer) staleSet(ctx context.Context) (map[recKey]bool, error) {
	stale, err := s.wc.Stale(ctx)
	if err != nil {
		return nil, err
	}
	out := map[recKey]bool{}
	for kind, ids := range stale {
		for _, id := range ids {
			out[recKey{kind, id}] = true
		}
	}
	return out, nil
}

// held returns the source's records the copy still holds back after a sync, each with the
// reason: a local record holding a product's sku, a document's parent missing from the
// copy, a local move the source's parent would close a loop with, a document the source
// deleted that still has children in the copy.
func (s *syncer) held(ctx context.Context) ([]Held, error) {
	stale, err := s.wc.Stale(ctx)
	if err != nil || len(stale) == 0 {
		return nil, err
	}
	var out []Held
	for _, kind := range s.reg.Kinds() {
		ids := stale[kind]
		if len(ids) == 0 {
			continue
		}
		recs, err := s.src.FindRecords(ctx, store.Filter{Kind: kind, IDs: ids})
		if err != nil {
			return nil, fmt.Errorf("sync: read held-back %ss: %w", kind, err)
		}
		byID := map[int64]*store.Record{}
		for _, r := range recs {
			byID[r.ID] = r
		}
		for _, id := range ids {
			why, err := s.heldReason(ctx, kind, id, byID[id])
			if err != nil {
				return nil, err
			}
			out = append(out, Held{Kind: kind, ID: id, Reason: why})
		}
	}
	return out, nil
}

// heldReason says why the copy holds back the source's record kind id (src: as the source
// has it, nil when it does not) and what settles it.
func (s *syncer) heldReason(ctx context.Context, kind store.Kind, id int64, src *store.Record) (string, error) {
	if src == nil {
		return fmt.Sprintf("deleted on the source; %ss under it stay in the copy until their own changes are settled", kind), nil
	}
	if kind == store.KindProduct && s.reg.Has(kind) {
		sku, _ := src.Fields["sku"].(string)
		recs, err := s.wc.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: sku})
		if err != nil {
			return "", fmt.Errorf("sync: look up sku %s in the copy: %w", sku, err)
		}
		for _, r := range recs {
			if other, _ := r.Fields["sku"].(string); r.ID != id && store.SKUKey(other) == store.SKUKey(sku) {
				return fmt.Sprintf("its sku %s is held here by product %d; it comes in once product %d's change or conflict is settled", sku, r.ID, r.ID), nil
			}
		}
		return "it comes in at the next sync", nil
	}
	p, ok := src.Fields[store.ParentField].(int64)
	if !ok || !s.reg.Tree(kind) {
		for _, f := range s.reg.Fields(kind) {
			to, ok := src.Fields[f.Name].(int64)
			if f.Type != store.TypeRef || !ok {
				continue
			}
			if _, err := s.wc.FindRecord(ctx, f.To, to); store.ErrorCode(err) == store.ENOTFOUND {
				return fmt.Sprintf("its %s refers to %s %d, which is not in the copy (yet)", f.Name, f.To, to), nil
			}
		}
		return "it comes in at the next sync", nil
	}
	// Walk up from the source's parent in the copy's tree: a missing document, or the
	// record itself (a loop with a local move).
	at := p
	for range store.MaxDepth + 2 {
		if at == id {
			return fmt.Sprintf("the source put it under %s %d, which is under it here (a move made here, not settled yet); "+
				"it comes in once that move is synced or resolved", kind, p), nil
		}
		r, err := s.wc.FindRecord(ctx, kind, at)
		if store.ErrorCode(err) == store.ENOTFOUND {
			return fmt.Sprintf("the source put it under %s %d, which is not in the copy (yet)", kind, at), nil
		}
		if err != nil {
			return "", fmt.Errorf("sync: read %s %d in the copy: %w", kind, at, err)
		}
		next, ok := r.Fields[store.ParentField].(int64)
		if !ok {
			break
		}
		at = next
	}
	return "it comes in at the next sync", nil
}

// recKey names a record across kinds.
type recKey struct {
	kind store.Kind
	id   int64
}

// DropUnfit takes the source's schema into the copy when it is newer (as Sync does) and
// then drops the copy's local changes that no longer fit it (store.Registry.Unfit), which a
// person gave up; it returns them. The records they changed come from the source again at
// the next pull.
func DropUnfit(ctx context.Context, src store.Store, wc store.WorkingCopy) ([]Unfit, error) {
	st, err := wc.CopyState(ctx)
	if err != nil {
		return nil, err
	}
	if err := sameSource(src, st); err != nil {
		return nil, err
	}
	if _, err := takeSchema(ctx, src, wc); err != nil {
		return nil, err
	}
	unfit, err := Unfits(ctx, wc)
	if err != nil {
		return nil, err
	}
	var out []Unfit
	for _, u := range unfit {
		if err := wc.DropEntry(ctx, u.Seq); err != nil {
			return out, fmt.Errorf("drop the change of %s %d: %w", u.Kind, u.ID, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// Unfits returns the copy's local changes that no longer fit its schema, the source's as
// the copy last took it (store.Registry.Unfit), oldest first.
func Unfits(ctx context.Context, wc store.WorkingCopy) ([]Unfit, error) {
	es, err := wc.Outbox(ctx, 0)
	if err != nil {
		return nil, err
	}
	reg := wc.Registry()
	var out []Unfit
	for i := range es {
		e := &es[i]
		if why := reg.Unfit(e); len(why) > 0 {
			out = append(out, Unfit{Seq: e.Seq, Kind: e.Kind, ID: e.ID, Op: e.Op, Why: why})
		}
	}
	return out, nil
}
