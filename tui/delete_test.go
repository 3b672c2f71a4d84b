package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// TestDelete_FromList: d asks, naming the record; n keeps it; y deletes it version-checked,
// the row goes, and another terminal's list drops it live; R brings it back in both.
func TestDelete_FromList(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	alice := newDriver(t, s, "alice")
	bob := newDriver(t, s, "bob")
	alice.key("j")
	alice.key("d")
	if got := alice.screen(); !strings.Contains(got, `delete product 2 "Product 2" (v1)? y yes · n no`) {
		t.Fatalf("no confirmation naming the record:\n%s", got)
	}
	alice.key("n")
	if _, err := s.FindRecord(context.Background(), store.KindProduct, 2); err != nil {
		t.Fatalf("n deleted the product: %v", err)
	}
	alice.key("d")
	alice.key("y")
	alice.waitFor(`deleted product 2 "Product 2" (tombstone v2) · R restores it`)
	if _, err := s.FindRecord(context.Background(), store.KindProduct, 2); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("product 2 after y: %v, want not found", err)
	}
	if strings.Contains(alice.screen(), "Product 2 ") {
		t.Errorf("alice's list still shows product 2:\n%s", alice.screen())
	}
	bob.waitUntil("product 2 gone from bob's list", func() bool { return !strings.Contains(bob.screen(), "Product 2") })
	if !strings.Contains(bob.screen(), "Product 3") {
		t.Errorf("bob's list lost more than product 2:\n%s", bob.screen())
	}

	alice.key("R")
	alice.waitFor("restored product 2 as v3")
	bob.waitFor("Product 2")
	if r := mustRecord(t, s, 2); r.Version != 3 || r.UpdatedBy != "alice" {
		t.Errorf("restored = v%d by %s, want v3 by alice", r.Version, r.UpdatedBy)
	}
	// In id order, between 1 and 3.
	scr := bob.screen()
	if i1, i2, i3 := strings.Index(scr, "Product 1"), strings.Index(scr, "Product 2"), strings.Index(scr, "Product 3"); !(i1 < i2 && i2 < i3) {
		t.Errorf("restored row out of order:\n%s", scr)
	}
}

// TestDelete_Stale: the delete checks the version the list showed; a save in between makes
// it a conflict, and nothing is deleted.
func TestDelete_Stale(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice", func(o *Options) {})
	d.key("d")
	// Bob saves before alice answers; alice's list may already show v2, but her question
	// names v1 and the delete is checked against it.
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"name": "Bob's"}}); err != nil {
		t.Fatal(err)
	}
	d.key("y")
	d.waitFor("delete product 1: product 1 changed since you loaded version 1")
	if r := mustRecord(t, s, 1); r.Version != 2 {
		t.Errorf("product is at v%d, want 2", r.Version)
	}
}

// TestDelete_FromEditor: ctrl+x in the editor asks, deletes under the editor's own lease,
// and leaves to the list; another editor open on the record turns read-only and says who
// deleted it.
func TestDelete_FromEditor(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	alice := newDriver(t, s, "alice")
	bob := newDriver(t, s, "bob")
	openProduct(t, alice, 1, "e") // with a lease: the delete must present it
	openProduct(t, bob, 1, "enter")
	alice.key("ctrl+x")
	alice.waitFor(`delete product 1 "Product 1" (v1)?`)
	alice.key("y")
	alice.waitFor(`deleted product 1 "Product 1" (tombstone v2)`)
	if strings.Contains(alice.screen(), "product 1 · v") {
		t.Errorf("alice is still in the editor:\n%s", alice.screen())
	}
	bob.waitFor("alice deleted this product")
	if got := bob.screen(); !strings.Contains(got, "deleted by alice (v2)") {
		t.Errorf("bob's editor does not say it is read-only:\n%s", got)
	}
	if ls := liveLeases(t, s, 1); len(ls) != 0 {
		t.Errorf("alice's lease outlived the delete: %+v", ls)
	}
	// Restored: bob's editor opens it again, editable, at the restored version.
	if _, err := s.RestoreRecord(actorCtx("carol"), store.KindProduct, 1, store.Restore{}); err != nil {
		t.Fatal(err)
	}
	bob.waitFor("product 1 · v3")
	if got := bob.screen(); strings.Contains(got, "read-only") {
		t.Errorf("bob's editor is still read-only after the restore:\n%s", got)
	}
}

