package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func mustDelete(t *testing.T, s store.Store, a store.Actor, kind store.Kind, id int64, d store.Delete) *store.DeleteResult {
	t.Helper()
	res, err := s.DeleteRecord(actx(t, a), kind, id, d)
	if err != nil {
		t.Fatalf("%s deletes %s %d: %v", a.Name, kind, id, err)
	}
	return res
}

func mustRestore(t *testing.T, s store.Store, a store.Actor, kind store.Kind, id int64) *store.RestoreResult {
	t.Helper()
	res, err := s.RestoreRecord(actx(t, a), kind, id, store.Restore{})
	if err != nil {
		t.Fatalf("%s restores %s %d: %v", a.Name, kind, id, err)
	}
	return res
}

func requireGone(t *testing.T, s store.Store, kind store.Kind, id int64) {
	t.Helper()
	_, err := s.FindRecord(t.Context(), kind, id)
	requireCode(t, err, store.ENOTFOUND)
}

func deletedIDs(res *store.DeleteResult) []int64 {
	var out []int64
	for _, d := range res.Deleted {
		out = append(out, d.ID)
	}
	return out
}

func testDeleteRecord(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "DEL-1")
		other := mustCreateProduct(t, s, "DEL-2")
		// A system write between the last history version and the delete: the tombstone
		// must hold its value too.
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"checksum": "abc"}})
		from := mustLastChangeID(t, s)
		res := mustDelete(t, s, actBob, store.KindProduct, p.ID, store.Delete{ExpectVersion: 2})
		if got := res.Deleted; len(got) != 1 || got[0].ID != p.ID || got[0].Version != 3 || got[0].Title != "Product DEL-1" {
			t.Fatalf("deleted = %+v, want product %d at version 3", got, p.ID)
		}
		requireGone(t, s, store.KindProduct, p.ID)
		mustFind(t, s, store.KindProduct, other.ID)
		if n, err := s.CountRecords(t.Context(), store.KindProduct); err != nil || n != 1 {
			t.Errorf("count = %d, %v; want 1", n, err)
		}
		if rs, err := s.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct}); err != nil || len(rs) != 1 || rs[0].ID != other.ID {
			t.Errorf("list after delete = %v, %v; want only %d", rs, err, other.ID)
		}
		cs := mustChanges(t, s, from)
		if len(cs) != 1 || cs[0].Event != store.EventDeleted || cs[0].RecordID != p.ID || cs[0].Version != 3 || cs[0].Actor != "bob" || !cs[0].History {
			t.Fatalf("changes = %+v, want one deleted change of v3 by bob with history", cs)
		}
		hs := mustHistory(t, s, store.KindProduct, p.ID)
		if got := versionsOf(hs); !slices.Equal(got, []int64{3, 1}) {
			t.Fatalf("history versions = %v, want [3 1]", got)
		}
		tomb := hs[0]
		if tomb.Event != store.EventDeleted || tomb.Actor != "bob" || tomb.Snapshot["checksum"] != "abc" || tomb.Snapshot["sku"] != "DEL-1" {
			t.Errorf("tombstone = %+v, want event deleted by bob holding checksum abc and sku DEL-1", tomb)
		}
		if hs[1].Event != "" {
			t.Errorf("create's history event = %q, want \"\"", hs[1].Event)
		}
		if v, err := s.FindVersion(t.Context(), store.KindProduct, p.ID, 3); err != nil || v.Event != store.EventDeleted {
			t.Errorf("FindVersion(3) = %+v, %v; want the tombstone", v, err)
		}
		// The sku is free again.
		mustCreateProduct(t, s, "DEL-1")
	})
	t.Run("ErrConflict", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "DEL-1")
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "Renamed"}})
		from := mustLastChangeID(t, s)
		_, err := s.DeleteRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Delete{ExpectVersion: 1})
		ce := asConflict(t, err)
		if ce.Current.Version != 2 || ce.Current.Fields["name"] != "Renamed" || !slices.Equal(ce.Actors(), []string{"bob"}) {
			t.Errorf("conflict = %v (current v%d), want bob's v2", ce, ce.Current.Version)
		}
		requireNothingWritten(t, s, store.KindProduct, p.ID, 2, from)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := fresh(t, open)
		_, err := s.DeleteRecord(actx(t, actAlice), store.KindProduct, 99, store.Delete{ExpectVersion: 1})
		requireCode(t, err, store.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "DEL-1")
		_, err := s.DeleteRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Delete{})
		requireCode(t, err, store.EINVALID)
		_, err = s.DeleteRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Delete{ExpectVersion: 1, Subtree: true})
		requireCode(t, err, store.EINVALID)
		mustFind(t, s, store.KindProduct, p.ID)
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "DEL-1")
		_, err := s.DeleteRecord(actx(t, actWorker), store.KindProduct, p.ID, store.Delete{ExpectVersion: 1})
		requireCode(t, err, store.EFORBIDDEN)
		requireMessage(t, err, "editor")
		mustFind(t, s, store.KindProduct, p.ID)
	})
	t.Run("ErrLease", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "DEL-1")
		// A lease on any group blocks: the delete writes them all.
		l := mustAcquire(t, s, actBob, store.KindProduct, p.ID, store.GroupSystem, time.Minute)
		from := mustLastChangeID(t, s)
		_, err := s.DeleteRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Delete{ExpectVersion: 1})
		if le := asLeaseError(t, err); le.Lease.Holder != "bob" {
			t.Errorf("lease error names %q, want bob", le.Lease.Holder)
		}
		// Bob's own name is not enough either: the token binds.
		_, err = s.DeleteRecord(actx(t, actBob), store.KindProduct, p.ID, store.Delete{ExpectVersion: 1})
		requireCode(t, err, store.ELEASE)
		requireNothingWritten(t, s, store.KindProduct, p.ID, 1, from)
		mustDelete(t, s, actBob, store.KindProduct, p.ID, store.Delete{ExpectVersion: 1, LeaseToken: l.Token})
		requireGone(t, s, store.KindProduct, p.ID)
	})
	t.Run("Children", func(t *testing.T) {
		s := fresh(t, open)
		root := mustCreateDoc(t, s, "root", nil)
		a := mustCreateDoc(t, s, "a", &root.ID)
		b := mustCreateDoc(t, s, "b", &a.ID)
		c := mustCreateDoc(t, s, "c", &root.ID)
		keep := mustCreateDoc(t, s, "keep", nil)
		from := mustLastChangeID(t, s)
		_, err := s.DeleteRecord(actx(t, actAlice), store.KindDocument, root.ID, store.Delete{ExpectVersion: 1})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "2 child", "delete the subtree with it")
		if ws := store.WaysOf(err); len(ws) != 1 || ws[0] != store.WaySubtree {
			t.Errorf("refusal %q names ways %q, want %q", err, ws, store.WaySubtree)
		}
		requireNothingWritten(t, s, store.KindDocument, root.ID, 1, from)

		// A lease on a document below blocks the subtree.
		l := mustAcquire(t, s, actBob, store.KindDocument, b.ID, store.GroupEditor, time.Minute)
		from = mustLastChangeID(t, s)
		_, err = s.DeleteRecord(actx(t, actAlice), store.KindDocument, root.ID, store.Delete{ExpectVersion: 1, Subtree: true})
		requireCode(t, err, store.ELEASE)
		requireNothingWritten(t, s, store.KindDocument, b.ID, 1, from)
		if _, err := s.ReleaseLease(actx(t, actBob), l.Token); err != nil {
			t.Fatal(err)
		}
		from = mustLastChangeID(t, s)

		res := mustDelete(t, s, actAlice, store.KindDocument, root.ID, store.Delete{ExpectVersion: 1, Subtree: true})
		if got, want := deletedIDs(res), []int64{root.ID, b.ID, a.ID, c.ID}; !slices.Equal(got, want) {
			t.Errorf("deleted = %v, want %v (root, then deepest first)", got, want)
		}
		for _, id := range []int64{root.ID, a.ID, b.ID, c.ID} {
			requireGone(t, s, store.KindDocument, id)
			if hs := mustHistory(t, s, store.KindDocument, id); hs[0].Event != store.EventDeleted {
				t.Errorf("document %d's newest history = %+v, want its tombstone", id, hs[0])
			}
		}
		mustFind(t, s, store.KindDocument, keep.ID)
		var evs []store.Event
		for _, c := range mustChanges(t, s, from) {
			evs = append(evs, c.Event)
		}
		if len(evs) != 4 || slices.IndexFunc(evs, func(e store.Event) bool { return e != store.EventDeleted }) >= 0 {
			t.Errorf("events = %v, want 4 deleted", evs)
		}
	})
	t.Run("Idempotency", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "DEL-1")
		d := store.Delete{ExpectVersion: 1, IdempotencyKey: "del-1"}
		first := mustDelete(t, s, actAlice, store.KindProduct, p.ID, d)
		from := mustLastChangeID(t, s)
		again := mustDelete(t, s, actAlice, store.KindProduct, p.ID, d)
		if !again.Replayed || first.Replayed || again.Deleted[0].Version != first.Deleted[0].Version {
			t.Errorf("replay = %+v, first = %+v; want a replay of version %d", again, first, first.Deleted[0].Version)
		}
		if cs := mustChanges(t, s, from); len(cs) != 0 {
			t.Errorf("a replay wrote %+v", cs)
		}
		_, err := s.DeleteRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Delete{ExpectVersion: 2, IdempotencyKey: "del-1"})
		requireCode(t, err, store.EINVALID)
	})
}

