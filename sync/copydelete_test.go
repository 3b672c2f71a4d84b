package sync_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// pendingDeletes returns the copy's outbox deletes as "kind id" strings.
func pendingDeletes(t *testing.T, wc store.WorkingCopy) []string {
	t.Helper()
	es, err := wc.Outbox(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Op == store.CopyDelete {
			out = append(out, string(e.Kind)+" "+itoa(e.ID))
		}
	}
	return out
}

// TestSync_CopyDelete: a delete made offline is done locally, waits in the outbox, and is
// done on the source at the next sync, where history says it came from a working copy, once
// (a second sync and a record the source deleted too change nothing).
func TestSync_CopyDelete(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "wc")

			mustDelete(t, wc, store.KindProduct, f.counter, false)
			mustDelete(t, wc, store.KindProduct, f.disjoint, false)
			mustDelete(t, src, store.KindProduct, f.disjoint, false) // deleted on both sides
			mustDelete(t, wc, store.KindDocument, f.root, true)      // root, x and y
			if !absent(t, wc, store.KindProduct, f.counter) {
				t.Fatal("the local delete left the record in the copy")
			}
			st, err := wc.CopyState(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Deletes != 5 || st.Pending != 5 {
				t.Fatalf("copy state: %d pending, %d deletes, want 5 and 5 (2 products, a subtree of 3)", st.Pending, st.Deletes)
			}
			if absent(t, src, store.KindProduct, f.counter) {
				t.Fatal("the source lost the record before any sync")
			}

			rep := mustSync(t, src, wc)
			if !rep.InSync() || rep.Pushed != 5 {
				t.Fatalf("sync: in sync %v, pushed %d, conflicts %v; want in sync with 5 pushed", rep.InSync(), rep.Pushed, describe(rep.Conflicts))
			}
			for _, id := range []int64{f.counter, f.disjoint} {
				if !absent(t, src, store.KindProduct, id) {
					t.Errorf("product %d is still on the source", id)
				}
			}
			for _, id := range []int64{f.root, f.x, f.y} {
				if !absent(t, src, store.KindDocument, id) {
					t.Errorf("document %d is still on the source", id)
				}
			}
			hist, err := src.FindHistory(context.Background(), store.KindProduct, f.counter)
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) == 0 || hist[0].Event != store.EventDeleted || !strings.Contains(hist[0].Actor, "dora ("+tsync.Via) {
				t.Fatalf("newest history version of the deleted product: %+v, want a tombstone by dora from an offline copy", hist[0])
			}
			if d := pendingDeletes(t, wc); len(d) != 0 {
				t.Errorf("deletes left in the outbox after the sync: %v", d)
			}
			// The source's own echo of the deletes changes nothing, and a restore there
			// brings the record back into the copy.
			if rep := mustSync(t, src, wc); !rep.InSync() || rep.Pushed != 0 {
				t.Fatalf("second sync pushed %d, conflicts %v", rep.Pushed, describe(rep.Conflicts))
			}
			mustRestore(t, src, store.KindProduct, f.counter)
			mustSync(t, src, wc)
			if absent(t, wc, store.KindProduct, f.counter) {
				t.Error("a record restored on the source did not come back into the copy")
			}
		})
	}
}