// TestDelete_EditsKeptAsDraft: bob has typed into a record alice deletes; his edits become a
// draft, offered when the record is restored.
func TestDelete_EditsKeptAsDraft(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	bob := newDriver(t, s, "bob")
	openProduct(t, bob, 1, "enter")
	focusField(t, bob, "name")
	bob.typeText(" by bob")
	if _, err := s.DeleteRecord(actorCtx("alice"), store.KindProduct, 1, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	bob.waitFor("alice deleted this product; your edits are kept as a draft")
	bob.settle()
	if d, err := bob.app.c.drafts.Load(store.KindProduct, 1); err != nil || d == nil {
		t.Fatalf("no draft after the delete: %v %v", d, err)
	}
	if _, err := s.RestoreRecord(actorCtx("alice"), store.KindProduct, 1, store.Restore{}); err != nil {
		t.Fatal(err)
	}
	bob.waitFor("Unsaved edits from")
	bob.key("y")
	bob.waitFor("Product 1 by bob")
	bob.key("ctrl+s")
	bob.waitFor("saved v4")
	if got := mustRecord(t, s, 1).Fields["name"]; got != "Product 1 by bob" {
		t.Errorf("name = %q, want bob's edit saved on the restored record", got)
	}
}

// TestDelete_RestoreFromHistory: the history screen follows its record live: a delete
// shows as its tombstone, and R restores the record.
func TestDelete_RestoreFromHistory(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	d.key("h")
	d.waitFor("history of product 1")
	d.key("R")
	d.waitFor("product 1 is not deleted: nothing to restore")
	if _, err := s.DeleteRecord(actorCtx("bob"), store.KindProduct, 1, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	d.waitFor("with these values (what a restore brings back)")
	d.key("R")
	d.waitFor("restored product 1 as v3")
	d.waitFor("alice        2026-12-01 10:05:00 restored")
	if r := mustRecord(t, s, 1); r.Version != 3 || r.UpdatedBy != "alice" {
		t.Errorf("restored = v%d by %s, want v3 by alice", r.Version, r.UpdatedBy)
	}
	d.key("esc")
	d.waitFor("Product 1")
}

// TestDelete_Goldens: the delete confirmation over the list at 80×24 and at 15 rows (the
// question replaces the status line and stays above the footer), a document's question
// offering its subtree, and the history of a deleted record.
func TestDelete_Goldens(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	d := newDriver(t, s, "alice")
	d.key("d")
	d.golden("delete_confirm")
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	d.settle()
	d.golden("delete_confirm_15rows")
	d.key("esc")
	if strings.Contains(d.screen(), "delete product") {
		t.Errorf("esc did not take the question away:\n%s", d.screen())
	}
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.settle()

	ctx := actorCtx("bob")
	root, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Handbook"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Chapter", "parent_id": root.ID}); err != nil {
		t.Fatal(err)
	}
	d.key("tab")
	d.waitFor("Handbook")
	d.key("d")
	d.waitFor(`delete document 1 "Handbook" (v1)? y yes · s with everything below it · n no`)
	d.key("s")
	d.waitFor(`deleted document 1 "Handbook" (tombstone v2) and 1 below it`)
	if strings.Contains(d.screen(), "Chapter") {
		t.Errorf("the subtree is still listed:\n%s", d.screen())
	}

	d.key("tab")
	d.waitFor("Product 1")
	if _, err := s.DeleteRecord(ctx, store.KindProduct, 1, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	d.waitUntil("product 1 gone", func() bool { return !strings.Contains(d.screen(), "Product 1 ") })
	d.key("h")
	d.waitFor("history of product 2")
	d.key("esc")
	// The history of a deleted record, as the history screen shows it.
	d.exec(func() tea.Msg { return openHistoryMsg{kind: store.KindProduct, id: 1} })
	d.waitFor("with these values (what a restore brings back)")
	d.golden("history_deleted")
}

// TestDelete_RestoreFromHistoryNamesSubtree: R on the history screen of a document deleted
// with its subtree brings back that document alone and names the documents that stay
// deleted, with the command that brings them back.
func TestDelete_RestoreFromHistoryNamesSubtree(t *testing.T) {
	s := newFakeStore(t)
	ctx := actorCtx("bob")
	root, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Handbook"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Chapter", "parent_id": root.ID})
	if err != nil {
		t.Fatal(err)
	}
	sec, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Section", "parent_id": ch.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteRecord(ctx, store.KindDocument, root.ID, store.Delete{ExpectVersion: 1, Subtree: true}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	d.exec(func() tea.Msg { return openHistoryMsg{kind: store.KindDocument, id: root.ID} })
	d.waitFor("with these values (what a restore brings back)")
	d.key("R")
	want := fmt.Sprintf("restored document %d as v3 · 2 documents deleted with it stay deleted (%d, %d); tandem restore document %d --subtree brings them back",
		root.ID, ch.ID, sec.ID, root.ID)
	h := d.app.screens[scrHistory].(*historyModel)
	d.waitUntil(want, func() bool { return h.status.text == want })
	for _, id := range []int64{ch.ID, sec.ID} {
		if _, err := s.FindRecord(context.Background(), store.KindDocument, id); store.ErrorCode(err) != store.ENOTFOUND {
			t.Fatalf("document %d after R on the history screen: %v, want still deleted", id, err)
		}
	}
}
