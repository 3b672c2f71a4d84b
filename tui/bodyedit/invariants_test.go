package bodyedit

import (
	"math/rand/v2"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestModel_Invariants drives editors of several sizes with random keys and pastes over text
// full of wide characters, combining marks, tabs, controls and invalid bytes, and checks after
// every step what must always hold: the cursor sits on a cluster boundary and is drawn exactly
// once, the top of the view is a row boundary, and View is exactly height rows of width cells.
func TestModel_Invariants(t *testing.T) {
	pieces := []string{"a", "b", " ", "  ", "word", "日本", "e\u0301", "👩‍👩‍👧", "\t", "\x1b[31m", "\xff", "\r", "\n", "\r\n", "🇩🇪", strings.Repeat("x", 30)}
	keyNames := []string{"left", "right", "up", "down", "home", "end", "pgup", "pgdown", "ctrl+home", "ctrl+end",
		"ctrl+left", "ctrl+right", "enter", "tab", "backspace", "delete", "alt+backspace", "ctrl+k", "ctrl+u"}
	rng := rand.New(rand.NewPCG(1, 2))
	randText := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	open, close, _ := strings.Cut(New().CursorStyle.Render("\x00"), "\x00")
	for _, size := range [][2]int{{1, 1}, {3, 2}, {7, 4}, {20, 5}, {80, 24}} {
		m := New()
		m.SetValue(randText(60))
		m.SetSize(size[0], size[1])
		m.Focus()
		for step := range 1500 {
			var msg tea.Msg
			switch r := rng.IntN(10); {
			case r < 5:
				msg = namedKeys[keyNames[rng.IntN(len(keyNames))]]
			case r < 9:
				p := pieces[rng.IntN(len(pieces))]
				msg = tea.KeyPressMsg{Code: []rune(p)[0], Text: p}
			default:
				msg = tea.PasteMsg{Content: randText(rng.IntN(8))}
			}
			m, _ = m.Update(msg)
			if step%97 == 0 {
				m.SetSize(size[0]+rng.IntN(3), size[1]+rng.IntN(2))
			}
			checkInvariants(t, m, open, close)
			if t.Failed() {
				t.Fatalf("size %v, step %d, after %#v; value %q", size, step, msg, m.Value())
			}
		}
	}
}

func checkInvariants(t *testing.T, m Model, open, close string) {
	t.Helper()
	s := m.lines[m.line]
	if m.col < 0 || m.col > len(s) {
		t.Fatalf("cursor byte %d outside line of %d bytes", m.col, len(s))
	}
	i := 0
	for i < m.col {
		i, _, _ = cluster(s, i)
	}
	if i != m.col {
		t.Errorf("cursor byte %d is inside a cluster of %q", m.col, s)
	}
	if m.topLine >= len(m.lines) {
		t.Fatalf("top line %d of %d", m.topLine, len(m.lines))
	}
	if st, _ := rowOf(m.lines[m.topLine], m.topOff, m.width); st != m.topOff {
		t.Errorf("top offset %d is not a row start (row starts at %d) in %q", m.topOff, st, m.lines[m.topLine])
	}
	rows := strings.Split(m.View(), "\n")
	if len(rows) != m.height {
		t.Errorf("View() has %d rows, want %d", len(rows), m.height)
	}
	cursors := 0
	for _, r := range rows {
		cursors += strings.Count(r, open)
		if w := ansi.StringWidth(r); w != m.width {
			t.Errorf("View() row %q is %d cells wide, want %d", r, w, m.width)
		}
		plain := strings.ReplaceAll(strings.ReplaceAll(r, open, ""), close, "")
		if strings.ContainsAny(plain, "\x1b\r\t\x07") {
			t.Errorf("View() row %q holds a raw control character", r)
		}
	}
	if cursors != 1 {
		t.Errorf("View() draws the cursor %d times, want 1", cursors)
	}
}
