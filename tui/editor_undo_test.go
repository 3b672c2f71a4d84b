package tui

import (
	"strings"
	"testing"
)

// TestEditor_UndoRedoPerField: ctrl+z takes back the focused field's edits, a word at a
// time, without touching another field's; ctrl+y makes them again; the form is clean once
// everything is undone.
func TestEditor_UndoRedoPerField(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText(" deluxe edition")
	focusField(t, d, "price")
	replaceField(d, "99.00")
	focusField(t, d, "name")
	d.key("ctrl+z")
	d.waitFor("Product 1 deluxe")
	if strings.Contains(d.screen(), "deluxe edition") {
		t.Fatalf("undo took back nothing:\n%s", d.screen())
	}
	d.key("ctrl+z") // "deluxe "
	d.key("ctrl+z") // the space typed first
	d.waitUntil("name back to Product 1", func() bool { return d.app.editor.fields[1].text() == "Product 1" })
	d.key("ctrl+z")
	d.waitFor("nothing to undo in name")
	if !strings.Contains(d.screen(), "price          99.00") {
		t.Fatalf("undo in name changed price:\n%s", d.screen())
	}
	d.key("ctrl+y")
	d.key("ctrl+y")
	d.waitFor("Product 1 deluxe")
	d.key("ctrl+z")
	d.key("ctrl+z")
	focusField(t, d, "price")
	d.key("ctrl+z") // the typed value
	d.key("ctrl+z") // ctrl+k
	d.key("ctrl+z") // ctrl+u
	d.waitFor("price          10.01")
	if d.app.editor.dirty() {
		t.Fatalf("everything undone, yet the form is dirty:\n%s", d.screen())
	}
	// A counter's +/- steps are undone too, relative change included.
	focusField(t, d, "stock")
	d.key("+")
	d.key("+")
	d.waitFor("stock +2")
	d.key("ctrl+z")
	d.waitFor("stock +1")
	d.key("ctrl+s")
	d.waitFor("saved v2")
	if got := mustRecord(t, s, 1).Fields; got["stock"] != int64(21) || got["name"] != "Product 1" {
		t.Fatalf("saved %v, want stock 21 and the name as it was", got)
	}
}

// TestEditor_UndoInBody: ctrl+z in the description goes to the body editor's own history.
func TestEditor_UndoInBody(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "description")
	d.typeText("Brand new ")
	d.waitFor("Brand new A fine product.")
	d.key("ctrl+z")
	d.waitFor("Brand A fine product.")
	d.key("ctrl+z")
	d.key("ctrl+y")
	d.waitFor("Brand A fine product.")
	d.key("ctrl+z")
	if d.app.editor.dirty() {
		t.Fatalf("body undone, yet the form is dirty:\n%s", d.screen())
	}
}

// TestEditor_UndoExternalEdit: the text taken back from $EDITOR is one edit, undone by one
// ctrl+z, in a text field and in a one-line field.
func TestEditor_UndoExternalEdit(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "description")
	e := d.app.editor
	d.apply(extEditedMsg{ed: e, field: e.focus, value: "Written in vi.\n", start: e.currentDraft()})
	d.waitFor("Written in vi.")
	d.key("ctrl+z")
	d.waitFor("A fine product.")
	if e.dirty() {
		t.Fatal("the external edit undone, yet the form is dirty")
	}
	focusField(t, d, "name")
	d.apply(extEditedMsg{ed: e, field: e.focus, value: "Named in vi", start: e.currentDraft()})
	d.waitFor("Named in vi")
	d.key("ctrl+z")
	d.waitUntil("name back", func() bool { return e.fields[1].text() == "Product 1" })
}