// TestSync_CopyDeleteVsSourceEdit: a delete of a record the source changed since is a
// conflict, the record staying deleted in the copy; theirs brings the source's record back,
// mine deletes it on the source at the version the conflict saw, checked again.
func TestSync_CopyDeleteVsSourceEdit(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "wc")

			mustDelete(t, wc, store.KindProduct, f.same, false)
			mustDelete(t, wc, store.KindProduct, f.disjoint, false)
			mustSet(t, src, "carol", store.KindProduct, f.same, store.Values{"name": "carol's"})
			mustSet(t, src, "carol", store.KindProduct, f.disjoint, store.Values{"name": "carol's too"})

			rep := mustSync(t, src, wc)
			if len(rep.Conflicts) != 2 {
				t.Fatalf("conflicts %v, want the two deleted products", describe(rep.Conflicts))
			}
			for _, c := range rep.Conflicts {
				if c.Op != store.CopyDelete || c.Reason != store.DeletedHere || c.Gone() || c.Theirs["name"] == nil {
					t.Errorf("conflict %s: op %s, reason %q, theirs %v", tsync.Describe(&c), c.Op, c.Reason, c.Theirs)
				}
			}
			if absent(t, src, store.KindProduct, f.same) || absent(t, src, store.KindProduct, f.disjoint) {
				t.Fatal("a delete that met a source change removed the record there")
			}
			if !absent(t, wc, store.KindProduct, f.same) {
				t.Fatal("the conflicting record came back into the copy before it was resolved")
			}
			// Field answers do not apply to a delete; nothing changes.
			if _, err := tsync.Resolve(as("erin"), wc, store.KindProduct, f.same, tsync.Picks{"name": "mine"}); store.ErrorCode(err) != store.EINVALID {
				t.Fatalf("field-by-field resolve of a delete conflict: %v, want EINVALID", err)
			}
			if err := tsync.ResolveDelete(as("erin"), wc, store.KindProduct, f.same, "base"); store.ErrorCode(err) != store.EINVALID {
				t.Fatalf("resolve a delete conflict with base: %v, want EINVALID", err)
			}

			if err := tsync.ResolveDelete(as("erin"), wc, store.KindProduct, f.same, "theirs"); err != nil {
				t.Fatal(err)
			}
			if err := tsync.ResolveDelete(as("erin"), wc, store.KindProduct, f.disjoint, "mine"); err != nil {
				t.Fatal(err)
			}
			// mine is checked again: the source moves on once more before the push.
			mustSet(t, src, "carol", store.KindProduct, f.disjoint, store.Values{"price": int64(4242)})
			rep = mustSync(t, src, wc)
			if len(rep.Conflicts) != 1 || rep.Conflicts[0].ID != f.disjoint || rep.Conflicts[0].TheirsVersion != mustGet(t, src, store.KindProduct, f.disjoint).Version {
				t.Fatalf("after the resolutions and another source edit: conflicts %v, want product %d again at the source's version", describe(rep.Conflicts), f.disjoint)
			}
			if r := mustGet(t, wc, store.KindProduct, f.same); r.Fields["name"] != "carol's" || r.Version != mustGet(t, src, store.KindProduct, f.same).Version {
				t.Errorf("theirs: the copy has %v at v%d, want the source's record", r.Fields["name"], r.Version)
			}
			if err := tsync.ResolveDelete(as("erin"), wc, store.KindProduct, f.disjoint, "mine"); err != nil {
				t.Fatal(err)
			}
			if rep := mustSync(t, src, wc); !rep.InSync() {
				t.Fatalf("not in sync after resolving mine again: %v", describe(rep.Conflicts))
			}
			if !absent(t, src, store.KindProduct, f.disjoint) {
				t.Error("mine: the record is still on the source")
			}
			assertConverged(t, src, wc, nil)
		})
	}
}

