package memory

import (
	"context"
	"slices"

	"github.com/tandem-editor/tandem/store"
)

// TakeSchema makes next, the source's schema at its version, the copy's own
// (store.WorkingCopy): the records change as ApplySchema changes them, with nothing queued
// as a local change, and the outbox and conflicts keep their values, a renamed field's under
// its new name.
func (db *DB) TakeSchema(ctx context.Context, next *store.Registry) (*store.SchemaDiff, error) {
	if next == nil || next.Legacy() {
		return nil, store.Errorf(store.EINVALID, "take the source's schema: want a schema with kinds")
	}
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		actor = store.Actor{Name: "tandem", Role: store.RoleSystem}
	}
	var diff *store.SchemaDiff
	err = db.copyTx(ctx, "TakeSchema", func(wc *copyState) error {
		cur := db.Registry()
		if cur.Version() >= next.Version() {
			return nil
		}
		d, err := store.DiffSchema(cur, next)
		if err != nil {
			return err
		}
		if err := store.RefuseUnsupported(d); err != nil {
			return err
		}
		for kind, names := range d.Renames() {
			for i := range wc.outbox {
				if e := &wc.outbox[i]; e.Kind == kind {
					e.Before, e.After = e.Before.Clone(), e.After.Clone()
					e.Before.Rename(names)
					e.After.Rename(names)
				}
			}
			for k, c := range wc.conflicts {
				if k.Kind != kind {
					continue
				}
				c.Base, c.Mine = c.Base.Clone(), c.Mine.Clone()
				if c.Theirs != nil {
					c.Theirs = c.Theirs.Clone()
				}
				c.Base.Rename(names)
				c.Mine.Rename(names)
				c.Theirs.Rename(names)
				c.Fields = slices.Clone(c.Fields)
				for i, f := range c.Fields {
					if to, ok := names[f]; ok {
						c.Fields[i] = to
					}
				}
				wc.conflicts[k] = c
			}
		}
		wc.meta.Kinds = store.CopyKindsAfter(cur, next, wc.meta.Kinds)
		if err := db.changeSchema(d, next.Version(), actor); err != nil {
			return err
		}
		diff = d
		return nil
	})
	return diff, err
}

// DropEntry removes outbox entry seq (store.WorkingCopy).
func (db *DB) DropEntry(ctx context.Context, seq int64) error {
	return db.copyTx(ctx, "DropEntry", func(wc *copyState) error {
		i := wc.entry(seq)
		if i < 0 {
			return store.Errorf(store.ENOTFOUND, "outbox entry %d is gone", seq)
		}
		e := wc.outbox[i]
		wc.outbox = slices.Delete(wc.outbox, i, i+1)
		k := store.RecordKey{Kind: e.Kind, ID: e.ID}
		if !wc.busy(k) && db.Registry().Has(e.Kind) {
			wc.stale[k] = true
		}
		return nil
	})
}
