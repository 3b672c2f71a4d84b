package bodyedit

import (
	"math"
	"strings"
)

// wrapWidth returns the width rows wrap at; before SetSize lines do not wrap.
func (m *Model) wrapWidth() int {
	if m.width <= 0 {
		return math.MaxInt32
	}
	return m.width
}

// nextRow returns the screen row after the one starting at byte st of line l.
func (m *Model) nextRow(l, st int) (int, int, bool) {
	if next, ok := nextRowStart(m.lines[l], st, m.wrapWidth()); ok {
		return l, next, true
	}
	if l+1 < len(m.lines) {
		return l + 1, 0, true
	}
	return l, st, false
}

// prevRow returns the screen row before the one starting at byte st of line l.
func (m *Model) prevRow(l, st int) (int, int, bool) {
	if st > 0 {
		start, _ := rowOf(m.lines[l], st-1, m.wrapWidth())
		return l, start, true
	}
	if l > 0 {
		return l - 1, lastRow(m.lines[l-1], m.wrapWidth()), true
	}
	return l, st, false
}

// rowEnd returns where the row starting at st of line l ends, and whether it is the line's
// last row.
func (m *Model) rowEnd(l, st int) (int, bool) {
	if next, ok := nextRowStart(m.lines[l], st, m.wrapWidth()); ok {
		return next, false
	}
	return len(m.lines[l]), true
}

// moveRows moves the cursor n screen rows down (n < 0: up), aiming for the goal column. Past
// the first or last row it goes to the start or end of the text.
func (m *Model) moveRows(n int) {
	w := m.wrapWidth()
	s := m.lines[m.line]
	st, _ := rowOf(s, m.col, w)
	if m.goalX < 0 {
		m.goalX = columnOf(s, st, m.col)
	}
	l, ok := m.line, true
	for ; n > 0; n-- {
		if l, st, ok = m.nextRow(l, st); !ok {
			m.col = len(m.lines[m.line])
			return
		}
		m.line = l
	}
	for ; n < 0; n++ {
		if l, st, ok = m.prevRow(l, st); !ok {
			m.col = 0
			return
		}
		m.line = l
	}
	end, last := m.rowEnd(l, st)
	m.col = offsetAt(m.lines[l], st, end, last, m.goalX)
}

// page scrolls a screen down (dir > 0) or up and moves the cursor as far, so it keeps its
// place on the screen.
func (m *Model) page(dir int) {
	n := max(m.height, 1)
	for range n {
		var ok bool
		if dir > 0 {
			m.topLine, m.topOff, ok = m.nextRow(m.topLine, m.topOff)
		} else {
			m.topLine, m.topOff, ok = m.prevRow(m.topLine, m.topOff)
		}
		if !ok {
			break
		}
	}
	if dir > 0 {
		m.clampTop()
	}
	m.moveRows(dir * n)
}

// clampTop keeps the top row from scrolling further than the last row of the text at the
// bottom of the screen.
func (m *Model) clampTop() {
	l := len(m.lines) - 1
	st := lastRow(m.lines[l], m.wrapWidth())
	for range m.height - 1 {
		var ok bool
		if l, st, ok = m.prevRow(l, st); !ok {
			break
		}
	}
	if l < m.topLine || (l == m.topLine && st < m.topOff) {
		m.topLine, m.topOff = l, st
	}
}

// fixTop keeps the top row inside the text after lines were removed.
func (m *Model) fixTop() {
	if m.topLine >= len(m.lines) {
		m.topLine, m.topOff = len(m.lines)-1, 0
	}
	m.topOff = min(m.topOff, len(m.lines[m.topLine]))
}

// scrollToCursor moves the top row so the cursor is on screen, scrolling as little as
// possible. It looks at no more than a screenful of rows around the top and the cursor.
func (m *Model) scrollToCursor() {
	m.fixTop()
	if m.width <= 0 || m.height <= 0 {
		return
	}
	from := 0
	if m.line == m.topLine && m.topOff <= m.col {
		// The top row is a row start (edits and resizes re-align it), so wrapping can start
		// there: in a very long line this skips everything above the screen.
		from = m.topOff
	}
	cs, _ := rowOfFrom(m.lines[m.line], from, m.col, m.width)
	if m.line < m.topLine || (m.line == m.topLine && cs < m.topOff) {
		m.topLine, m.topOff = m.line, cs
		return
	}
	if m.line-m.topLine < m.height {
		l, st, ok := m.topLine, m.topOff, true
		for range m.height {
			if l == m.line && st == cs {
				return
			}
			if l, st, ok = m.nextRow(l, st); !ok {
				break
			}
		}
	}
	// Below the screen: put the cursor's row on the last line of the screen.
	l, st, ok := m.line, cs, true
	for range m.height - 1 {
		if l, st, ok = m.prevRow(l, st); !ok {
			break
		}
	}
	m.topLine, m.topOff = l, st
}

// View renders the visible rows: exactly height lines of width cells, joined by newlines. It
// wraps only the lines on screen.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(m.height * (m.width + 1) * 2)
	l, st := min(m.topLine, len(m.lines)-1), m.topOff
	rows := 0
	for rows < m.height && l < len(m.lines) {
		s := m.lines[l]
		next, more := nextRowStart(s, st, m.width)
		end := len(s)
		if more {
			end = next
		}
		cur := -1
		if m.focused && l == m.line && m.col >= st && (m.col < end || !more) {
			cur = m.col
		}
		if rows > 0 {
			b.WriteByte('\n')
		}
		m.renderRow(&b, s, st, end, cur)
		rows++
		if more {
			st = next
		} else {
			l, st = l+1, 0
		}
	}
	for ; rows < m.height; rows++ {
		if rows > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(spaces(m.width))
	}
	return b.String()
}

// renderRow writes bytes [st, end) of s as one screen row padded to the width, with the cursor
// at byte cur (-1: no cursor on this row).
func (m Model) renderRow(b *strings.Builder, s string, st, end, cur int) {
	limit := m.width
	if cur >= 0 && columnOf(s, st, cur) >= m.width {
		// The cursor is on a hanging space past the edge: show it in the last column.
		limit = m.width - 1
	}
	x, drawn := 0, false
	for i := st; i < end; {
		if j := asciiRun(s, i, min(end, i+limit-x), cur); j > i {
			b.WriteString(s[i:j])
			x += j - i
			i = j
			continue
		}
		cend, text, cw := cluster(s, i)
		cw = advance(text, cw, x)
		if x+cw > limit {
			break
		}
		if text == "\t" {
			text = spaces(cw)
		}
		if i == cur {
			b.WriteString(m.CursorStyle.Render(text))
			drawn = true
		} else {
			b.WriteString(text)
		}
		x += cw
		i = cend
	}
	if cur >= 0 && !drawn && x < m.width {
		b.WriteString(m.CursorStyle.Render(" "))
		x++
	}
	b.WriteString(spaces(m.width - x))
}

// asciiRun returns the end of the run of printable ASCII bytes of s from i, stopping at limit,
// at the cursor byte cur and before a byte a following non-ASCII byte may combine with. Such a
// run is drawn as it is, one cell per byte.
func asciiRun(s string, i, limit, cur int) int {
	j := i
	for j < limit && j != cur && s[j] >= 0x20 && s[j] < 0x7f {
		j++
	}
	if j > i && j < len(s) && s[j] >= 0x80 {
		j--
	}
	return j
}
