// Package bodyedit is a text editor component for long text fields (a product description, a
// document body of several megabytes) in a bubbletea program.
//
// The text is a slice of lines kept as the raw strings they were given, so invalid UTF-8, CRLF
// line endings and a missing final newline survive SetValue→Value untouched. An edit touches one
// line (O(line length)) or shifts the slice (a memmove of string headers). Soft wrap and display
// widths are computed only for the rows on screen: the top of the view is kept as a line and a
// byte offset of a wrapped row in it, and View renders forward from there until the height is
// filled. So a keystroke costs the same on a 20,000-line body as on a 100-line one. Undo and
// redo (ctrl+z, ctrl+y) replay recorded edits, never copies of the text (undo.go).
//
// Everything drawn goes through the same escaping as internal/safe.Line: control characters,
// escape sequences and invalid bytes in the content are shown as visible escapes like \x1b,
// never sent to the terminal.
package bodyedit

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Model is the body editor. Its zero value is not ready for use: create it with New.
type Model struct {
	// KeyMap holds the keys the editor answers to.
	KeyMap KeyMap
	// CursorStyle draws the cell under the cursor while the editor has focus.
	CursorStyle lipgloss.Style
	// TabText is what InsertTab inserts.
	TabText string

	lines []string
	crlf  bool

	// line and col are the cursor: col is a byte offset into lines[line], always at the start
	// of a grapheme cluster (or at the end of the line).
	line, col int
	// goalX is the screen column that vertical moves aim for, or -1 to take the cursor's.
	goalX int

	// topLine and topOff are the first row on screen: a line and the byte offset where one
	// of its wrapped rows starts.
	topLine, topOff int

	width, height int
	focused       bool
	readOnly      bool

	rev, savedRev uint64

	// undo and redo are the steps of edits that ctrl+z and ctrl+y take back and make again
	// (undo.go); joinable says the next edit may join the last step (no move in between).
	undo, redo []step
	joinable   bool
}

// New returns an empty, unfocused editor with the default keys and a reverse-video cursor. Give
// it a size with SetSize before showing it.
func New() Model {
	return Model{
		KeyMap:      DefaultKeyMap(),
		CursorStyle: lipgloss.NewStyle().Reverse(true),
		TabText:     "    ",
		lines:       []string{""},
		goalX:       -1,
	}
}

// SetValue replaces the text and puts the cursor at its start. A text in which every line ends
// with CRLF keeps CRLF in Value; any other text is split on LF only, so a lone or mixed CR stays
// part of its line (and is shown as \r). SetValue does not count as a change: Changed reports
// false afterwards.
func (m *Model) SetValue(s string) {
	m.lines, m.crlf = splitText(s)
	m.line, m.col, m.goalX = 0, 0, -1
	m.topLine, m.topOff = 0, 0
	m.rev++
	m.savedRev = m.rev
	m.undo, m.redo, m.joinable = nil, nil, false
}

// splitText splits s into lines the way SetValue keeps them: on LF, with the CR of CRLF
// dropped when every line ends with CRLF (crlf reports it).
func splitText(s string) (lines []string, crlf bool) {
	lines = strings.Split(s, "\n")
	crlf = len(lines) > 1
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasSuffix(l, "\r") {
			crlf = false
			break
		}
	}
	if crlf {
		for i, l := range lines[:len(lines)-1] {
			lines[i] = l[:len(l)-1]
		}
	}
	return lines, crlf
}

// Value returns the text, with the line endings it was given. It joins all lines, so it costs
// O(size of the text): call it to save, not on every key.
func (m Model) Value() string {
	if m.crlf {
		return strings.Join(m.lines, "\r\n")
	}
	return strings.Join(m.lines, "\n")
}

// CRLF reports whether the text uses CRLF line endings (decided by SetValue).
func (m Model) CRLF() bool { return m.crlf }

// LineCount returns the number of lines; a text ending in a newline has an empty last line.
func (m Model) LineCount() int { return len(m.lines) }

// EndsWithNewline reports whether the text ends with a line break: its last line is empty.
func (m Model) EndsWithNewline() bool { return len(m.lines) > 1 && m.lines[len(m.lines)-1] == "" }

// Revision returns a counter that grows with every change to the text, including SetValue.
func (m Model) Revision() uint64 { return m.rev }

// Changed reports whether the text was edited since the last SetValue or MarkSaved.
func (m Model) Changed() bool { return m.rev != m.savedRev }

// MarkSaved records the current text as saved: Changed reports false until the next edit.
func (m *Model) MarkSaved() { m.savedRev = m.rev }

