package sync_test

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestSync_CreateConflictHoldsBack: a local create whose sku the source gave another product
// meanwhile. The sync names the source's product it cannot take (the local record holds the
// sku) and does not count it as pulled; the create's conflict refuses theirs and base with
// the way out, never a database error, and names only the colliding field; deleting the local
// create drops its conflict, and the next sync takes the source's product.
func TestSync_CreateConflictHoldsBack(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			a, mine, theirs, rep := mustCreateConflict(t, src)
			if rep.Pulled != 0 {
				t.Errorf("pulled %d, want 0: the source's product is held back", rep.Pulled)
			}
			if len(rep.Held) != 1 || rep.Held[0].Kind != store.KindProduct || rep.Held[0].ID != theirs.ID ||
				!strings.Contains(rep.Held[0].Reason, "held here by product "+itoa(mine.ID)) {
				t.Fatalf("held back %+v, want product %d held by product %d", rep.Held, theirs.ID, mine.ID)
			}
			if rep.InSync() {
				t.Errorf("a sync that holds back a record says in sync")
			}
			if h := tsync.Hint(&rep.Conflicts[0]); strings.Contains(h, "theirs") || !strings.Contains(h, "sku=VALUE") || !strings.Contains(h, "tandem delete") {
				t.Errorf("hint for a create's conflict: %q", h)
			}

			for _, pick := range []string{"theirs", "base"} {
				_, err := tsync.Resolve(as("alice"), a, store.KindProduct, mine.ID, tsync.Picks{"sku": pick})
				if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "has no "+pick) || !strings.Contains(err.Error(), "tandem delete") {
					t.Errorf("sku=%s on a create's conflict: %v, want EINVALID saying there is no %s", pick, err, pick)
				}
			}
			_, err := tsync.Resolve(as("alice"), a, store.KindProduct, mine.ID, tsync.Picks{"sku": "ZZ-10", "bogus": "1"})
			if err == nil || !strings.Contains(err.Error(), "it collides on sku)") {
				t.Errorf("an unknown field: %v, want the colliding fields named, and only them", err)
			}
			if cs, _ := a.Conflicts(as("alice")); len(cs) != 1 {
				t.Fatalf("a refused answer changed the queue: %v", describe(cs))
			}

			if _, err := a.DeleteRecord(as("alice"), store.KindProduct, mine.ID, store.Delete{ExpectVersion: 1}); err != nil {
				t.Fatalf("delete the local create in conflict: %v", err)
			}
			if cs, err := a.Conflicts(as("alice")); err != nil || len(cs) != 0 {
				t.Errorf("the conflict stayed after its create was deleted: %v (%v)", describe(cs), err)
			}
			rep = mustSync(t, src, a)
			if !rep.InSync() || rep.Pulled != 1 {
				t.Fatalf("after the delete: %+v, want in sync with the source's product pulled", rep)
			}
			if got := mustGet(t, a, store.KindProduct, theirs.ID); got.Fields["name"] != "src" {
				t.Errorf("the source's product in the copy: %v", got.Fields)
			}
		})
	}
}

// mustCreateConflict makes a copy of src (seeded) in which a local create meets, at a sync,
// the source's product that took its sku meanwhile; it returns the copy, the local create,
// the source's product and the sync's report, with the create's conflict checked.
func mustCreateConflict(t *testing.T, src store.Store) (a *sqlite.DB, mine, theirs *store.Record, rep *tsync.Report) {
	t.Helper()
	seed(t, src)
	a = mustClone(t, src, "a")
	mine, err := a.CreateRecord(as("alice"), store.KindProduct, store.Values{"sku": "ZZ-9", "name": "copy"})
	if err != nil {
		t.Fatal(err)
	}
	if theirs, err = src.CreateRecord(as("carol"), store.KindProduct, store.Values{"sku": "zz-9", "name": "src"}); err != nil {
		t.Fatal(err)
	}
	rep = mustSync(t, src, a)
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].ID != mine.ID {
		t.Fatalf("conflicts %v, want the create's", describe(rep.Conflicts))
	}
	return a, mine, theirs, rep
}

