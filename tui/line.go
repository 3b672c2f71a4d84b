package tui

import (
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
)

// lineKeyMap is the keys a one-line field answers to, like bodyedit.KeyMap for the body
// editor: the field's own editing keys, apart from the screens' KeyMap.
type lineKeyMap struct {
	Left, Right, Home, End                                key.Binding
	DeleteBack, DeleteForward, DeleteToStart, DeleteToEnd key.Binding
}

var lineKeys = lineKeyMap{
	Left:          key.NewBinding(key.WithKeys("left", "ctrl+b"), key.WithHelp("←", "character backward")),
	Right:         key.NewBinding(key.WithKeys("right", "ctrl+f"), key.WithHelp("→", "character forward")),
	Home:          key.NewBinding(key.WithKeys("home", "ctrl+a"), key.WithHelp("home", "start")),
	End:           key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "end")),
	DeleteBack:    key.NewBinding(key.WithKeys("backspace"), key.WithHelp("backspace", "delete back")),
	DeleteForward: key.NewBinding(key.WithKeys("delete", "ctrl+d"), key.WithHelp("delete", "delete forward")),
	DeleteToStart: key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "delete to start")),
	DeleteToEnd:   key.NewBinding(key.WithKeys("ctrl+k"), key.WithHelp("ctrl+k", "delete to end")),
}

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
	km := lineKeys
	switch {
	case key.Matches(k, km.Left):
		l.pos = max(l.pos-1, 0)
	case key.Matches(k, km.Right):
		l.pos = min(l.pos+1, len(l.value))
	case key.Matches(k, km.Home):
		l.pos = 0
	case key.Matches(k, km.End):
		l.pos = len(l.value)
	case key.Matches(k, km.DeleteBack):
		if l.pos > 0 {
			l.value = append(l.value[:l.pos-1], l.value[l.pos:]...)
			l.pos--
		}
	case key.Matches(k, km.DeleteForward):
		if l.pos < len(l.value) {
			l.value = append(l.value[:l.pos], l.value[l.pos+1:]...)
		}
	case key.Matches(k, km.DeleteToStart):
		l.value = l.value[l.pos:]
		l.pos = 0
	case key.Matches(k, km.DeleteToEnd):
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
