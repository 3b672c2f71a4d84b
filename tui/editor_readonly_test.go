package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// longText is a text of n numbered lines.
func longText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line " + itoa(int64(i)) + " of the text\n")
	}
	return b.String()
}

// TestEditor_ReadOnlyLongTextScrolls: a record held by someone else shows its description
// as a first line with a (+N lines) marker; tab onto it opens the whole text in a read-only
// view that scrolls with pgdn, and typing into it changes nothing.
func TestEditor_ReadOnlyLongTextScrolls(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	if _, err := s.UpdateRecord(actorCtx("seed"), store.KindProduct, 1, store.Update{BaseVersion: 1,
		Set: store.Values{"description": longText(60)}}); err != nil {
		t.Fatal(err)
	}
	mustLease(t, s, "bob", 1, time.Minute)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	d.waitFor("read-only: held by bob")
	d.waitFor("line 1 of the text  (+59 lines)")
	focusField(t, d, "description")
	d.waitFor("read-only · 60 lines · ↑/↓ pgup/pgdn scroll")
	if !strings.Contains(d.screen(), "line 2 of the text") {
		t.Fatalf("the read-only view does not show the text:\n%s", d.screen())
	}
	d.golden("editor_readonly_view")
	for range 5 {
		d.key("pgdown")
	}
	d.typeText("x")
	scr := d.screen()
	if strings.Contains(scr, "line 1 of the text") || !strings.Contains(scr, "line 40 of the text") {
		t.Fatalf("pgdn did not scroll the read-only view:\n%s", scr)
	}
	if strings.Contains(scr, "xline") || strings.Contains(scr, "text x") || d.app.editor.dirty() {
		t.Fatalf("typing changed a read-only text:\n%s", scr)
	}
}

// TestEditor_ReadOnlyFieldOfEditableRecord: a long text a person may not write (a system
// field) is a tab stop in an editable record, shown in the read-only view.
func TestEditor_ReadOnlyFieldOfEditableRecord(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	sys := store.WithActor(t.Context(), store.Actor{Name: "worker:index", Role: store.RoleSystem})
	if _, err := s.UpdateRecord(sys, store.KindProduct, 1, store.Update{BaseVersion: 1,
		Set: store.Values{"search_index": longText(30)}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.Height = 15 })
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	openProduct(t, d, 1, "enter")
	focusField(t, d, "search index")
	d.waitFor("read-only · 30 lines")
	d.golden("editor_readonly_view_15rows")
	d.key("pgdown")
	d.key("backspace")
	if d.app.editor.dirty() {
		t.Fatal("backspace in a read-only view made the form dirty")
	}
	if !strings.Contains(d.screen(), "ctrl+s save") {
		t.Fatalf("footer missing at 15 rows:\n%s", d.screen())
	}
}

// TestEditor_ControlCharactersSayWhySkipped: a name another program wrote with an escape
// sequence is marked read-only with the reason, and tab passing over it says why, naming
// the command that changes it; no raw control character reaches the terminal.
func TestEditor_ControlCharactersSayWhySkipped(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, hostile{s}, "alice")
	openProduct(t, d, 1, "enter")
	d.waitFor("read-only: control characters")
	said := ""
	for range len(d.app.editor.fields) {
		d.key("tab")
		if st := d.app.editor.status.text; strings.Contains(st, "skipped name") {
			said = st
			if view := d.app.Render(); strings.ContainsAny(view, "\x07") || strings.Contains(view, "\x1b[2J") {
				t.Fatalf("raw control characters reached the screen: %q", view)
			}
			break
		}
	}
	if said == "" {
		t.Fatalf("tab passed over the name without saying why:\n%s", d.screen())
	}
	if !strings.Contains(said, "control characters") || !strings.Contains(said, "tandem set product 1 name=") {
		t.Fatalf("status %q does not say why nor how to change it", said)
	}
	if fi := d.app.editor.fields[d.app.editor.focus]; fi.f.Name == "name" {
		t.Fatal("tab stopped on the read-only name")
	}
}
