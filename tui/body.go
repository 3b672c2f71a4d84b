package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/tui/bodyedit"
)

// bodyField is the editor's multi-line text field: tui/bodyedit, whose keystrokes cost what
// is on screen, not the size of the document. Value joins every line, so bodyField caches it
// by the editor's revision: a keystroke never pays for the whole document.
type bodyField struct {
	m        bodyedit.Model
	rev      uint64
	value    string
	first    string
	valueRev uint64
	valid    bool
}

func newBodyField() *bodyField {
	m := bodyedit.New()
	m.KeyMap.InsertTab.SetEnabled(false) // tab moves between fields
	return &bodyField{m: m}
}

// SetValue replaces the text.
func (b *bodyField) SetValue(s string) {
	b.m.SetValue(s)
	b.value, b.valueRev, b.valid = s, b.m.Revision(), true
}

// Replace puts s in place of the text as one edit that ctrl+z takes back.
func (b *bodyField) Replace(s string) { b.m.Replace(s) }

// Value returns the text; it joins the lines only when the text changed since the last call.
func (b *bodyField) Value() string {
	if !b.valid || b.valueRev != b.m.Revision() {
		b.value, b.valueRev, b.valid = b.m.Value(), b.m.Revision(), true
	}
	return b.value
}

// Revision grows with every change to the text.
func (b *bodyField) Revision() uint64 { return b.m.Revision() }

// LineCount is the number of lines, without a final empty one. It costs the same on any
// text: the focused body editor shows it on every frame.
func (b *bodyField) LineCount() int {
	n := b.m.LineCount()
	if b.m.EndsWithNewline() {
		n--
	}
	return n
}

// Position is the cursor's line and column, both counted from 1, as a status line says them.
func (b *bodyField) Position() (line, column int) {
	l, c := b.m.Position()
	return l + 1, c + 1
}

// SetSize, Focus, Blur, SetReadOnly, View and Update pass through to the body editor.
func (b *bodyField) SetSize(w, h int)    { b.m.SetSize(w, h) }
func (b *bodyField) Focus() tea.Cmd      { return b.m.Focus() }
func (b *bodyField) Blur()               { b.m.Blur() }
func (b *bodyField) SetReadOnly(ro bool) { b.m.SetReadOnly(ro) }
func (b *bodyField) View() string        { return b.m.View() }
func (b *bodyField) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	b.m, cmd = b.m.Update(msg)
	return cmd
}
