package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tandem-editor/tandem/store"
)

var _ store.WorkingCopy = (*DB)(nil)

// A working copy's state is one more map beside the records: where it came from, the base
// version of each record taken from the source, the outbox, the conflicts and the records
// held back (Stale). StartCopy makes a store a copy (sync.Clone calls it on memory.New's
// store as on an empty SQLite file). Local writes append to the outbox in the same locked
// step that writes the record (queueWrite, called from record.go, document.go and
// delete.go; deletes and restores in workcopy_delete.go); writes made on the source's behalf
// go through copyTx, which writes records directly and queues nothing, and undoes everything
// when a step fails, as a rolled-back transaction would. The repush is workcopy_repush.go.

// copyState is what a working copy keeps besides its records.
type copyState struct {
	meta      store.CopyState // SourceID, Source, Kinds, Subtree, Position, Mark, ClonedAt, SyncedAt
	base      map[store.RecordKey]int64
	outbox    []store.OutboxEntry // oldest first
	seq       int64               // the last outbox seq handed out
	conflicts map[store.RecordKey]store.CopyConflict
	stale     map[store.RecordKey]bool
	// quiet says the copy had no outbox entries, conflicts or held-back records when the
	// transaction began: the source's tree then holds no loop with a local move.
	quiet bool
}

func (c *copyState) clone() *copyState {
	out := *c
	out.meta.Kinds = slices.Clone(c.meta.Kinds)
	out.base = maps.Clone(c.base)
	out.outbox = slices.Clone(c.outbox)
	out.conflicts = maps.Clone(c.conflicts)
	out.stale = maps.Clone(c.stale)
	return &out
}

// busy reports whether record k has outbox entries or an open conflict.
func (c *copyState) busy(k store.RecordKey) bool {
	if _, ok := c.conflicts[k]; ok {
		return true
	}
	return slices.ContainsFunc(c.outbox, func(e store.OutboxEntry) bool { return e.Kind == k.Kind && e.ID == k.ID })
}

// entry returns the index of outbox entry seq, -1 when there is none.
func (c *copyState) entry(seq int64) int {
	return slices.IndexFunc(c.outbox, func(e store.OutboxEntry) bool { return e.Seq == seq })
}

// dropEntries removes the outbox entries of record k.
func (c *copyState) dropEntries(k store.RecordKey) {
	c.outbox = slices.DeleteFunc(c.outbox, func(e store.OutboxEntry) bool { return e.Kind == k.Kind && e.ID == k.ID })
}

// forget drops everything the copy keeps about record k besides the record.
func (c *copyState) forget(k store.RecordKey) {
	c.dropEntries(k)
	delete(c.conflicts, k)
	delete(c.stale, k)
	delete(c.base, k)
}

// queue appends an outbox entry, giving it the next seq and a fresh key (prefix, then 32 hex
// digits) when it has none.
func (c *copyState) queue(e store.OutboxEntry, prefix string) {
	c.seq++
	e.Seq = c.seq
	if e.Key == "" {
		e.Key = prefix + newToken()[:32]
	}
	c.outbox = append(c.outbox, e)
}

// snapshot returns a function that puts the store back as it is now: the records, the
// history and change log (append-only, so cut back), the id counters and the copy's state.
// It relies on the writes it undoes replacing records rather than changing them in place,
// as the working copy's own writes and deletes do.
func (db *DB) snapshot() (undo func()) {
	recs := map[store.Kind]map[int64]*store.Record{}
	for k, m := range db.records {
		recs[k] = maps.Clone(m)
	}
	nh, nc, ids := len(db.history), len(db.changes), maps.Clone(db.lastID)
	var wc *copyState
	if db.wc != nil {
		wc = db.wc.clone()
	}
	return func() {
		db.records, db.history, db.changes, db.lastID, db.wc = recs, db.history[:nh], db.changes[:nc], ids, wc
	}
}

