package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
)

// lineField is a one-line text input: bubbles' textinput (word movement with alt/ctrl+←→,
// ctrl+w deletes a word, bracketed paste, ctrl+u/ctrl+k, suggestions), with a steady cursor
// and tab left to the screens (it moves between fields). Its sanitizer drops control
// characters from what is typed, pasted or set, so a value never carries an escape sequence
// to the terminal; the form makes a stored value with control characters read-only before
// it gets here (form.fill).
type lineField struct {
	textinput.Model
}

// newLineField returns an empty input with tandem's keys: → at the end of the text accepts
// a suggestion (tab moves to the next field), ↓/↑ choose another.
func newLineField() lineField {
	ti := textinput.New()
	st := textinput.DefaultDarkStyles()
	st.Cursor.Blink = false // a blinking cursor would redraw twice a second for nothing
	ti.SetStyles(st)
	ti.KeyMap.AcceptSuggestion = key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "accept suggestion"))
	ti.SetWidth(40)
	return lineField{ti}
}

// Update edits the value for one key or paste. A pasted text of several lines becomes one
// line, its line breaks spaces.
func (l lineField) Update(msg tea.Msg) (lineField, tea.Cmd) {
	if p, ok := msg.(tea.PasteMsg); ok {
		p.Content = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(p.Content)
		msg = p
	}
	var cmd tea.Cmd
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, l.KeyMap.AcceptSuggestion) &&
		l.Position() < len([]rune(l.Value())) {
		// → inside the text moves the cursor; only at the end does it take the suggestion.
		l.KeyMap.AcceptSuggestion.SetEnabled(false)
		l.Model, cmd = l.Model.Update(msg)
		l.KeyMap.AcceptSuggestion.SetEnabled(true)
		return l, cmd
	}
	l.Model, cmd = l.Model.Update(msg)
	return l, cmd
}

// suggestFor sets what the input suggests for the value typed so far. For a set ("a,b,c")
// each known item completes the last one typed; for anything else the values themselves.
func (l *lineField) suggestFor(values []string, set bool) {
	if len(values) == 0 {
		l.ShowSuggestions = false
		return
	}
	l.ShowSuggestions = true
	if !set {
		l.SetSuggestions(values)
		return
	}
	v := l.Value()
	head := ""
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		head = v[:i+1]
	}
	out := make([]string, 0, len(values))
	for _, s := range values {
		out = append(out, head+s)
	}
	l.SetSuggestions(out)
}

// View draws the prompt, the text around the cursor and any suggestion, without the blank
// cells textinput pads its width with, so what follows the field on its line stays in sight.
// textinput's sanitizer keeps no control character in the value, but it keeps the bidi
// overrides and line separators that safe.Unsafe also refuses; they are shown escaped
// (\u202e), as safe.Line shows them, while the value keeps them as they are.
func (l lineField) View() string {
	v := strings.TrimRight(l.Model.View(), " ")
	if !strings.ContainsFunc(v, unsafeShown) {
		return v
	}
	var b strings.Builder
	for _, r := range v {
		if unsafeShown(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unsafeShown reports a rune of a drawn field that must not reach the terminal as it is.
// Runes below U+00A0 are left alone: the value holds none of them (textinput drops control
// characters), so those in the drawing are its own styling sequences.
func unsafeShown(r rune) bool { return r >= 0xa0 && safe.Unsafe(r) }