// TestSync_CopyEditThenDelete: an edit and then a delete of the same record push in order:
// the edit on its base, then the delete on the version the edit made, so the copy's own
// change never looks like the source's. A counter delta and a move are such edits too. Had the
// source changed the record meanwhile, the edit merges and the delete becomes a conflict,
// never removing the source's change.
func TestSync_CopyEditThenDelete(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "wc")

			mustSet(t, wc, "erin", store.KindProduct, f.same, store.Values{"name": "edited offline"})
			mustDelete(t, wc, store.KindProduct, f.same, false)
			mustAdjust(t, wc, "erin", f.counter, -4)
			mustDelete(t, wc, store.KindProduct, f.counter, false)
			mustSet(t, wc, "erin", store.KindProduct, f.disjoint, store.Values{"name": "edited offline"})
			mustDelete(t, wc, store.KindProduct, f.disjoint, false)
			mustSet(t, src, "carol", store.KindProduct, f.disjoint, store.Values{"price": int64(777)})
			mustMove(t, wc, "erin", f.x, f.y)
			mustDelete(t, wc, store.KindDocument, f.x, false)

			rep := mustSync(t, src, wc)
			if len(rep.Conflicts) != 1 || rep.Conflicts[0].ID != f.disjoint || rep.Conflicts[0].Op != store.CopyDelete {
				t.Fatalf("conflicts %v, want only product %d's delete (the source changed it)", describe(rep.Conflicts), f.disjoint)
			}
			for _, id := range []int64{f.same, f.counter} {
				if !absent(t, src, store.KindProduct, id) {
					t.Errorf("product %d is still on the source", id)
				}
			}
			if !absent(t, src, store.KindDocument, f.x) {
				t.Errorf("document %d, moved and then deleted in the copy, is still on the source", f.x)
			}
			hist, err := src.FindHistory(context.Background(), store.KindProduct, f.same)
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) < 2 || hist[0].Event != store.EventDeleted || hist[1].Snapshot["name"] != "edited offline" ||
				!strings.Contains(hist[1].Actor, tsync.Via) {
				t.Fatalf("history of product %d: %+v, want the save and then the delete", f.same, hist)
			}
			// The edit merged with the source's change; the delete waits for a person.
			r := mustGet(t, src, store.KindProduct, f.disjoint)
			if r.Fields["name"] != "edited offline" || r.Fields["price"] != int64(777) {
				t.Errorf("product %d on the source: %v, want the merged edit and the source's price", f.disjoint, r.Fields)
			}
		})
	}
}

// TestSync_CopyDeleteRules: a delete that waits for a lease on the source, a document whose
// source has a child the copy did not have (a conflict, never a silent subtree delete), a
// local create deleted before it reached the source (nothing pushed), and restores: one of
// a delete not pushed yet cancels it, one of a record the source deleted is refused.
func TestSync_CopyDeleteRules(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "wc")

			lease, err := src.AcquireLease(as("dave"), store.LeaseRequest{Kind: store.KindProduct, RecordID: f.leased, Group: store.GroupEditor, TTL: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			mustDelete(t, wc, store.KindProduct, f.leased, false)
			mustDelete(t, wc, store.KindDocument, f.x, false)
			child, err := src.CreateRecord(as("carol"), store.KindDocument, store.Values{"title": "new under y", "parent_id": f.y})
			if err != nil {
				t.Fatal(err)
			}
			mustDelete(t, wc, store.KindDocument, f.y, false) // the copy has no child under y yet
			local, err := wc.CreateRecord(as("erin"), store.KindProduct, store.Values{"sku": "LOC-1", "name": "local"})
			if err != nil {
				t.Fatal(err)
			}
			mustSet(t, wc, "erin", store.KindProduct, local.ID, store.Values{"name": "local, edited"})
			mustDelete(t, wc, store.KindProduct, local.ID, false)
			mustDelete(t, wc, store.KindProduct, f.same, false)
			mustDelete(t, src, store.KindProduct, f.counter, false)

			// Restores: a pending delete is cancelled; the source's delete is not undone here.
			if _, err := wc.RestoreRecord(as("erin"), store.KindProduct, f.same, store.Restore{}); err != nil {
				t.Fatal(err)
			}
			mustSync(t, src, wc)
			if _, err := wc.RestoreRecord(as("erin"), store.KindProduct, f.counter, store.Restore{}); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "Restore it on the source") {
				t.Fatalf("restore in the copy of a record the source deleted: %v, want a refusal naming the source", err)
			}

			rep := mustSync(t, src, wc)
			if len(rep.Waits) != 1 || rep.Waits[0].ID != f.leased || rep.Waits[0].Holder != "dave" {
				t.Fatalf("waits %+v, want product %d leased by dave", rep.Waits, f.leased)
			}
			if absent(t, src, store.KindProduct, f.leased) {
				t.Error("the delete went through a lease on the source")
			}
			if len(rep.Conflicts) != 1 || rep.Conflicts[0].ID != f.y || !strings.Contains(rep.Conflicts[0].Reason, "child") {
				t.Fatalf("conflicts %v, want document %d: it has a child on the source", describe(rep.Conflicts), f.y)
			}
			if absent(t, src, store.KindDocument, f.y) || absent(t, src, store.KindDocument, child.ID) {
				t.Fatal("the source lost a subtree the copy did not know")
			}
			if !absent(t, src, store.KindDocument, f.x) {
				t.Error("document x, deleted in the copy, is still on the source")
			}
			if absent(t, wc, store.KindProduct, f.same) {
				t.Error("a restored record is not in the copy")
			}
			if absent(t, src, store.KindProduct, f.same) {
				t.Error("the restore in the copy did not cancel the pending delete: the source deleted it")
			}
			if d := pendingDeletes(t, wc); len(d) != 1 || d[0] != "product "+itoa(f.leased) {
				t.Errorf("pending deletes %v, want only the leased product", d)
			}
			for _, r := range mustFind(t, src, store.KindProduct) {
				if r.Fields["sku"] == "LOC-1" {
					t.Error("a local create deleted before its sync reached the source")
				}
			}

			// mine would be refused again; theirs on the document: the source's child comes
			// into the copy with it.
			if err := tsync.ResolveDelete(as("erin"), wc, store.KindDocument, f.y, "mine"); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "Resolve with theirs") {
				t.Fatalf("resolve mine of a delete the source refused: %v, want a refusal pointing to theirs", err)
			}
			if err := tsync.ResolveDelete(as("erin"), wc, store.KindDocument, f.y, "theirs"); err != nil {
				t.Fatal(err)
			}
			mustSync(t, src, wc)
			if absent(t, wc, store.KindDocument, f.y) || absent(t, wc, store.KindDocument, child.ID) {
				t.Error("after theirs, document y or the source's new child is not in the copy")
			}
			// The lease ends: the delete goes out.
			if _, err := src.ReleaseLease(as("dave"), lease.Token); err != nil {
				t.Fatal(err)
			}
			if rep := mustSync(t, src, wc); !rep.InSync() {
				t.Fatalf("after the lease ended: conflicts %v, waits %+v", describe(rep.Conflicts), rep.Waits)
			}
			if !absent(t, src, store.KindProduct, f.leased) {
				t.Error("the delete did not go out once the lease ended")
			}
			assertConverged(t, src, wc, nil)
		})
	}
}

