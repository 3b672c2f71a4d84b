package storetest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// Actors with permissions, as a team server makes them.
var (
	// actProducts is an editor limited to products.
	actProducts = store.Actor{Name: "pat", Role: store.RoleEditor,
		Perms: &store.Permissions{Access: store.AccessEditor, Kinds: []store.Kind{store.KindProduct}}}
	// actAdmin is an admin without limits.
	actAdmin = store.Actor{Name: "ada", Role: store.RoleEditor, Perms: &store.Permissions{Access: store.AccessAdmin}}
	// actEditor is an editor without limits.
	actEditor = store.Actor{Name: "eddie", Role: store.RoleEditor, Perms: &store.Permissions{Access: store.AccessEditor}}
)

// subtreeActor is an editor limited to the documents at root and below it.
func subtreeActor(root int64) store.Actor {
	return store.Actor{Name: "sue", Role: store.RoleEditor, Perms: &store.Permissions{Access: store.AccessEditor,
		Subtrees: map[store.Kind][]int64{store.KindDocument: {root}}}}
}

// wantForbidden fails unless err is EFORBIDDEN and its message has every part of want.
func wantForbidden(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("%s: %v, want EFORBIDDEN", what, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s refused with %q; want it to say %q", what, err, w)
		}
	}
}

// wantUnchanged fails unless record id of kind is still at version v.
func wantUnchanged(t *testing.T, s store.Store, kind store.Kind, id, v int64) {
	t.Helper()
	if got := mustFind(t, s, kind, id); got.Version != v {
		t.Errorf("%s %d is v%d after a refused write; want v%d", kind, id, got.Version, v)
	}
}

// testPermissionsKinds: an editor limited to products writes products (save, relative
// change, create, lease, delete, restore of their own delete) and is refused every write of
// a document with EFORBIDDEN naming what they may write; nothing of the refused writes is
// written.
func testPermissionsKinds(t *testing.T, open Opener) {
	s := fresh(t, open)
	p := mustCreateProduct(t, s, "PK-1")
	doc := mustCreateDoc(t, s, "Guide", nil)
	ctx := actx(t, actProducts)
	t.Run("allowed", func(t *testing.T) {
		mustSave(t, s, ctx, store.KindProduct, p.ID, store.Update{BaseVersion: p.Version, Set: store.Values{"name": "Pat's"}})
		mustSave(t, s, ctx, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
		made, err := s.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "PK-2", "name": "n", "price": int64(1)})
		if err != nil {
			t.Fatalf("create of a product: %v", err)
		}
		l, err := s.AcquireLease(ctx, store.LeaseRequest{Kind: store.KindProduct, RecordID: made.ID, Group: "editor", TTL: store.MinLeaseTTL * 30})
		if err != nil {
			t.Fatalf("lease on a product: %v", err)
		}
		if _, err := s.ReleaseLease(ctx, l.Token); err != nil {
			t.Fatalf("release: %v", err)
		}
		if _, err := s.DeleteRecord(ctx, store.KindProduct, made.ID, store.Delete{ExpectVersion: made.Version}); err != nil {
			t.Fatalf("delete of a product: %v", err)
		}
		if _, err := s.RestoreRecord(ctx, store.KindProduct, made.ID, store.Restore{}); err != nil {
			t.Fatalf("restore of their own delete: %v", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		want := `editor "pat" may write product records`
		_, err := s.UpdateRecord(ctx, store.KindDocument, doc.ID, store.Update{BaseVersion: doc.Version, Set: store.Values{"title": "x"}})
		wantForbidden(t, "save of a document", err, "the save of document", want, "nothing was written")
		_, err = s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "New"})
		wantForbidden(t, "create of a document", err, want)
		_, err = s.MoveRecord(ctx, store.KindDocument, doc.ID, store.Move{})
		wantForbidden(t, "move of a document", err, want)
		_, err = s.DeleteRecord(ctx, store.KindDocument, doc.ID, store.Delete{ExpectVersion: doc.Version})
		wantForbidden(t, "delete of a document", err, want)
		_, err = s.AcquireLease(ctx, store.LeaseRequest{Kind: store.KindDocument, RecordID: doc.ID, Group: "editor", TTL: store.MinLeaseTTL * 30})
		wantForbidden(t, "lease on a document", err, want)
		wantUnchanged(t, s, store.KindDocument, doc.ID, doc.Version)
		if n, err := s.CountRecords(t.Context(), store.KindDocument); err != nil || n != 1 {
			t.Errorf("documents after a refused create: %d, %v; want 1", n, err)
		}
		if ls, _, err := s.FindLeases(t.Context(), store.LeaseFilter{Kind: store.KindDocument}); err != nil || len(ls) != 0 {
			t.Errorf("leases on documents after a refused lease: %v, %v", ls, err)
		}
	})
}

