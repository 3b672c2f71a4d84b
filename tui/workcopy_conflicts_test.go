package tui

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestWorkCopy_ConflictFromSyncElsewhereIsMarked: a sync run outside the TUI (tandem sync
// in another terminal) leaves a conflict; the TUI hears of it from its poll of the copy's
// state: the list marks the record's row with !, the status line says it as a sentence,
// the editor of the record shows a banner, and its key opens the merge view; esc there
// returns to the editor.
func TestWorkCopy_ConflictFromSyncElsewhereIsMarked(t *testing.T) {
	cs := newCopySetup(t, 2)
	d := cs.d
	bob := store.WithActor(cs.ctx, store.Actor{Name: "bob", Role: store.RoleEditor})
	if _, err := cs.src.UpdateRecord(bob, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"name": "Theirs"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.wc.UpdateRecord(cs.ctx, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"name": "Mine"}}); err != nil {
		t.Fatal(err)
	}
	d.settle()
	if rep := cs.syncElsewhere(t); len(rep.Conflicts) != 1 {
		t.Fatalf("the sync left %d conflicts, want 1", len(rep.Conflicts))
	}
	d.apply(copyPollMsg{}) // what the header's poll delivers every copyPoll
	d.settle()
	scr := d.screen()
	if !strings.Contains(scr, "a sync left 1 conflict: product 1: name changed on both sides.") {
		t.Fatalf("the status line does not say the conflict as a sentence:\n%s", scr)
	}
	var row1, row2 string
	for _, l := range strings.Split(scr, "\n") {
		switch {
		case strings.Contains(l, " 1 Mine "):
			row1 = l
		case strings.Contains(l, " 2 Product 2 "):
			row2 = l
		}
	}
	if !strings.HasPrefix(row1, "▸!") && !strings.HasPrefix(row1, " !") {
		t.Fatalf("the conflicted row is not marked: %q\n%s", row1, scr)
	}
	if strings.Contains(row2, "!") {
		t.Fatalf("a row without a conflict is marked: %q", row2)
	}
	// Open product 1 (the list is sorted; find its row).
	for d.app.list.rows[d.app.list.cursor].ID != 1 {
		d.key("j")
	}
	d.key("enter")
	d.waitFor("conflict from a sync: product 1: name changed on both sides · ctrl+g opens it")
	d.key("ctrl+g")
	d.settle()
	if d.app.screen != scrCopyMerge || !strings.Contains(d.screen(), "changed on both sides:") {
		t.Fatalf("ctrl+g opened no merge view:\n%s", d.screen())
	}
	d.key("esc")
	d.settle()
	if d.app.screen != scrEditor {
		t.Fatalf("esc in the merge view opened from the editor went to screen %d, want the editor:\n%s", d.app.screen, d.screen())
	}
}

// TestWorkCopy_RefusedCreateSaysWhy: a product created in the copy whose sku the source
// took meanwhile gets a screen that says why ("sku NEW-1 is taken on the source by product
// 3"), not a merge with nothing on one side; a new sku typed there resolves it, and the
// next sync creates it on the source.
func TestWorkCopy_RefusedCreateSaysWhy(t *testing.T) {
	cs := newCopySetup(t, 2)
	d := cs.d
	mine, err := cs.wc.CreateRecord(cs.ctx, store.KindProduct, store.Values{"sku": "NEW-1", "name": "My lamp"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := cs.src.CreateRecord(cs.ctx, store.KindProduct, store.Values{"sku": "NEW-1", "name": "Their lamp"})
	if err != nil {
		t.Fatal(err)
	}
	d.key("S")
	d.waitFor("conflict · new product")
	scr := d.screen()
	want := "sku NEW-1 is taken on the source by product " + itoa(theirs.ID)
	if got, w := d.app.list.status.text, "1 conflict: the source refused the new product "+itoa(mine.ID)+": "+want; got != w {
		t.Errorf("the list's status says %q, want %q", got, w)
	}
	for _, w := range []string{"You created product", want, "give sku another value", "drop the new product"} {
		if !strings.Contains(strings.ReplaceAll(scr, "\n", " "), w) {
			t.Errorf("the refused create's screen lacks %q:\n%s", w, scr)
		}
	}
	if strings.Contains(scr, "∅") || strings.Contains(scr, "changed on both sides") || strings.Contains(scr, ": sku\n") {
		t.Errorf("the refused create's screen shows an empty side or a stray field name:\n%s", scr)
	}
	d.key("enter")
	for range 5 {
		d.key("backspace")
	}
	d.typeText("NEW-2")
	d.key("enter")
	d.waitFor("sku set to NEW-2")
	if d.app.screen != scrList {
		t.Fatalf("resolving left screen %d up:\n%s", d.app.screen, d.screen())
	}
	d.key("S")
	d.waitFor("in sync")
	recs, err := cs.src.FindRecords(cs.ctx, store.Filter{Kind: store.KindProduct, Search: "NEW-2"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("the source has %d products with sku NEW-2 (%v), want 1", len(recs), err)
	}
}

// TestWorkCopy_RefusedCreateDropped: d on a refused create's screen deletes the new record
// in the copy, which drops its conflict.
func TestWorkCopy_RefusedCreateDropped(t *testing.T) {
	cs := newCopySetup(t, 2)
	d := cs.d
	if _, err := cs.wc.CreateRecord(cs.ctx, store.KindProduct, store.Values{"sku": "NEW-1", "name": "My lamp"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.src.CreateRecord(cs.ctx, store.KindProduct, store.Values{"sku": "NEW-1", "name": "Their lamp"}); err != nil {
		t.Fatal(err)
	}
	d.key("S")
	d.waitFor("conflict · new product")
	d.key("d")
	d.waitFor("dropped from this copy")
	cf, err := cs.wc.Conflicts(cs.ctx)
	if err != nil || len(cf) != 0 {
		t.Fatalf("%d conflicts left (%v), want none", len(cf), err)
	}
}
