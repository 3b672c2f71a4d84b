package memory

import (
	"context"
	"slices"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Deletes and restores on a working copy: a local delete is done as on any store and, in
// the same step, queued in the outbox with the base version and the values it removed; a
// record the source never had (a local create not pushed yet) takes its queued changes with
// it. A restore brings back a record whose delete has not been pushed yet, dropping that
// delete; one the source deleted is restored there, not here.

// queueDelete queues the local delete of rec, or, for a record the source never had (a
// create not pushed yet), drops what the copy queued for it. EINVALID for a record with an
// open conflict. Nothing on a store that is not a working copy.
func (db *DB) queueDelete(rec *store.Record, actor store.Actor, now time.Time) error {
	wc := db.wc
	if wc == nil {
		return nil
	}
	k := store.RecordKey{Kind: rec.Kind, ID: rec.ID}
	base, ok := wc.base[k]
	if !ok {
		wc.forget(k) // created here and not on the source yet: nothing to delete there
		return nil
	}
	if c, ok := wc.conflicts[k]; ok {
		return store.CopyDeleteInConflict(rec.Kind, rec.ID, c.Reason)
	}
	wc.queue(store.OutboxEntry{Op: store.CopyDelete, Kind: rec.Kind, ID: rec.ID, BaseVersion: base,
		Before: db.Registry().RecordCopyValues(rec), After: store.Values{}, Actor: actor.Name, At: now}, store.OriginKey)
	return nil
}

// pendingDelete decides a restore of kind id on a working copy before anything is written:
// it returns the seq of the record's delete not yet pushed, which the restore cancels (0 for
// a record created here, whose restore queues its create again, or on a store that is no
// copy). A record deleted on the source, or whose delete reached it, is refused.
func (db *DB) pendingDelete(kind store.Kind, id int64, exists bool) (int64, error) {
	if db.wc == nil || exists || id >= store.LocalIDBase {
		return 0, nil
	}
	for _, e := range db.wc.outbox {
		if e.Kind == kind && e.ID == id && e.Op == store.CopyDelete {
			return e.Seq, nil
		}
	}
	return 0, store.NotDeletedInCopy(kind, id)
}

// cancelDelete drops the pending delete seq of kind id, which a restore just brought back;
// the next sync reads the record from the source again (Stale).
func (db *DB) cancelDelete(kind store.Kind, id, seq int64) {
	if i := db.wc.entry(seq); i >= 0 {
		db.wc.outbox = slices.Delete(db.wc.outbox, i, i+1)
	}
	db.wc.stale[store.RecordKey{Kind: kind, ID: id}] = true
}

// ResolveDelete closes the conflict of a local delete (store.WorkingCopy).
func (db *DB) ResolveDelete(ctx context.Context, kind store.Kind, id int64, del bool) error {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return err
	}
	return db.copyTx(ctx, "ResolveDelete", func(wc *copyState) error {
		c, err := db.takeConflict(wc, kind, id, func(c store.CopyConflict) error {
			if c.Op != store.CopyDelete {
				return store.NotDeleteConflict(kind, id, c.Reason)
			}
			return nil
		})
		if err != nil {
			return err
		}
		k := store.RecordKey{Kind: kind, ID: id}
		if !del {
			// The source's record wins: it comes back whole at the next sync.
			wc.dropEntries(k)
			wc.stale[k] = true
			return nil
		}
		wc.queue(store.OutboxEntry{Op: store.CopyDelete, Kind: kind, ID: id, BaseVersion: c.TheirsVersion,
			Before: db.Registry().CopyValues(kind, c.Theirs), After: store.Values{}, Actor: actor.Name, At: db.stamp()}, store.OriginKey)
		return nil
	})
}

// SetSource records where the source is found now (store.WorkingCopy).
func (db *DB) SetSource(ctx context.Context, source string) error {
	return db.copyTx(ctx, "SetSource", func(wc *copyState) error {
		wc.meta.Source = source
		return nil
	})
}

// MarkSynced records the end of a sync that reached the source (store.WorkingCopy).
func (db *DB) MarkSynced(ctx context.Context, at time.Time) error {
	return db.copyTx(ctx, "MarkSynced", func(wc *copyState) error {
		wc.meta.SyncedAt = at
		return nil
	})
}