// testPermissionsSubtree: an editor limited to the documents below a root writes there
// (save, create under, move within, lease, delete) and is refused, with nothing written,
// every write outside it: a save, a create at the root or under another tree, a move out
// of the subtree or into it from outside, a lease, a delete, and every product.
func testPermissionsSubtree(t *testing.T, open Opener) {
	s := fresh(t, open)
	a := mustCreateDoc(t, s, "A", nil)
	a1 := mustCreateDoc(t, s, "A1", &a.ID)
	a2 := mustCreateDoc(t, s, "A2", &a1.ID)
	b := mustCreateDoc(t, s, "B", nil)
	p := mustCreateProduct(t, s, "PS-1")
	sue := subtreeActor(a.ID)
	ctx := actx(t, sue)
	lease := func(id int64) error {
		l, err := s.AcquireLease(ctx, store.LeaseRequest{Kind: store.KindDocument, RecordID: id, Group: "editor", TTL: store.MinLeaseTTL * 30})
		if err == nil {
			_, err = s.ReleaseLease(ctx, l.Token)
		}
		return err
	}
	t.Run("allowed", func(t *testing.T) {
		mustSave(t, s, ctx, store.KindDocument, a.ID, store.Update{BaseVersion: a.Version, Set: store.Values{"title": "A!"}})
		mustSave(t, s, ctx, store.KindDocument, a2.ID, store.Update{BaseVersion: a2.Version, Set: store.Values{"title": "A2!"}})
		made, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "A1b", "parent_id": a1.ID})
		if err != nil {
			t.Fatalf("create under a record of the subtree: %v", err)
		}
		if _, err := s.MoveRecord(ctx, store.KindDocument, made.ID, store.Move{Parent: &a.ID}); err != nil {
			t.Fatalf("move within the subtree: %v", err)
		}
		if err := lease(a1.ID); err != nil {
			t.Fatalf("lease in the subtree: %v", err)
		}
		moved := mustFind(t, s, store.KindDocument, made.ID)
		if _, err := s.DeleteRecord(ctx, store.KindDocument, made.ID, store.Delete{ExpectVersion: moved.Version}); err != nil {
			t.Fatalf("delete in the subtree: %v", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		want := `editor "sue" may write document records: document only at document ` + strconv.FormatInt(a.ID, 10) + ` and below`
		b0, a1v, a2v := mustFind(t, s, store.KindDocument, b.ID), mustFind(t, s, store.KindDocument, a1.ID), mustFind(t, s, store.KindDocument, a2.ID)
		_, err := s.UpdateRecord(ctx, store.KindDocument, b.ID, store.Update{BaseVersion: b0.Version, Set: store.Values{"title": "x"}})
		wantForbidden(t, "save outside the subtree", err, want, "nothing was written")
		_, err = s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Top"})
		wantForbidden(t, "create at the root", err, want)
		_, err = s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Under B", "parent_id": b.ID})
		wantForbidden(t, "create under another tree", err, want)
		_, err = s.MoveRecord(ctx, store.KindDocument, a2.ID, store.Move{Parent: &b.ID})
		wantForbidden(t, "move out of the subtree", err, "to where it would go", want)
		_, err = s.MoveRecord(ctx, store.KindDocument, a1.ID, store.Move{})
		wantForbidden(t, "move to the root", err, want)
		_, err = s.MoveRecord(ctx, store.KindDocument, b.ID, store.Move{Parent: &a1.ID})
		wantForbidden(t, "move into the subtree from outside", err, "out of where it is", want)
		_, err = s.MoveRecord(ctx, store.KindDocument, a.ID, store.Move{Parent: &a2.ID})
		if store.ErrorCode(err) != store.EFORBIDDEN && store.ErrorCode(err) != store.EINVALID {
			t.Errorf("move of the subtree's root: %v, want it refused", err)
		}
		wantForbidden(t, "lease outside the subtree", lease(b.ID), want)
		_, err = s.DeleteRecord(ctx, store.KindDocument, b.ID, store.Delete{ExpectVersion: b0.Version})
		wantForbidden(t, "delete outside the subtree", err, want)
		_, err = s.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
		wantForbidden(t, "relative change of a product", err, want)
		wantUnchanged(t, s, store.KindDocument, b.ID, b0.Version)
		wantUnchanged(t, s, store.KindDocument, a1.ID, a1v.Version)
		wantUnchanged(t, s, store.KindDocument, a2.ID, a2v.Version)
		wantUnchanged(t, s, store.KindProduct, p.ID, p.Version)
		if n, err := s.CountRecords(t.Context(), store.KindDocument); err != nil || n != 4 {
			t.Errorf("documents after refused creates: %d, %v; want 4", n, err)
		}
	})
	t.Run("restore", func(t *testing.T) {
		a2v := mustFind(t, s, store.KindDocument, a2.ID)
		if _, err := s.DeleteRecord(ctx, store.KindDocument, a2.ID, store.Delete{ExpectVersion: a2v.Version}); err != nil {
			t.Fatalf("delete in the subtree: %v", err)
		}
		if _, err := s.RestoreRecord(ctx, store.KindDocument, a2.ID, store.Restore{}); err != nil {
			t.Fatalf("restore of their own delete under the subtree: %v", err)
		}
		b0 := mustFind(t, s, store.KindDocument, b.ID)
		if _, err := s.DeleteRecord(actx(t, actAlice), store.KindDocument, b.ID, store.Delete{ExpectVersion: b0.Version}); err != nil {
			t.Fatalf("delete by alice: %v", err)
		}
		_, err := s.RestoreRecord(ctx, store.KindDocument, b.ID, store.Restore{})
		wantForbidden(t, "restore of another's delete outside the subtree", err)
	})
}