// TestSync_MoveCycleHoldsBack: a local move and the source's move that would close a loop
// with it. The local move is a conflict; the source's move of the other document is held
// back, and the sync names it with the reason.
func TestSync_MoveCycleHoldsBack(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			a := mustClone(t, src, "a")
			mustMove(t, a, "alice", f.x, f.y)   // x under y here
			mustMove(t, src, "carol", f.y, f.x) // y under x there
			rep := mustSync(t, src, a)
			if len(rep.Conflicts) != 1 || rep.Conflicts[0].ID != f.x {
				t.Fatalf("conflicts %v, want x's move", describe(rep.Conflicts))
			}
			if len(rep.Held) != 1 || rep.Held[0].ID != f.y || !strings.Contains(rep.Held[0].Reason, "under it here") {
				t.Fatalf("held back %+v, want document %d (the source's move)", rep.Held, f.y)
			}
			if _, err := tsync.Resolve(as("alice"), a, store.KindDocument, f.x, tsync.Picks{store.ParentField: "theirs"}); err != nil {
				t.Fatal(err)
			}
			if rep = mustSync(t, src, a); !rep.InSync() || len(rep.Held) != 0 {
				t.Fatalf("after resolving: %+v", rep)
			}
			if got := mustGet(t, a, store.KindDocument, f.y); got.Fields[store.ParentField] != f.x {
				t.Errorf("document %d in the copy: parent %v, want %d", f.y, got.Fields[store.ParentField], f.x)
			}
		})
	}
}

// TestSync_ResolutionHistorySaysResolved: the source's history names a resolution's push as
// resolved (at the time of the resolution), not as the offline edit: the values are the
// person's answer to the conflict.
func TestSync_ResolutionHistorySaysResolved(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			a := mustClone(t, src, "a")
			mustSet(t, a, "alice", store.KindProduct, f.same, store.Values{"name": "alice's"})
			mustSet(t, src, "carol", store.KindProduct, f.same, store.Values{"name": "carol's"})
			if rep := mustSync(t, src, a); len(rep.Conflicts) != 1 {
				t.Fatalf("conflicts %v, want one on name", describe(rep.Conflicts))
			}
			if _, err := tsync.Resolve(as("alice"), a, store.KindProduct, f.same, tsync.Picks{"name": "both names"}); err != nil {
				t.Fatal(err)
			}
			if rep := mustSync(t, src, a); !rep.InSync() {
				t.Fatalf("after resolving: %+v", rep)
			}
			hist, err := src.FindHistory(as("alice"), store.KindProduct, f.same)
			if err != nil {
				t.Fatal(err)
			}
			if got := hist[0].Actor; !strings.HasPrefix(got, "alice (offline copy, resolved 20") {
				t.Errorf("the resolution's version names %q, want alice, the working copy and when she resolved", got)
			}
		})
	}
}

// TestSync_CreateConflictKeepsLaterSaves: a record created in the copy and saved again
// before the sync. Its create meets a taken sku; the later save, which names a local id the
// source has never had, joins the create's conflict and leaves it a create's conflict (not
// "deleted on the source"), with the newest values as mine; answering it pushes the create
// with them.
func TestSync_CreateConflictKeepsLaterSaves(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			seed(t, src)
			a := mustClone(t, src, "a")
			mine, err := a.CreateRecord(as("alice"), store.KindProduct, store.Values{"sku": "ZZ-9", "name": "copy"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.UpdateRecord(as("alice"), store.KindProduct, mine.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "copy 2"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := src.CreateRecord(as("carol"), store.KindProduct, store.Values{"sku": "zz-9", "name": "src"}); err != nil {
				t.Fatal(err)
			}
			rep := mustSync(t, src, a)
			if len(rep.Conflicts) != 1 {
				t.Fatalf("conflicts %v, want the create's alone", describe(rep.Conflicts))
			}
			c := rep.Conflicts[0]
			if c.Op != store.CopyCreate || c.Gone() || c.Mine["name"] != "copy 2" || !strings.HasPrefix(tsync.Hint(&c), "created here") {
				t.Fatalf("conflict %v (op %s, mine %v, hint %q), want the create's with the newest values", describe(rep.Conflicts), c.Op, c.Mine, tsync.Hint(&c))
			}
			if _, err := tsync.Resolve(as("alice"), a, store.KindProduct, mine.ID, tsync.Picks{"sku": "ZZ-10"}); err != nil {
				t.Fatal(err)
			}
			if rep = mustSync(t, src, a); !rep.InSync() {
				t.Fatalf("after the answer: conflicts %v, held %+v, pending %d", describe(rep.Conflicts), rep.Held, rep.Pending)
			}
			got, err := src.FindRecords(as("carol"), store.Filter{Kind: store.KindProduct, Search: "ZZ-10"})
			if err != nil || len(got) != 1 || got[0].Fields["name"] != "copy 2" {
				t.Fatalf("the source's ZZ-10: %v (%v), want one product named copy 2", got, err)
			}
		})
	}
}
