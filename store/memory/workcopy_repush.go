package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Repush takes the copy onto its source as the source is now, after the source went back
// in time (store.WorkingCopy).
func (db *DB) Repush(ctx context.Context, recs []*store.Record, at store.FeedPoint) (queued, conflicts int, err error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return 0, 0, err
	}
	err = db.copyTx(ctx, "Repush", func(wc *copyState) error {
		theirs := make(map[store.RecordKey]*store.Record, len(recs))
		for _, r := range recs {
			theirs[store.RecordKey{Kind: r.Kind, ID: r.ID}] = r
		}
		cs := slices.Collect(maps.Values(wc.conflicts))
		st := store.LocalStateOf(cs, slices.Clone(wc.outbox))
		before := db.versions(recs)
		done := map[store.RecordKey]bool{}
		now := db.stamp()
		for _, kind := range db.repushOrder() {
			for _, id := range slices.Sorted(maps.Keys(db.records[kind])) {
				k := store.RecordKey{Kind: kind, ID: id}
				if st.Created[k] {
					continue // made here: its create is pushed as it is
				}
				done[k] = true
				q, c, err := db.repushRecord(wc, k, st.Base[k], theirs[k], actor.Name, now)
				if err != nil {
					return fmt.Errorf("repush %s %d: %w", kind, id, err)
				}
				queued, conflicts = queued+q, conflicts+c
			}
		}
		for k, e := range st.Deletes {
			done[k] = true
			conflicts += db.repushDelete(wc, e, theirs[k], now)
		}
		var rest []*store.Record
		for _, r := range recs {
			if !done[store.RecordKey{Kind: r.Kind, ID: r.ID}] {
				rest = append(rest, r)
			}
		}
		if err := db.applyRecords(wc, rest); err != nil {
			return err
		}
		db.logPulled(rest, before)
		wc.meta.Position, wc.meta.Mark = at.ID, at.Mark
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	return queued, conflicts, nil
}

// repushOrder returns the kinds in the order Repush sets their records against the
// source's: tree kinds first (as the SQLite copy takes documents before products).
func (db *DB) repushOrder() []store.Kind {
	var trees, rest []store.Kind
	for _, k := range db.Registry().Kinds() {
		if db.Registry().Tree(k) {
			trees = append(trees, k)
		} else {
			rest = append(rest, k)
		}
	}
	return append(trees, rest...)
}

// repushRecord sets the copy's record k against the source's record of its id (theirs, nil
// when the source has none), base being what its local edits were made on (nil: none). It
// returns whether it queued the record's differences (q) or made it a conflict (c).
func (db *DB) repushRecord(wc *copyState, k store.RecordKey, base store.Values, theirs *store.Record, actor string, now time.Time) (q, c int, err error) {
	mine := db.Registry().RecordCopyValues(db.records[k.Kind][k.ID])
	b := mine.Clone()
	maps.Copy(b, base)
	wc.forget(k)
	if theirs == nil {
		db.putConflict(wc, store.CopyConflict{Op: store.CopyCreate, Kind: k.Kind, ID: k.ID,
			Reason: store.RepushLostReason, Base: b, Mine: mine, Actor: actor})
		return 0, 1, nil
	}
	if k.Kind == store.KindDocument && k.ID == wc.meta.Subtree {
		// The subtree's root: the copy holds it without its parent, which is no difference.
		r := theirs.Clone()
		r.Fields[store.ParentField] = nil
		theirs = r
	}
	changed, conflict := db.Registry().RepushFields(k.Kind, b, mine, theirs.Fields)
	if err := db.putSource(wc, theirs); err != nil {
		return 0, 0, err
	}
	if len(changed) == 0 && len(conflict) == 0 {
		return 0, 0, nil
	}
	write := store.Values{}
	for _, name := range append(changed, conflict...) {
		write[name] = mine[name]
	}
	if len(conflict) > 0 {
		// The local values stay, outside the outbox, until a person answers.
		if err := db.writeLocal(k.Kind, k.ID, write, actor, now); err != nil {
			return 0, 0, err
		}
		db.putConflict(wc, store.CopyConflict{Op: store.CopySave, Kind: k.Kind, ID: k.ID, Reason: store.RepushReason,
			Fields: conflict, Base: b, Mine: mine, Theirs: theirs.Fields, BaseVersion: theirs.Version, TheirsVersion: theirs.Version, Actor: actor})
		return 0, 1, nil
	}
	// Local edits on values the source still has: queued on the source's version, as a
	// save here would be.
	return 1, 0, db.saveLocal(wc, k, write, actor, now)
}

// saveLocal writes vals into record k as a local save of actor would, queueing it as one
// (a save and a move).
func (db *DB) saveLocal(wc *copyState, k store.RecordKey, vals store.Values, actor string, now time.Time) error {
	old := db.records[k.Kind][k.ID]
	if err := db.writeLocal(k.Kind, k.ID, vals, actor, now); err != nil {
		return err
	}
	db.queueWrite(old, db.records[k.Kind][k.ID])
	return nil
}

// repushDelete sets the local delete e against the source's record of its id (theirs, nil
// when the source has none): gone on both sides, it is dropped; on a source that has the
// record as the delete found it, it is queued again on the source's version; on one that has
// it otherwise, it is a conflict (store.DeletedHere). It returns 1 for a conflict.
func (db *DB) repushDelete(wc *copyState, e *store.OutboxEntry, theirs *store.Record, now time.Time) int {
	wc.forget(store.RecordKey{Kind: e.Kind, ID: e.ID})
	if theirs == nil {
		return 0
	}
	if !db.Registry().DeleteStillHolds(e.Kind, e.Before, theirs.Fields) {
		db.putConflict(wc, store.CopyConflict{Op: store.CopyDelete, Kind: e.Kind, ID: e.ID, Reason: store.DeletedHere,
			Base: e.Before, Mine: e.Before, Theirs: theirs.Fields, BaseVersion: theirs.Version, TheirsVersion: theirs.Version, Actor: e.Actor, At: e.At})
		return 1
	}
	wc.queue(store.OutboxEntry{Op: store.CopyDelete, Kind: e.Kind, ID: e.ID, BaseVersion: theirs.Version,
		Before: db.Registry().CopyValues(e.Kind, e.Before), After: store.Values{}, Actor: e.Actor, At: now}, store.OriginKey)
	return 0
}
