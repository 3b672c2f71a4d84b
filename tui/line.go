package tui

import (
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
)

// lineField is a one-line text input. (bubbles' textinput would need a module that go.mod
// does not require, atotto/clipboard, so tandem keeps this small one.)
type lineField struct {
	Prompt      string
	Placeholder string
	value       []rune
	pos         int
	width       int
	focused     bool
}

func newLineField() lineField { return lineField{width: 40} }

// SetValue, Value, SetWidth, CursorEnd, Focus and Blur work like textinput's.
func (l *lineField) SetValue(s string) { l.value = []rune(s); l.pos = len(l.value) }
func (l lineField) Value() string      { return string(l.value) }
func (l *lineField) SetWidth(w int)    { l.width = max(w, 1) }
func (l *lineField) CursorEnd()        { l.pos = len(l.value) }
func (l *lineField) Focus() tea.Cmd    { l.focused = true; return nil }
func (l *lineField) Blur()             { l.focused = false }

// Update edits the value for one key.
func (l lineField) Update(msg tea.Msg) (lineField, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || !l.focused {
		if p, ok := msg.(tea.PasteMsg); ok && l.focused {
			l.insert(strings.ReplaceAll(p.Content, "\n", " "))
		}
		return l, nil
	}
	switch k.String() {
	case "left", "ctrl+b":
		l.pos = max(l.pos-1, 0)
	case "right", "ctrl+f":
		l.pos = min(l.pos+1, len(l.value))
	case "home", "ctrl+a":
		l.pos = 0
	case "end":
		l.pos = len(l.value)
	case "backspace":
		if l.pos > 0 {
			l.value = append(l.value[:l.pos-1], l.value[l.pos:]...)
			l.pos--
		}
	case "delete", "ctrl+d":
		if l.pos < len(l.value) {
			l.value = append(l.value[:l.pos], l.value[l.pos+1:]...)
		}
	case "ctrl+u":
		l.value = l.value[l.pos:]
		l.pos = 0
	case "ctrl+k":
		l.value = l.value[:l.pos]
	default:
		if k.Text != "" && utf8.ValidString(k.Text) {
			l.insert(k.Text)
		}
	}
	return l, nil
}

func (l *lineField) insert(s string) {
	rs := []rune(s)
	v := make([]rune, 0, len(l.value)+len(rs))
	v = append(v, l.value[:l.pos]...)
	v = append(v, rs...)
	v = append(v, l.value[l.pos:]...)
	l.value = v
	l.pos += len(rs)
}

// View draws the prompt and the part of the value around the cursor.
func (l lineField) View() string {
	if len(l.value) == 0 && !l.focused && l.Placeholder != "" {
		return l.Prompt + l.Placeholder
	}
	start := 0
	if w := l.width - 1; l.pos > w {
		start = l.pos - w
	}
	before := safe.Line(string(l.value[start:l.pos]))
	if !l.focused {
		return l.Prompt + ansi.Truncate(safe.Line(string(l.value[start:])), l.width, "…")
	}
	cur, rest := " ", ""
	if l.pos < len(l.value) {
		cur, rest = safe.Line(string(l.value[l.pos])), safe.Line(string(l.value[l.pos+1:]))
	}
	return l.Prompt + ansi.Truncate(before+"\x1b[7m"+cur+"\x1b[27m"+rest, l.width, "…")
}