// testPermissionsAdmin: only an admin (or an actor without permissions) restores another's
// delete, ends another's lease and changes the schema; an editor is refused each with
// EFORBIDDEN and nothing changes.
func testPermissionsAdmin(t *testing.T, open Opener) {
	s := fresh(t, open)
	p := mustCreateProduct(t, s, "PA-1")
	if _, err := s.DeleteRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Delete{ExpectVersion: p.Version}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err := s.RestoreRecord(actx(t, actEditor), store.KindProduct, p.ID, store.Restore{})
	wantForbidden(t, "an editor's restore of alice's delete", err, "deleted by \"alice\"", "only an admin may do that", `editor "eddie"`)
	if _, err := s.FindRecord(t.Context(), store.KindProduct, p.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("product after a refused restore: %v, want ENOTFOUND", err)
	}
	if _, err := s.RestoreRecord(actx(t, actAdmin), store.KindProduct, p.ID, store.Restore{}); err != nil {
		t.Errorf("an admin's restore of alice's delete: %v", err)
	}
	testBreakLease(t, s)
	ap, ok := s.(store.SchemaApplier)
	if !ok {
		return
	}
	_, err = ap.ApplySchema(actx(t, actEditor), s.Registry(), store.ApplyOptions{DryRun: true})
	wantForbidden(t, "an editor's schema change", err, "the schema change", "only an admin")
	if _, err := ap.ApplySchema(actx(t, actAdmin), s.Registry(), store.ApplyOptions{DryRun: true}); err != nil {
		t.Errorf("an admin's schema change: %v", err)
	}
	_, err = ap.ApplySchema(actx(t, actProducts), s.Registry(), store.ApplyOptions{})
	wantForbidden(t, "a limited editor's schema change", err, "only an admin")
}

// testBreakLease: an editor may not end alice's lease (EFORBIDDEN, the lease stays); an
// admin may, and alice's token is then no longer valid; with no live lease left, ENOTFOUND.
func testBreakLease(t *testing.T, s store.Store) {
	t.Helper()
	lb, ok := s.(store.LeaseBreaker)
	if !ok {
		t.Fatal("the store cannot break leases (store.LeaseBreaker)")
	}
	p := mustCreateProduct(t, s, "PA-2")
	l, err := s.AcquireLease(actx(t, actAlice), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: "editor", TTL: store.MinLeaseTTL * 60})
	if err != nil {
		t.Fatal(err)
	}
	_, err = lb.BreakLease(actx(t, actEditor), store.KindProduct, p.ID, "editor")
	wantForbidden(t, "an editor's release of alice's lease", err, "only an admin may do that")
	if _, err := s.ExtendLease(actx(t, actAlice), l.Token, store.MinLeaseTTL*60); err != nil {
		t.Fatalf("alice's lease after a refused break: %v", err)
	}
	if _, err := lb.BreakLease(actx(t, actAdmin), store.KindProduct, p.ID, "editor"); err != nil {
		t.Fatalf("an admin's release of alice's lease: %v", err)
	}
	if _, err := s.ExtendLease(actx(t, actAlice), l.Token, store.MinLeaseTTL*60); store.ErrorCode(err) != store.ELEASE {
		t.Errorf("alice's extend after her lease was broken: %v, want ELEASE", err)
	}
	if _, err := lb.BreakLease(actx(t, actAdmin), store.KindProduct, p.ID, "editor"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("a break with no live lease: %v, want ENOTFOUND", err)
	}
}