// copyTx runs fn on the copy's state under the lock, as one transaction: when fn fails,
// nothing it wrote stays. ENOTFOUND when the store is not a working copy.
func (db *DB) copyTx(ctx context.Context, op string, fn func(wc *copyState) error) error {
	if err := db.begin(ctx, op); err != nil {
		return err
	}
	defer db.mu.Unlock()
	if db.wc == nil {
		return notCopy()
	}
	undo := db.snapshot()
	db.wc.quiet = len(db.wc.outbox) == 0 && len(db.wc.conflicts) == 0 && len(db.wc.stale) == 0
	if err := fn(db.wc); err != nil {
		undo()
		return err
	}
	return nil
}

// copyRead runs fn on the copy's state under the lock, for reading. ENOTFOUND when the store
// is not a working copy.
func (db *DB) copyRead(ctx context.Context, op string, fn func(wc *copyState)) error {
	if err := db.begin(ctx, op); err != nil {
		return err
	}
	defer db.mu.Unlock()
	if db.wc == nil {
		return notCopy()
	}
	fn(db.wc)
	return nil
}

func notCopy() error {
	return store.Errorf(store.ENOTFOUND, "this store is not a working copy (a clone makes one)")
}

// CopyState returns the working copy's state (store.WorkingCopy).
func (db *DB) CopyState(ctx context.Context) (*store.CopyState, error) {
	if err := db.begin(ctx, "CopyState"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if db.wc == nil {
		return nil, notCopy()
	}
	s := db.wc.meta
	s.Kinds = slices.Clone(s.Kinds)
	s.Pending, s.Conflict, s.Held = len(db.wc.outbox), len(db.wc.conflicts), len(db.wc.stale)
	for _, e := range db.wc.outbox {
		if e.Op == store.CopyDelete {
			s.Deletes++
		}
	}
	return &s, nil
}

// StartCopy makes an empty store a working copy (store.WorkingCopy).
func (db *DB) StartCopy(ctx context.Context, s store.CopyState) error {
	if err := db.begin(ctx, "StartCopy"); err != nil {
		return err
	}
	defer db.mu.Unlock()
	if db.wc != nil {
		return store.Errorf(store.EINVALID, "this store is a working copy already")
	}
	n := 0
	for _, m := range db.records {
		n += len(m)
	}
	if n > 0 {
		return store.Errorf(store.EINVALID, "this store holds %d records: a working copy starts from an empty store", n)
	}
	for _, k := range db.Registry().Kinds() {
		db.lastID[k] = max(db.lastID[k], store.LocalIDBase)
	}
	meta := store.CopyState{SourceID: s.SourceID, Source: s.Source, Kinds: slices.Clone(s.Kinds), Subtree: s.Subtree,
		Position: s.Position, Mark: s.Mark, ClonedAt: db.stamp()}
	db.wc = &copyState{meta: meta, base: map[store.RecordKey]int64{}, conflicts: map[store.RecordKey]store.CopyConflict{},
		stale: map[store.RecordKey]bool{}}
	return nil
}

// ApplySource writes records as the source has them (store.WorkingCopy).
func (db *DB) ApplySource(ctx context.Context, recs []*store.Record, at store.FeedPoint) error {
	return db.copyTx(ctx, "ApplySource", func(wc *copyState) error {
		before := db.versions(recs)
		if err := db.applyRecords(wc, recs); err != nil {
			return err
		}
		db.logPulled(recs, before)
		wc.movePosition(at)
		return nil
	})
}

// applyRecords writes recs one by one as ApplySource does.
func (db *DB) applyRecords(wc *copyState, recs []*store.Record) error {
	for _, r := range recs {
		if !wc.meta.InScope(r.Kind) || !db.inSubtree(wc, r) {
			continue
		}
		if wc.busy(store.RecordKey{Kind: r.Kind, ID: r.ID}) {
			db.refreshGoneConflict(wc, r)
			continue
		}
		if err := db.putSource(wc, r); err != nil {
			return err
		}
	}
	return nil
}

// inSubtree reports whether r belongs in a copy of one subtree of documents (as sync.Clone
// makes it): a record of another kind, the root, or a document whose parent is the root or a
// document the copy holds.
func (db *DB) inSubtree(wc *copyState, r *store.Record) bool {
	root := wc.meta.Subtree
	if r.Kind != store.KindDocument || root == 0 || r.ID == root {
		return true
	}
	p, _ := r.Fields[store.ParentField].(int64)
	_, held := db.records[store.KindDocument][p]
	return p != 0 && (p == root || held)
}

// versions returns the versions the copy holds of recs' records (absent: not held).
func (db *DB) versions(recs []*store.Record) map[store.RecordKey]int64 {
	out := map[store.RecordKey]int64{}
	for _, r := range recs {
		if cur, ok := db.records[r.Kind][r.ID]; ok {
			out[store.RecordKey{Kind: r.Kind, ID: r.ID}] = cur.Version
		}
	}
	return out
}

// logPulled adds a "pulled" change for each record of recs the copy took from the source
// (it holds the source's version now and did not before), naming the source's writer,
// version and time, so that a TUI or a watch on the copy hears of a sync's changes.
func (db *DB) logPulled(recs []*store.Record, before map[store.RecordKey]int64) {
	after := db.versions(recs)
	for _, r := range recs {
		k := store.RecordKey{Kind: r.Kind, ID: r.ID}
		now, held := after[k]
		if was, had := before[k]; !held || now != r.Version || (had && was == r.Version) {
			continue
		}
		db.appendChange(store.Change{Event: store.EventPulled, Kind: r.Kind, RecordID: r.ID, Version: r.Version,
			Actor: r.UpdatedBy, Fields: []string{}, At: r.UpdatedAt})
	}
}

// refreshGoneConflict gives a conflict that found its record gone from the source the
// record as the source has it again (restored), so that it can be resolved against it.
func (db *DB) refreshGoneConflict(wc *copyState, r *store.Record) {
	k := store.RecordKey{Kind: r.Kind, ID: r.ID}
	c, ok := wc.conflicts[k]
	if !ok || c.Theirs != nil || c.Op == store.CopyCreate {
		return
	}
	c.Theirs, c.TheirsVersion, c.Reason = db.Registry().CopyValues(r.Kind, r.Fields), r.Version, store.GoneConflictRestored
	wc.conflicts[k] = c
}

// movePosition moves the copy's feed position forward to at, or takes at's mark for the
// position the copy is at when it has none.
func (c *copyState) movePosition(at store.FeedPoint) {
	if at.ID > c.meta.Position || (at.ID != 0 && at.ID == c.meta.Position && c.meta.Mark == "") {
		c.meta.Position, c.meta.Mark = at.ID, at.Mark
	}
}

// putSource writes r exactly as the source has it, as the record and as its base, or holds
// it back (Stale) when its parent is not in the copy yet, its parent would close a loop with
// a local move, or a local record holds the key of one of its unique fields. ErrSourceBehind when the source has it at a
// version below the copy's base.
func (db *DB) putSource(wc *copyState, r *store.Record) error {
	k := store.RecordKey{Kind: r.Kind, ID: r.ID}
	rec := &store.Record{Kind: r.Kind, ID: r.ID, Version: r.Version, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy, Fields: store.Values{}}
	for _, f := range db.Registry().Fields(r.Kind) {
		v, ok := r.Fields[f.Name]
		if !ok {
			v = f.Zero()
		}
		rec.Fields[f.Name] = v
	}
	rec.Fields = rec.Fields.Clone()
	if r.Kind == store.KindDocument && r.ID == wc.meta.Subtree {
		rec.Fields[store.ParentField] = nil // the subtree's root: its parent is not in the copy
	}
	if base, ok := wc.base[k]; ok && r.Version < base {
		// Versions on the source only grow (a restore too takes the next one): the source
		// lost writes this copy has seen.
		return &store.Error{Code: store.EINVALID, Err: store.ErrSourceBehind, Message: fmt.Sprintf(
			"the source has %s %d at version %d, but this copy took version %d from it", r.Kind, r.ID, r.Version, base)}
	}
	if p, ok := rec.Fields[store.ParentField].(int64); ok && db.Registry().Tree(r.Kind) {
		_, held := db.records[r.Kind][p]
		if !held || !wc.quiet && store.CheckMoveCycle(r.ID, p, db.ancestors(r.Kind, p)) != nil {
			// The parent has not come yet (ids do not follow the tree), or a local move of an
			// ancestor waits and the source's parent would close a loop with it here.
			wc.stale[k] = true
			return nil
		}
	}
	for _, f := range db.Registry().UniqueFields(r.Kind) {
		if v, _ := rec.Fields[f.Name].(string); db.uniqueHolder(r.Kind, r.ID, f.Name, v) != 0 {
			wc.stale[k] = true // a local record holds the key until that is settled
			return nil
		}
	}
	delete(wc.stale, k)
	db.records[r.Kind][r.ID] = rec
	wc.base[k] = r.Version
	return nil
}

// ApplyGone removes records the source deleted (store.WorkingCopy).
func (db *DB) ApplyGone(ctx context.Context, kind store.Kind, ids []int64, at store.FeedPoint) (int, error) {
	if err := db.checkKind(kind); err != nil {
		return 0, err
	}
	removed := 0
	err := db.copyTx(ctx, "ApplyGone", func(wc *copyState) error {
		left := slices.Clone(ids)
		// Children before parents: a document goes once nothing in the copy sits under it.
		for moved := true; moved && len(left) > 0; {
			moved = false
			var next []int64
			for _, id := range left {
				if wc.busy(store.RecordKey{Kind: kind, ID: id}) {
					continue // its push meets the delete: a conflict
				}
				if db.children(kind, id) > 0 {
					next = append(next, id)
					continue
				}
				removed += db.removeLocal(wc, kind, id)
				moved = true
			}
			left = next
		}
		for _, id := range left {
			// Documents stay under it: the sync reads it again and removes it once they
			// are settled.
			wc.stale[store.RecordKey{Kind: kind, ID: id}] = true
		}
		wc.movePosition(at)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}

// children returns how many records the copy holds under record id of a tree kind (0 for
// another kind).
func (db *DB) children(kind store.Kind, id int64) int {
	n := 0
	for _, d := range db.records[kind] {
		if p, ok := d.Fields[store.ParentField].(int64); ok && p == id {
			n++
		}
	}
	return n
}

// removeLocal removes a record from the copy with everything kept about it, queueing
// nothing: the source removed it. It returns 1 when the copy held the record.
func (db *DB) removeLocal(wc *copyState, kind store.Kind, id int64) int {
	wc.forget(store.RecordKey{Kind: kind, ID: id})
	if _, ok := db.records[kind][id]; !ok {
		return 0
	}
	delete(db.records[kind], id)
	return 1
}

// DropRecord removes a record the person let the source's delete have (store.WorkingCopy).
func (db *DB) DropRecord(ctx context.Context, kind store.Kind, id int64) error {
	if err := db.checkKind(kind); err != nil {
		return err
	}
	return db.copyTx(ctx, "DropRecord", func(wc *copyState) error {
		if n := db.children(kind, id); n > 0 {
			return store.DropWithChildren(id, n)
		}
		db.removeLocal(wc, kind, id)
		return nil
	})
}

// Stale returns the source's records the copy could not write yet (store.WorkingCopy).
func (db *DB) Stale(ctx context.Context) (map[store.Kind][]int64, error) {
	out := map[store.Kind][]int64{}
	err := db.copyRead(ctx, "Stale", func(wc *copyState) {
		for k := range wc.stale {
			out[k.Kind] = append(out[k.Kind], k.ID)
		}
		for _, ids := range out {
			slices.Sort(ids)
		}
	})
	return out, err
}

// Outbox returns the entries waiting to be pushed (store.WorkingCopy).
func (db *DB) Outbox(ctx context.Context, limit int) ([]store.OutboxEntry, error) {
	var out []store.OutboxEntry
	err := db.copyRead(ctx, "Outbox", func(wc *copyState) {
		for _, e := range wc.outbox {
			if limit > 0 && len(out) == limit {
				break
			}
			e.Before, e.After = e.Before.Clone(), e.After.Clone()
			out = append(out, e)
		}
	})
	return out, err
}

// AckEntry removes an entry that is now on the source (store.WorkingCopy).
func (db *DB) AckEntry(ctx context.Context, seq int64, rec *store.Record, rebase bool) error {
	return db.AckEntries(ctx, []store.Ack{{Seq: seq, Record: rec, Rebase: rebase}})
}

// AckEntries is AckEntry for several entries, in order, in one transaction
// (store.WorkingCopy).
func (db *DB) AckEntries(ctx context.Context, acks []store.Ack) error {
	return db.copyTx(ctx, "AckEntries", func(wc *copyState) error {
		for _, a := range acks {
			if err := db.ackEntry(wc, a.Seq, a.Record, a.Rebase); err != nil {
				return err
			}
		}
		return nil
	})
}

func (db *DB) ackEntry(wc *copyState, seq int64, rec *store.Record, rebase bool) error {
	i := wc.entry(seq)
	if i < 0 {
		return store.Errorf(store.ENOTFOUND, "outbox entry %d is gone", seq)
	}
	e := wc.outbox[i]
	wc.outbox = slices.Delete(wc.outbox, i, i+1)
	k := store.RecordKey{Kind: e.Kind, ID: e.ID}
	if e.Op == store.CopyDelete {
		// Gone on both sides: unless restored and deleted again since (newer entries keep
		// the base), the copy forgets the record.
		if !wc.busyEntries(k) {
			wc.forget(k)
		}
		return nil
	}
	if e.Op == store.CopyCreate && rec.ID != e.ID {
		// The source gave the record its id: what was queued for the local id follows it.
		db.remapLocal(wc, e.Kind, e.ID, rec.ID)
		for j := range wc.outbox {
			if o := &wc.outbox[j]; o.Kind == e.Kind && o.ID == e.ID {
				o.ID = rec.ID
				if o.BaseVersion == 0 {
					o.BaseVersion = rec.Version
				}
			}
		}
		if c, ok := wc.conflicts[k]; ok {
			delete(wc.conflicts, k)
			c.ID = rec.ID
			wc.conflicts[store.RecordKey{Kind: e.Kind, ID: rec.ID}] = c
		}
		k.ID = rec.ID
		if err := db.putSource(wc, rec); err != nil {
			return err
		}
	} else if rebase {
		for j := range wc.outbox {
			if o := &wc.outbox[j]; o.Kind == k.Kind && o.ID == k.ID && o.BaseVersion == e.BaseVersion {
				o.BaseVersion = rec.Version
			}
		}
	}
	switch {
	case !wc.busy(k):
		return db.putSource(wc, rec)
	case rebase && wc.base[k] == e.BaseVersion:
		// Later local edits were made on top of this one, which is now rec.Version.
		if _, ok := wc.base[k]; ok {
			wc.base[k] = rec.Version
		}
	}
	return nil
}

// busyEntries reports whether record k has outbox entries.
func (c *copyState) busyEntries(k store.RecordKey) bool {
	return slices.ContainsFunc(c.outbox, func(e store.OutboxEntry) bool { return e.Kind == k.Kind && e.ID == k.ID })
}

// remapLocal gives the record created in the copy as local id the source's id: the local
// record goes (the caller writes the source's) unless it has children and the source's is
// not here yet, in which case it moves to the new id; its children, and the parent ids in
// queued entries and conflicts, follow.
func (db *DB) remapLocal(wc *copyState, kind store.Kind, local, id int64) {
	recs := db.records[kind]
	_, have := recs[id]
	children := db.children(kind, local) > 0
	if r, ok := recs[local]; ok && !have && children {
		r = r.Clone()
		r.ID = id
		recs[id] = r
	}
	delete(recs, local)
	if !db.Registry().Tree(kind) {
		return
	}
	p := store.ParentField
	follow := func(vals store.Values) store.Values {
		if v, ok := vals[p].(int64); ok && v == local {
			vals = vals.Clone()
			vals[p] = id
		}
		return vals
	}
	for cid, c := range recs {
		if v, ok := c.Fields[p].(int64); ok && v == local {
			c = c.Clone()
			c.Fields[p] = id
			recs[cid] = c
		}
	}
	for j := range wc.outbox {
		if o := &wc.outbox[j]; o.Kind == kind {
			o.Before, o.After = follow(o.Before), follow(o.After)
		}
	}
	for ck, c := range wc.conflicts {
		if ck.Kind == kind {
			c.Base, c.Mine = follow(c.Base), follow(c.Mine)
			wc.conflicts[ck] = c
		}
	}
}

// QueueConflict replaces an outbox entry by a conflict (store.WorkingCopy).
func (db *DB) QueueConflict(ctx context.Context, seq int64, c store.CopyConflict) error {
	return db.copyTx(ctx, "QueueConflict", func(wc *copyState) error {
		i := wc.entry(seq)
		if i < 0 {
			return store.Errorf(store.ENOTFOUND, "outbox entry %d is gone", seq)
		}
		wc.outbox = slices.Delete(wc.outbox, i, i+1)
		if old, ok := wc.conflicts[store.RecordKey{Kind: c.Kind, ID: c.ID}]; ok {
			c = store.JoinConflict(old, c)
		}
		db.putConflict(wc, c)
		return nil
	})
}

// putConflict keeps c as the open conflict of its record, with its values cut to the copy
// columns (as a real copy stores them).
func (db *DB) putConflict(wc *copyState, c store.CopyConflict) {
	c.Base, c.Mine, c.Theirs = db.Registry().CopyValues(c.Kind, c.Base), db.Registry().CopyValues(c.Kind, c.Mine), db.Registry().CopyValues(c.Kind, c.Theirs)
	if c.Base == nil {
		c.Base = store.Values{}
	}
	if c.Mine == nil {
		c.Mine = store.Values{}
	}
	c.Fields = slices.Clone(c.Fields)
	if c.Fields == nil {
		c.Fields = []string{}
	}
	if c.At.IsZero() {
		c.At = db.stamp()
	}
	c.LocalVersion = 0
	wc.conflicts[store.RecordKey{Kind: c.Kind, ID: c.ID}] = c
}

// Conflicts returns the open conflicts (store.WorkingCopy).
func (db *DB) Conflicts(ctx context.Context) ([]store.CopyConflict, error) {
	var out []store.CopyConflict
	err := db.copyRead(ctx, "Conflicts", func(wc *copyState) {
		for _, k := range slices.SortedFunc(maps.Keys(wc.conflicts), compareKeys) {
			out = append(out, db.conflictOut(wc.conflicts[k]))
		}
	})
	return out, err
}

func compareKeys(a, b store.RecordKey) int {
	if a.Kind != b.Kind {
		if a.Kind < b.Kind {
			return -1
		}
		return 1
	}
	return int(min(max(a.ID-b.ID, -1), 1))
}

// conflictOut returns a copy of c for a caller, with the version its record has here.
func (db *DB) conflictOut(c store.CopyConflict) store.CopyConflict {
	c.Fields = slices.Clone(c.Fields)
	c.Base, c.Mine = c.Base.Clone(), c.Mine.Clone()
	if c.Theirs != nil {
		c.Theirs = c.Theirs.Clone()
	}
	if r, ok := db.records[c.Kind][c.ID]; ok {
		c.LocalVersion = r.Version
	}
	return c
}

// takeConflict removes the conflict of kind id from the queue when check accepts it: the
// first step of answering one, whatever the answer.
func (db *DB) takeConflict(wc *copyState, kind store.Kind, id int64, check func(store.CopyConflict) error) (store.CopyConflict, error) {
	k := store.RecordKey{Kind: kind, ID: id}
	c, ok := wc.conflicts[k]
	if !ok {
		return c, store.NoConflict(kind, id)
	}
	if err := check(c); err != nil {
		return c, err
	}
	delete(wc.conflicts, k)
	return c, nil
}

// ResolveConflict closes a conflict with the values a person chose (store.WorkingCopy).
func (db *DB) ResolveConflict(ctx context.Context, kind store.Kind, id int64, vals store.Values) error {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return err
	}
	return db.copyTx(ctx, "ResolveConflict", func(wc *copyState) error {
		c, err := db.takeConflict(wc, kind, id, func(c store.CopyConflict) error {
			if c.Gone() {
				return store.GoneFromSource(kind, id)
			}
			if c.Op == store.CopyDelete {
				return store.ResolveDeleteWhole(kind, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		now := db.stamp()
		if err := db.writeLocal(kind, id, vals, actor.Name, now); err != nil {
			return err
		}
		if c.Theirs != nil {
			wc.base[store.RecordKey{Kind: kind, ID: id}] = c.TheirsVersion
		}
		for _, e := range db.Registry().ResolutionEntries(c, vals) {
			e.Actor, e.At = actor.Name, now
			wc.queue(e, store.ResolveKey)
		}
		return nil
	})
}

// writeLocal writes vals (copy columns) into the copy's record kind id as a write of actor at
// now, queueing nothing: the caller queues what the write means for the source.
func (db *DB) writeLocal(kind store.Kind, id int64, vals store.Values, actor string, now time.Time) error {
	cur, ok := db.records[kind][id]
	if !ok {
		return nil
	}
	for _, f := range db.Registry().UniqueFields(kind) {
		if v, ok := vals[f.Name]; ok {
			s, _ := v.(string)
			if err := db.checkUnique(kind, id, f.Name, s); err != nil {
				return err
			}
		}
	}
	r := cur.Clone()
	maps.Copy(r.Fields, db.Registry().CopyValues(kind, vals))
	r.Version++
	r.UpdatedAt, r.UpdatedBy = now, actor
	db.records[kind][id] = r
	return nil
}

// The local writes' side: what a save, a move, a create, a delete and a restore on a
// working copy add to its outbox, called under the lock by the store's own write paths.

// queueWrite queues the local write that turned old into cur (old nil: a create), as the
// SQLite copy's triggers do: a create with every copy column; a save when an editor or shared
// field changed, with them all before and after; a move when the parent changed. It does
// nothing on a store that is not a working copy.
func (db *DB) queueWrite(old, cur *store.Record) {
	wc := db.wc
	if wc == nil {
		return
	}
	k := store.RecordKey{Kind: cur.Kind, ID: cur.ID}
	e := store.OutboxEntry{Kind: cur.Kind, ID: cur.ID, Actor: cur.UpdatedBy, At: cur.UpdatedAt}
	if old == nil {
		e.Op, e.Before, e.After = store.CopyCreate, store.Values{}, db.Registry().RecordCopyValues(cur)
		wc.queue(e, store.OriginKey)
		return
	}
	e.BaseVersion = wc.base[k]
	before, after := store.Values{}, store.Values{}
	changed := false
	for _, f := range db.Registry().CopyFields(cur.Kind) {
		before[f.Name], after[f.Name] = old.Fields[f.Name], cur.Fields[f.Name]
		changed = changed || !store.Equal(old.Fields[f.Name], cur.Fields[f.Name])
	}
	if changed {
		s := e
		s.Op, s.Before, s.After = store.CopySave, before.Clone(), after.Clone()
		wc.queue(s, store.OriginKey)
	}
	p := store.ParentField
	if _, err := db.Registry().Field(cur.Kind, p); err == nil && !store.Equal(old.Fields[p], cur.Fields[p]) {
		e.Op, e.Before, e.After = store.CopyMove, store.Values{p: old.Fields[p]}, store.Values{p: cur.Fields[p]}
		wc.queue(e, store.OriginKey)
	}
}