func testRestoreRecord(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "RES-1")
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"checksum": "abc"}})
		before := mustFind(t, s, store.KindProduct, p.ID)
		mustDelete(t, s, actAlice, store.KindProduct, p.ID, store.Delete{ExpectVersion: 2})
		from := mustLastChangeID(t, s)
		res := mustRestore(t, s, actBob, store.KindProduct, p.ID)
		got := mustFind(t, s, store.KindProduct, p.ID)
		if got.Version != 4 || res.Record.Version != 4 || got.UpdatedBy != "bob" || res.Note != "" {
			t.Errorf("restored = v%d by %s (result v%d, note %q), want v4 by bob", got.Version, got.UpdatedBy, res.Record.Version, res.Note)
		}
		requireSameRecord(t, s.Registry(), store.KindProduct, "restored", got.Fields, before.Fields)
		cs := mustChanges(t, s, from)
		if len(cs) != 1 || cs[0].Event != store.EventRestored || cs[0].Version != 4 || !cs[0].History {
			t.Errorf("changes = %+v, want one restored change of v4", cs)
		}
		hs := mustHistory(t, s, store.KindProduct, p.ID)
		if got := versionsOf(hs); !slices.Equal(got, []int64{4, 3, 1}) || hs[0].Event != store.EventRestored {
			t.Fatalf("history = %v (newest %q), want [4 3 1], newest restored", got, hs[0].Event)
		}
		// It is an ordinary record again: saves check against the new version, and history
		// rebuilds on top of the restored snapshot.
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 4, Set: store.Values{"name": "Back"}})
		if v, err := s.FindVersion(t.Context(), store.KindProduct, p.ID, 5); err != nil || v.Snapshot["name"] != "Back" || v.Snapshot["checksum"] != "abc" {
			t.Errorf("version 5 = %+v, %v; want name Back and checksum abc", v, err)
		}
		// Deleted and restored again, as often as anyone likes.
		mustDelete(t, s, actAlice, store.KindProduct, p.ID, store.Delete{ExpectVersion: 5})
		if r := mustRestore(t, s, actAlice, store.KindProduct, p.ID); r.Record.Version != 7 || r.Record.Fields["name"] != "Back" {
			t.Errorf("second restore = v%d %v, want v7 named Back", r.Record.Version, r.Record.Fields["name"])
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "RES-1")
		_, err := s.RestoreRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Restore{})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "not deleted")
		// Another product took the sku meanwhile.
		mustDelete(t, s, actAlice, store.KindProduct, p.ID, store.Delete{ExpectVersion: 1})
		mustCreateProduct(t, s, "res-1")
		from := mustLastChangeID(t, s)
		_, err = s.RestoreRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Restore{})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "RES-1")
		requireGone(t, s, store.KindProduct, p.ID)
		if cs := mustChanges(t, s, from); len(cs) != 0 {
			t.Errorf("a refused restore wrote %+v", cs)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := fresh(t, open)
		_, err := s.RestoreRecord(actx(t, actAlice), store.KindProduct, 42, store.Restore{})
		requireCode(t, err, store.ENOTFOUND)
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "RES-1")
		mustDelete(t, s, actAlice, store.KindProduct, p.ID, store.Delete{ExpectVersion: 1})
		_, err := s.RestoreRecord(actx(t, actWorker), store.KindProduct, p.ID, store.Restore{})
		requireCode(t, err, store.EFORBIDDEN)
		requireGone(t, s, store.KindProduct, p.ID)
	})
	t.Run("Parent", func(t *testing.T) {
		s := fresh(t, open)
		root := mustCreateDoc(t, s, "root", nil)
		child := mustCreateDoc(t, s, "child", &root.ID)
		mustDelete(t, s, actAlice, store.KindDocument, root.ID, store.Delete{ExpectVersion: 1, Subtree: true})
		// The child first: its parent is gone, so it goes to the root and says so.
		res := mustRestore(t, s, actAlice, store.KindDocument, child.ID)
		if res.Record.Fields["parent_id"] != nil || res.Note == "" {
			t.Errorf("child restored under %v with note %q, want the root and a note", res.Record.Fields["parent_id"], res.Note)
		}
		if !strings.Contains(res.Note, "no longer exists") || !strings.Contains(res.Note, "root") {
			t.Errorf("note = %q, want it to say the parent no longer exists and the root", res.Note)
		}
		// Delete it again, restore the parent, then the child goes back under it.
		mustDelete(t, s, actAlice, store.KindDocument, child.ID, store.Delete{ExpectVersion: res.Record.Version})
		mustRestore(t, s, actAlice, store.KindDocument, root.ID)
		// Its newest tombstone holds the root parent it was restored with.
		res = mustRestore(t, s, actAlice, store.KindDocument, child.ID)
		if res.Record.Fields["parent_id"] != nil {
			t.Errorf("child restored under %v, want the root it was deleted at", res.Record.Fields["parent_id"])
		}
		grand := mustCreateDoc(t, s, "grand", &root.ID)
		mustDelete(t, s, actAlice, store.KindDocument, grand.ID, store.Delete{ExpectVersion: 1})
		res = mustRestore(t, s, actAlice, store.KindDocument, grand.ID)
		if res.Record.Fields["parent_id"] != root.ID || res.Note != "" {
			t.Errorf("restored under %v (note %q), want under %d", res.Record.Fields["parent_id"], res.Note, root.ID)
		}
	})
	t.Run("DeletedWith", func(t *testing.T) {
		s := fresh(t, open)
		root := mustCreateDoc(t, s, "root", nil)
		a := mustCreateDoc(t, s, "a", &root.ID)
		a1 := mustCreateDoc(t, s, "a1", &a.ID)
		a2 := mustCreateDoc(t, s, "a2", &a.ID)
		b := mustCreateDoc(t, s, "b", &root.ID)
		b1 := mustCreateDoc(t, s, "b1", &b.ID)
		alone := mustCreateDoc(t, s, "alone", nil)
		other := mustCreateDoc(t, s, "other", nil)
		otherChild := mustCreateDoc(t, s, "other child", &other.ID)
		mustDelete(t, s, actAlice, store.KindDocument, alone.ID, store.Delete{ExpectVersion: 1})
		mustDelete(t, s, actAlice, store.KindDocument, root.ID, store.Delete{ExpectVersion: 1, Subtree: true})
		mustDelete(t, s, actAlice, store.KindDocument, other.ID, store.Delete{ExpectVersion: 1, Subtree: true})
		with := func(id int64) []int64 {
			t.Helper()
			ts, found, err := store.DeletedWith(t.Context(), s, id)
			if err != nil || !found {
				t.Fatalf("DeletedWith(%d) = %v, found %v, %v", id, ts, found, err)
			}
			var ids []int64
			for _, x := range ts {
				ids = append(ids, x.ID)
			}
			return ids
		}
		// Parents first: a before a1 and a2; neither the other subtree nor a delete of its own.
		got := with(root.ID)
		if len(got) != 5 || !slices.Contains(got, b.ID) || slices.Index(got, b.ID) > slices.Index(got, b1.ID) || slices.Index(got, a.ID) > slices.Index(got, a1.ID) ||
			slices.Index(got, a.ID) > slices.Index(got, a2.ID) || slices.Index(got, a.ID) < 0 {
			t.Errorf("deleted with root: %v, want a, b, a1, a2, b1, parents first", got)
		}
		if got := with(alone.ID); len(got) != 0 {
			t.Errorf("deleted with a document deleted alone: %v", got)
		}
		if got := with(other.ID); !slices.Equal(got, []int64{otherChild.ID}) {
			t.Errorf("deleted with other: %v, want its child", got)
		}
		// Restoring the top keeps the list; restoring one of them takes it off.
		mustRestore(t, s, actAlice, store.KindDocument, root.ID)
		mustRestore(t, s, actAlice, store.KindDocument, a.ID)
		if got := with(root.ID); len(got) != 4 || slices.Contains(got, a.ID) {
			t.Errorf("after restoring root and a: %v, want b, a1, a2, b1", got)
		}
		// a was restored right after the delete: its own part of it, not b's.
		if got := with(a.ID); !slices.Equal(slices.Sorted(slices.Values(got)), []int64{a1.ID, a2.ID}) {
			t.Errorf("deleted with a: %v, want a1, a2", got)
		}
		// A document deleted again since belongs to that delete, not to the first.
		mustRestore(t, s, actAlice, store.KindDocument, b.ID)
		bb := mustFind(t, s, store.KindDocument, b.ID)
		mustDelete(t, s, actBob, store.KindDocument, b.ID, store.Delete{ExpectVersion: bb.Version})
		// b1 stays: its parent b was restored, so it belongs to the first delete still.
		if got := with(root.ID); !slices.Equal(slices.Sorted(slices.Values(got)), []int64{a1.ID, a2.ID, b1.ID}) {
			t.Errorf("after b was restored and deleted again: %v, want a1, a2, b1", got)
		}
		if got := with(b.ID); len(got) != 0 {
			t.Errorf("b deleted alone: %v", got)
		}
		if got := with(alone.ID - 100); len(got) != 0 {
			t.Errorf("a document that never was: %v", got)
		}
	})
	t.Run("ParentLease", func(t *testing.T) {
		s := fresh(t, open)
		root := mustCreateDoc(t, s, "root", nil)
		child := mustCreateDoc(t, s, "child", &root.ID)
		mustDelete(t, s, actAlice, store.KindDocument, child.ID, store.Delete{ExpectVersion: 1})
		l := mustAcquire(t, s, actBob, store.KindDocument, root.ID, s.Registry().TreeGroup(store.KindDocument), time.Minute)
		_, err := s.RestoreRecord(actx(t, actAlice), store.KindDocument, child.ID, store.Restore{})
		requireCode(t, err, store.ELEASE)
		requireGone(t, s, store.KindDocument, child.ID)
		if _, err := s.RestoreRecord(actx(t, actBob), store.KindDocument, child.ID, store.Restore{ParentLeaseToken: l.Token}); err != nil {
			t.Fatalf("restore with the parent's lease: %v", err)
		}
	})
	t.Run("ParentLeasedAndTooDeep", func(t *testing.T) {
		// As for a create: a parent at the deepest level refuses the restore (EINVALID)
		// whether or not it is leased, rather than ELEASE.
		s := fresh(t, open)
		chain := mustChain(t, s, store.MaxDepth-1, nil)
		p := mustCreateDoc(t, s, "p", nil)
		child := mustCreateDoc(t, s, "child", &p.ID)
		mustDelete(t, s, actAlice, store.KindDocument, child.ID, store.Delete{ExpectVersion: 1})
		if _, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, p.ID, store.Move{Parent: &chain[len(chain)-1]}); err != nil {
			t.Fatalf("move p to the deepest level: %v", err)
		}
		mustAcquire(t, s, actBob, store.KindDocument, p.ID, s.Registry().TreeGroup(store.KindDocument), time.Minute)
		_, err := s.RestoreRecord(actx(t, actAlice), store.KindDocument, child.ID, store.Restore{})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "9 levels deep (max 8)")
		requireGone(t, s, store.KindDocument, child.ID)
	})
}
