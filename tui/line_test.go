package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// TestLineField_Suggestions: availability suggests the registry's values and categories the
// items seen in loaded records; → takes the suggestion, and a set completes its last item.
func TestLineField_Suggestions(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	if _, err := s.UpdateRecord(actorCtx("seed"), store.KindProduct, 2, store.Update{BaseVersion: 1,
		Set: store.Values{"categories": []string{"lighting", "living"}}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "availability")
	replaceField(d, "b")
	d.waitFor("backorder")
	d.key("right")
	if got := d.app.editor.fields[6].text(); got != "backorder" {
		t.Fatalf("availability = %q after →, want backorder", got)
	}
	focusField(t, d, "categories")
	d.typeText("lig")
	d.key("right")
	d.typeText(",liv")
	d.waitFor("lighting,living")
	d.key("right")
	if got := d.app.editor.fields[3].text(); got != "lighting,living" {
		t.Fatalf("categories = %q, want lighting,living", got)
	}
	d.key("ctrl+s")
	d.waitFor("saved v2")
	r := mustRecord(t, s, 1)
	if r.Fields["availability"] != "backorder" || strings.Join(r.Fields["categories"].([]string), ",") != "lighting,living" {
		t.Fatalf("saved %v", r.Fields)
	}
}

// TestLineField_Keys: ctrl+w deletes the word before the cursor, alt+← moves a word back,
// and a paste of several lines becomes one line.
func TestLineField_Keys(t *testing.T) {
	l := newLineField()
	l.Focus()
	l.SetValue("brass desk lamp")
	l, _ = l.Update(keyMsg("ctrl+w"))
	if got := l.Value(); got != "brass desk " {
		t.Fatalf("ctrl+w: %q", got)
	}
	l, _ = l.Update(tea.KeyPressMsg{Code: tea.KeyLeft, Mod: tea.ModAlt})
	l, _ = l.Update(tea.KeyPressMsg{Code: 'X', Text: "X"})
	if got := l.Value(); got != "brass Xdesk " {
		t.Fatalf("alt+← then X: %q", got)
	}
	l, _ = l.Update(tea.PasteMsg{Content: "one\r\ntwo\x1b[31m"})
	if got := l.Value(); strings.ContainsAny(got, "\n\r\x1b") || !strings.Contains(got, "one two") {
		t.Fatalf("paste: %q", got)
	}
}

// TestLineField_ViewIsSafe: a bidi override or line separator typed or pasted into a field
// (or set by the merge view from a stored value) is drawn escaped, never raw; an ESC never
// gets into the value at all.
func TestLineField_ViewIsSafe(t *testing.T) {
	l := newLineField()
	l.Focus()
	l.SetValue("abc\u202edef\u2028")
	l, _ = l.Update(tea.PasteMsg{Content: "\x1b]0;pwned\x07x"})
	v := l.View()
	if strings.ContainsAny(v, "\u202e\u2028\x07") || strings.Contains(l.Value(), "\x1b") {
		t.Fatalf("unsafe rune drawn raw or ESC kept: view %q, value %q", v, l.Value())
	}
	if !strings.Contains(v, `\u202e`) || !strings.Contains(l.Value(), "\u202e") {
		t.Fatalf("view %q should show the override escaped, value %q keep it", v, l.Value())
	}
}

// TestSuggestions_NeverUnsafe: a stored category with an escape sequence is not suggested.
func TestSuggestions_NeverUnsafe(t *testing.T) {
	s := newFakeStore(t)
	d := newDriver(t, s, "alice")
	c := d.app.c
	c.noteItems([]*store.Record{{Kind: store.KindProduct, Fields: store.Values{"categories": []string{"lamps", "\x1b[2Jevil", "bidi\u202e"}}}})
	f, _ := c.reg.Field(store.KindProduct, "categories")
	if got := strings.Join(c.suggestions(f), ","); got != "lamps" {
		t.Fatalf("suggestions %q, want only lamps", got)
	}
}

// TestLineField_RightInsideText: → inside the text moves the cursor even when a suggestion
// matches; at the end it takes the suggestion.
func TestLineField_RightInsideText(t *testing.T) {
	l := newLineField()
	l.Focus()
	l.suggestFor([]string{"backorder"}, false)
	l.SetValue("ba")
	l, _ = l.Update(keyMsg("home"))
	l, _ = l.Update(keyMsg("right"))
	if l.Value() != "ba" || l.Position() != 1 {
		t.Fatalf("→ at 0: value %q, cursor %d; want ba, 1", l.Value(), l.Position())
	}
	l, _ = l.Update(keyMsg("end"))
	l, _ = l.Update(keyMsg("right"))
	if l.Value() != "backorder" {
		t.Fatalf("→ at the end: %q, want backorder", l.Value())
	}
}