// SetSize sets the size of the view in cells. View always returns exactly height lines of
// width cells each.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = max(width, 0), max(height, 0)
	m.fixTop()
	if m.width > 0 && m.topOff > 0 {
		// The old top row may not be a row boundary at the new width.
		m.topOff, _ = rowOf(m.lines[m.topLine], m.topOff, m.width)
	}
	if m.width > 0 && m.height > 0 {
		// A taller or wider view may have room for more of the text above.
		m.clampTop()
	}
	m.scrollToCursor()
}

// Width returns the width of the view in cells.
func (m Model) Width() int { return m.width }

// Height returns the height of the view in rows.
func (m Model) Height() int { return m.height }

// Focus gives the editor focus: it answers keys and draws its cursor. It returns no command
// (the cursor does not blink); the result is there to match the bubbles components.
func (m *Model) Focus() tea.Cmd {
	m.focused = true
	return nil
}

// Blur takes focus away: Update ignores messages and View draws no cursor.
func (m *Model) Blur() { m.focused = false }

// Focused reports whether the editor has focus.
func (m Model) Focused() bool { return m.focused }

// SetReadOnly switches read-only mode: the text can be scrolled and the cursor moved, but
// keys and pastes do not change it.
func (m *Model) SetReadOnly(ro bool) { m.readOnly = ro }

// ReadOnly reports whether the editor is read-only.
func (m Model) ReadOnly() bool { return m.readOnly }

// Position returns the cursor's line and column, both counted from 0; the column counts
// characters (grapheme clusters), not bytes or cells. Add 1 to each for a status line.
func (m Model) Position() (line, column int) {
	s := m.lines[m.line]
	for i := 0; i < m.col; {
		i, _, _ = cluster(s, i)
		column++
	}
	return m.line, column
}

// SetCursor moves the cursor to line and column (counted from 0, the column in characters as
// Position returns it), clamped to the text, and scrolls it into view.
func (m *Model) SetCursor(line, column int) {
	m.line = min(max(line, 0), len(m.lines)-1)
	s := m.lines[m.line]
	i := 0
	for ; column > 0 && i < len(s); column-- {
		i, _, _ = cluster(s, i)
	}
	m.col, m.goalX = i, -1
	m.scrollToCursor()
}

// Update handles key presses and pastes while the editor has focus. It never returns a command.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if !m.focused {
		return m, nil
	}
	switch msg := msg.(type) {
	case tea.PasteMsg:
		if !m.readOnly {
			m.insert(msg.Content)
			m.scrollToCursor()
		}
	case tea.KeyPressMsg:
		if m.handleKey(msg) {
			m.scrollToCursor()
		}
	}
	return m, nil
}

// handleKey applies one key and reports whether it did anything.
func (m *Model) handleKey(msg tea.KeyPressMsg) bool {
	km := &m.KeyMap
	keepGoal := false
	rev := m.rev
	switch {
	case key.Matches(msg, km.CharacterForward):
		m.right()
	case key.Matches(msg, km.CharacterBackward):
		m.left()
	case key.Matches(msg, km.WordForward):
		m.wordRight()
	case key.Matches(msg, km.WordBackward):
		m.wordLeft()
	case key.Matches(msg, km.LineNext):
		m.moveRows(1)
		keepGoal = true
	case key.Matches(msg, km.LinePrevious):
		m.moveRows(-1)
		keepGoal = true
	case key.Matches(msg, km.LineStart):
		m.col = 0
	case key.Matches(msg, km.LineEnd):
		m.col = len(m.lines[m.line])
	case key.Matches(msg, km.PageDown):
		m.page(1)
		keepGoal = true
	case key.Matches(msg, km.PageUp):
		m.page(-1)
		keepGoal = true
	case key.Matches(msg, km.InputBegin):
		m.line, m.col = 0, 0
	case key.Matches(msg, km.InputEnd):
		m.line = len(m.lines) - 1
		m.col = len(m.lines[m.line])
	case m.readOnly:
		return false
	case key.Matches(msg, km.Undo):
		return m.Undo()
	case key.Matches(msg, km.Redo):
		return m.Redo()
	case key.Matches(msg, km.InsertNewline):
		m.insert("\n")
	case key.Matches(msg, km.InsertTab):
		m.insert(m.TabText)
	case key.Matches(msg, km.DeleteCharacterBackward):
		m.backspace()
	case key.Matches(msg, km.DeleteCharacterForward):
		m.deleteForward()
	case key.Matches(msg, km.DeleteWordBackward):
		if m.col == 0 {
			m.backspace()
		} else {
			end := m.col
			m.wordLeft()
			m.deleteRange(m.col, end)
		}
	case key.Matches(msg, km.DeleteAfterCursor):
		if m.col == len(m.lines[m.line]) {
			m.deleteForward()
		} else {
			m.deleteRange(m.col, len(m.lines[m.line]))
		}
	case key.Matches(msg, km.DeleteBeforeCursor):
		m.deleteRange(0, m.col)
	case msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt|tea.ModSuper|tea.ModMeta|tea.ModHyper) == 0:
		m.insert(msg.Text)
	default:
		return false
	}
	if !keepGoal {
		m.goalX = -1
	}
	if m.rev == rev {
		m.joinable = false // the cursor moved: the next edit starts a new undo step
	}
	return true
}

