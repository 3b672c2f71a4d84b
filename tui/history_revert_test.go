package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// mustSave writes set on product 1 as who, on base.
func mustSave(t *testing.T, s store.Store, who string, base int64, set store.Values) {
	t.Helper()
	if _, err := s.UpdateRecord(actorCtx(who), store.KindProduct, 1, store.Update{BaseVersion: base, Set: set}); err != nil {
		t.Fatal(err)
	}
}

// TestHistory_RevertToVersion: r on v1 in the history opens the editor with v1's values on
// top of v3; ctrl+s saves them as v4, a new version (the history keeps v2 and v3).
func TestHistory_RevertToVersion(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	mustSave(t, s, "bob", 1, store.Values{"price": int64(2000)})
	mustSave(t, s, "carol", 2, store.Values{"name": "Renamed", "description": "Gone.\n"})
	d := newDriver(t, s, "alice")
	d.key("h")
	d.waitFor("v3")
	d.key("r")
	d.waitFor("v3 is the current version")
	d.key("j")
	d.key("j")
	d.key("r")
	d.waitFor("reverting to v1: check the form, ctrl+s saves it as a new version on v3")
	d.golden("history_revert_editor")
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	d.golden("history_revert_editor_15rows")
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 24})
	if scr := d.screen(); !strings.Contains(scr, "Product 1") || !strings.Contains(scr, "10.01") {
		t.Fatalf("the form does not hold v1's values:\n%s", scr)
	}
	// One field's revert can be taken back before saving.
	focusField(t, d, "price")
	d.key("ctrl+z")
	d.waitFor("price          20.00")
	d.key("ctrl+y")
	// The description's revert too, in the body editor's own history.
	focusField(t, d, "description")
	d.key("ctrl+z")
	d.waitFor("Gone.")
	d.key("ctrl+y")
	d.waitFor("Second line.")
	d.key("ctrl+s")
	d.waitFor("saved v4")
	r := mustRecord(t, s, 1)
	if r.Fields["name"] != "Product 1" || r.Fields["price"] != int64(1001) {
		t.Fatalf("after the revert: %v", r.Fields)
	}
	if r.Fields["description"] != "A fine product.\nSecond line.\nThird line.\n" {
		t.Fatalf("description not reverted: %q", r.Fields["description"])
	}
	vs, err := s.FindHistory(t.Context(), store.KindProduct, 1)
	if err != nil || len(vs) != 4 || vs[0].Actor != "alice" {
		t.Fatalf("history after the revert: %d versions, newest by %v (%v)", len(vs), vs[0].Actor, err)
	}
}

// TestHistory_RevertConflict: a version saved after the history was read makes the revert's
// save a conflict, shown in the dialog, and nothing is overwritten.
func TestHistory_RevertConflict(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	mustSave(t, s, "bob", 1, store.Values{"price": int64(2000)})
	d := newDriver(t, s, "alice")
	d.key("h")
	d.waitFor("v2")
	d.key("j")
	d.key("r")
	d.waitFor("reverting to v1")
	// After the revert's form was made on v2: saved before the "j", it could reach the
	// history screen first (through the feed), put v3 on top and make "j" choose v2.
	mustSave(t, s, "carol", 2, store.Values{"price": int64(3000)})
	d.key("ctrl+s")
	d.waitFor("product 1 changed while you were editing")
	d.waitFor("carol saved v3; you edited v2")
	d.golden("history_revert_conflict")
	if got := mustRecord(t, s, 1); got.Version != 3 || got.Fields["price"] != int64(3000) {
		t.Fatalf("the revert overwrote carol's save: v%d %v", got.Version, got.Fields["price"])
	}
}
