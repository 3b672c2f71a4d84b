package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// helpColumnGap is the space between two columns of the help screen.
const helpColumnGap = 2

// helpContent lays out KeyMap.helpGroups for the screen's width: the columns side by side as
// far as they fit, the rest in further rows below (on a narrow terminal one column each). The
// lines do not depend on the height: a short terminal scrolls through them (helpView).
func (c *common) helpContent() []string {
	var rows, row []string
	rowWidth := 0
	for _, col := range c.keys.helpGroups() {
		groups := make([]string, len(col))
		for j, g := range col {
			// Each group is bubbles' full help under its title.
			c.help.SetWidth(0)
			groups[j] = c.styles.Header.Render(g.title) + "\n" + c.help.FullHelpView([][]key.Binding{g.keys})
		}
		rendered := strings.Join(groups, "\n\n")
		w := lipgloss.Width(rendered)
		if len(row) > 0 && rowWidth+helpColumnGap+w > c.width {
			rows = append(rows, joinHelpColumns(row))
			row, rowWidth = nil, 0
		}
		if len(row) > 0 {
			rowWidth += helpColumnGap
		}
		row, rowWidth = append(row, rendered), rowWidth+w
	}
	rows = append(rows, joinHelpColumns(row))
	return strings.Split(strings.Join(rows, "\n\n"), "\n")
}

// joinHelpColumns sets columns side by side, helpColumnGap apart.
func joinHelpColumns(cols []string) string {
	padded := make([]string, len(cols))
	for i, col := range cols {
		padded[i] = col
		if i < len(cols)-1 {
			padded[i] = lipgloss.NewStyle().PaddingRight(helpColumnGap).Render(col)
		}
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, padded...)
}

// helpWindow returns how many of n lines of keys the help screen shows on a body of height
// lines, and whether they scroll: the title and the footer always take a line each, and a
// scrolling help one more for its marker.
func helpWindow(n, height int) (lines int, scrolls bool) {
	if n+2 <= height {
		return n, false
	}
	return max(min(height-3, n), 1), true
}

// helpModel is the help overlay: the keys of every screen, scrolled when they do not fit.
// It closes itself by sending closeHelpMsg.
type helpModel struct {
	c   *common
	top int // the first line of keys shown
}

// closeHelpMsg asks the root to take the help overlay down.
type closeHelpMsg struct{}

func newHelp(c *common) *helpModel { return &helpModel{c: c} }

// View draws the help screen: the title, the keys from line top on as far as they fit, a
// marker saying what is above and below when they do not all fit, and the footer.
func (m *helpModel) View() string {
	c := m.c
	lines := c.helpContent()
	window, scrolls := helpWindow(len(lines), c.height)
	top := min(max(m.top, 0), len(lines)-window)
	out := append([]string{c.styles.Title.Render("tandem · keys")}, lines[top:top+window]...)
	if scrolls {
		out = append(out, c.styles.Header.Render(helpMarker(c.keys, top, window, len(lines))))
	}
	k := c.keys
	out = append(out, c.styles.Footer.Render(fmt.Sprintf("%s, %s or %s: close help · %s opens help also while typing in a field",
		keyName(k.Help), keyName(k.HelpAnywhere), keyName(k.Back), keyName(k.HelpAnywhere))))
	return strings.Join(out, "\n")
}

// helpMarker says which lines of n a scrolling help shows and how to see the rest.
func helpMarker(k KeyMap, top, window, n int) string {
	var where string
	switch above, below := top > 0, top+window < n; {
	case above && below:
		where = "↑↓ more above and below"
	case above:
		where = "↑ more above"
	default:
		where = "↓ more below"
	}
	return fmt.Sprintf("%s · %d–%d of %d · scroll %s %s %s %s", where, top+1, top+window, n,
		k.Down.Help().Key, k.Up.Help().Key, k.PageDown.Help().Key, k.PageUp.Help().Key)
}

// Update handles a key while the help is shown: the keys that open it, esc and q close
// it, the moving keys scroll it; everything else is ignored.
func (m *helpModel) Update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k := m.c.keys
	n := len(m.c.helpContent())
	window, _ := helpWindow(n, m.c.height)
	switch {
	case key.Matches(kp, k.Help, k.HelpAnywhere, k.Back, k.Quit):
		m.c.send(closeHelpMsg{})
	case key.Matches(kp, k.Down):
		m.top++
	case key.Matches(kp, k.Up):
		m.top--
	case key.Matches(kp, k.PageDown):
		m.top += window
	case key.Matches(kp, k.PageUp):
		m.top -= window
	}
	// Clamped here too, not only when drawn, so k right after overscrolling moves at once.
	m.top = min(max(m.top, 0), n-window)
	return nil
}