// edited records a change of line l: a new revision, and a top row that may no longer be a
// row boundary when l is the top line.
func (m *Model) edited(l int) {
	m.rev++
	m.goalX = -1
	if l == m.topLine && m.topOff > 0 && m.width > 0 && m.topLine < len(m.lines) {
		s := m.lines[m.topLine]
		m.topOff, _ = rowOf(s, min(m.topOff, len(s)), m.width)
	}
}

// insert inserts text at the cursor and moves the cursor after it. CRLF and lone CR in the
// text (terminals paste line breaks as CR) become line breaks.
func (m *Model) insert(text string) {
	if text == "" {
		return
	}
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	m.record(op{line: m.line, col: m.col, ins: text})
	s := m.lines[m.line]
	head, tail := s[:m.col], s[m.col:]
	parts := strings.Split(text, "\n")
	if len(parts) == 1 {
		m.lines[m.line] = head + text + tail
		m.col += len(text)
		m.edited(m.line)
		return
	}
	last := len(parts) - 1
	m.col = len(parts[last])
	parts[0] = head + parts[0]
	parts[last] += tail
	m.lines = slices.Replace(m.lines, m.line, m.line+1, parts...)
	first := m.line
	m.line += last
	m.edited(first)
}

// deleteRange deletes bytes [from, to) of the cursor line and leaves the cursor at from.
func (m *Model) deleteRange(from, to int) {
	if from >= to {
		return
	}
	s := m.lines[m.line]
	m.record(op{line: m.line, col: from, del: s[from:to]})
	m.lines[m.line] = s[:from] + s[to:]
	m.col = from
	m.edited(m.line)
}

// backspace deletes the character before the cursor, joining the line to the one above at the
// start of a line.
func (m *Model) backspace() {
	if m.col > 0 {
		m.deleteRange(prevBoundary(m.lines[m.line], m.col), m.col)
		return
	}
	if m.line == 0 {
		return
	}
	prev := m.lines[m.line-1]
	m.record(op{line: m.line - 1, col: len(prev), del: "\n"})
	m.lines[m.line-1] = prev + m.lines[m.line]
	m.lines = slices.Delete(m.lines, m.line, m.line+1)
	m.line--
	m.col = len(prev)
	m.edited(m.line)
}

// deleteForward deletes the character under the cursor, joining the next line at the end of a
// line.
func (m *Model) deleteForward() {
	s := m.lines[m.line]
	if m.col < len(s) {
		end, _, _ := cluster(s, m.col)
		m.deleteRange(m.col, end)
		return
	}
	if m.line == len(m.lines)-1 {
		return
	}
	m.record(op{line: m.line, col: len(s), del: "\n"})
	m.lines[m.line] = s + m.lines[m.line+1]
	m.lines = slices.Delete(m.lines, m.line+1, m.line+2)
	m.edited(m.line)
}

func (m *Model) left() {
	if m.col > 0 {
		m.col = prevBoundary(m.lines[m.line], m.col)
	} else if m.line > 0 {
		m.line--
		m.col = len(m.lines[m.line])
	}
}

func (m *Model) right() {
	if s := m.lines[m.line]; m.col < len(s) {
		m.col, _, _ = cluster(s, m.col)
	} else if m.line < len(m.lines)-1 {
		m.line++
		m.col = 0
	}
}

// isSpace reports whether a cluster's text separates words.
func isSpace(text string) bool { return text == " " || text == "\t" }

// wordRight moves to the end of the next word, or to the next line at the end of a line.
func (m *Model) wordRight() {
	s := m.lines[m.line]
	if m.col == len(s) {
		m.right()
		return
	}
	i := m.col
	for i < len(s) {
		end, text, _ := cluster(s, i)
		if !isSpace(text) {
			break
		}
		i = end
	}
	for i < len(s) {
		end, text, _ := cluster(s, i)
		if isSpace(text) {
			break
		}
		i = end
	}
	m.col = i
}

// wordLeft moves to the start of the previous word, or to the line above at the start of a
// line.
func (m *Model) wordLeft() {
	s := m.lines[m.line]
	if m.col == 0 {
		m.left()
		return
	}
	i := m.col
	for i > 0 {
		p := prevBoundary(s, i)
		if _, text, _ := cluster(s, p); !isSpace(text) {
			break
		}
		i = p
	}
	for i > 0 {
		p := prevBoundary(s, i)
		if _, text, _ := cluster(s, p); isSpace(text) {
			break
		}
		i = p
	}
	m.col = i
}
