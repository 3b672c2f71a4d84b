package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
)

// bodyField is the editor's multi-line text field: a minimal line editor (insert, delete,
// arrows, enter) that draws only the visible lines. It is the stand-in for tui/bodyedit,
// which replaces it once that component lands.
type bodyField struct {
	lines         []string
	row, col      int // cursor: line and byte offset
	top           int // first visible line
	width, height int
	focused       bool
}

func newBodyField() *bodyField { return &bodyField{lines: []string{""}, width: 40, height: 5} }

func (b *bodyField) SetValue(s string) {
	b.lines = strings.Split(s, "\n")
	b.row, b.col, b.top = 0, 0, 0
}

func (b *bodyField) Value() string    { return strings.Join(b.lines, "\n") }
func (b *bodyField) SetSize(w, h int) { b.width, b.height = max(w, 1), max(h, 1) }
func (b *bodyField) Focus() tea.Cmd   { b.focused = true; return nil }
func (b *bodyField) Blur()            { b.focused = false }

// Update edits the text for one key.
func (b *bodyField) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || !b.focused {
		return nil
	}
	line := b.lines[b.row]
	switch k.String() {
	case "up":
		b.row = max(b.row-1, 0)
	case "down":
		b.row = min(b.row+1, len(b.lines)-1)
	case "left":
		if b.col > 0 {
			b.col--
		} else if b.row > 0 {
			b.row--
			b.col = len(b.lines[b.row])
		}
	case "right":
		if b.col < len(line) {
			b.col++
		} else if b.row < len(b.lines)-1 {
			b.row++
			b.col = 0
		}
	case "home", "ctrl+a":
		b.col = 0
	case "end", "ctrl+e":
		b.col = len(line)
	case "enter":
		b.lines = append(b.lines[:b.row+1], b.lines[b.row:]...)
		b.lines[b.row], b.lines[b.row+1] = line[:min(b.col, len(line))], line[min(b.col, len(line)):]
		b.row++
		b.col = 0
	case "backspace":
		c := min(b.col, len(line))
		switch {
		case c > 0:
			_, size := lastRune(line[:c])
			b.lines[b.row] = line[:c-size] + line[c:]
			b.col = c - size
		case b.row > 0:
			prev := b.lines[b.row-1]
			b.lines[b.row-1] = prev + line
			b.lines = append(b.lines[:b.row], b.lines[b.row+1:]...)
			b.row--
			b.col = len(prev)
		}
	default:
		if k.Text != "" {
			c := min(b.col, len(line))
			b.lines[b.row] = line[:c] + k.Text + line[c:]
			b.col = c + len(k.Text)
		}
	}
	b.col = min(b.col, len(b.lines[b.row]))
	if b.row < b.top {
		b.top = b.row
	}
	if b.row >= b.top+b.height {
		b.top = b.row - b.height + 1
	}
	return nil
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xC0 != 0x80 {
			return []rune(s[i:])[0], len(s) - i
		}
	}
	return 0, 1
}

// View draws the visible lines only, with the cursor as a reversed cell.
func (b *bodyField) View() string {
	var out strings.Builder
	for i := b.top; i < b.top+b.height; i++ {
		if i > b.top {
			out.WriteByte('\n')
		}
		out.WriteString("│ ")
		if i >= len(b.lines) {
			continue
		}
		l := b.lines[i]
		if b.focused && i == b.row {
			c := min(b.col, len(l))
			cur := " "
			rest := ""
			if c < len(l) {
				_, size := firstRune(l[c:])
				cur, rest = l[c:c+size], l[c+size:]
			}
			out.WriteString(ansi.Truncate(safe.Line(l[:c])+"\x1b[7m"+safe.Line(cur)+"\x1b[27m"+safe.Line(rest), b.width, "…"))
			continue
		}
		out.WriteString(ansi.Truncate(safe.Line(l), b.width, "…"))
	}
	return out.String()
}

func firstRune(s string) (rune, int) {
	for i, r := range s {
		_ = i
		return r, len(string(r))
	}
	return 0, 0
}