func mustFind(t *testing.T, st store.Store, kind store.Kind) []*store.Record {
	t.Helper()
	rs, err := st.FindRecords(context.Background(), store.Filter{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestSync_CopySubtreeDeleteWaits: a subtree deleted in the copy whose child is leased on the
// source waits whole (exit 4), rather than its root meeting the child as a conflict, and goes
// out once the lease ends.
func TestSync_CopySubtreeDeleteWaits(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "wc")
			lease, err := src.AcquireLease(as("dave"), store.LeaseRequest{Kind: store.KindDocument, RecordID: f.x, Group: store.GroupEditor, TTL: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			mustDelete(t, wc, store.KindDocument, f.root, true)
			rep := mustSync(t, src, wc)
			if len(rep.Conflicts) != 0 || len(rep.Waits) != 1 || rep.Waits[0].ID != f.x {
				t.Fatalf("conflicts %v, waits %+v; want only document %d waiting", describe(rep.Conflicts), rep.Waits, f.x)
			}
			if absent(t, src, store.KindDocument, f.root) || absent(t, src, store.KindDocument, f.x) {
				t.Fatal("part of the subtree went while a child was leased")
			}
			if _, err := src.ReleaseLease(as("dave"), lease.Token); err != nil {
				t.Fatal(err)
			}
			if rep := mustSync(t, src, wc); !rep.InSync() {
				t.Fatalf("after the lease: conflicts %v, waits %+v", describe(rep.Conflicts), rep.Waits)
			}
			for _, id := range []int64{f.root, f.x, f.y} {
				if !absent(t, src, store.KindDocument, id) {
					t.Errorf("document %d is still on the source", id)
				}
			}
		})
	}
}
