package bodyedit

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
)

// tabWidth is the distance between tab stops, counted from the start of a screen row.
const tabWidth = 4

// cluster returns the end of the grapheme cluster of s starting at byte i, the text that shows
// it on screen and its width in cells. The text is always harmless: control characters, invalid
// bytes and the other characters safe.Line escapes are shown as visible escapes like \x1b, so
// content can never send an escape sequence to the terminal. A tab is returned as text "\t"
// with width 0: its width depends on the column and is decided by the caller (see advance).
func cluster(s string, i int) (end int, text string, width int) {
	b := s[i]
	switch {
	case b >= 0x20 && b < 0x7f && (i+1 == len(s) || s[i+1] < 0x80):
		// Printable ASCII not followed by a combining mark: the common case, kept allocation
		// free and cheap enough for scanning long lines.
		return i + 1, s[i : i+1], 1
	case b == '\t':
		return i + 1, "\t", 0
	case b < 0x20 || b == 0x7f:
		// Control characters are grapheme clusters of their own (there is no \n inside a line).
		esc := safe.Line(s[i : i+1])
		return i + 1, esc, len(esc)
	}
	if r, size := utf8.DecodeRuneInString(s[i:]); r == utf8.RuneError && size == 1 {
		// An invalid byte stands alone, so the cursor can step over it and edits next to it
		// leave it as it was.
		return i + 1, safe.Line(s[i : i+1]), 4
	}
	c, w := ansi.FirstGraphemeCluster(s[i:], ansi.GraphemeWidth)
	if n := validPrefix(c); n < len(c) {
		// The segmenter glued an invalid byte to this cluster; it is a cluster of its own.
		c, w = c[:max(n, 1)], ansi.StringWidth(c[:max(n, 1)])
	}
	if esc := safe.Line(c); esc != c {
		return i + len(c), esc, ansi.StringWidth(esc)
	}
	return i + len(c), c, w
}

// advance returns the width of a cluster of width w (as returned by cluster) placed at column
// x of a row: a tab reaches the next tab stop, anything else keeps its width.
func advance(text string, w, x int) int {
	if text == "\t" {
		return tabWidth - x%tabWidth
	}
	return w
}

// rowBreak returns where the screen row that starts at byte start of line s ends when wrapped
// to width cells, and the width of that row. Wrapping is greedy and word based: a row breaks
// after the last space or tab that lets it fit, or inside a word longer than the row. Spaces
// that do not fit hang at the end of the row (they are not drawn) so that a row never starts
// with the space that ended the word before it. A row holds at least one cluster, so narrow
// widths still make progress. The result depends only on s[start:], which lets rendering start
// at any row boundary without wrapping the line from its beginning.
func rowBreak(s string, start, width int) (end, rowWidth int) {
	x, lastBreak, breakWidth := 0, -1, 0
	for i := start; i < len(s); {
		if c := s[i]; c > ' ' && c < 0x7f && (i+1 == len(s) || s[i+1] < 0x80) {
			// Printable ASCII other than space, inlined: long lines are scanned byte by byte.
			if x+1 > width && i > start {
				if lastBreak > start {
					return lastBreak, breakWidth
				}
				return i, x
			}
			x++
			i++
			continue
		}
		cend, text, cw := cluster(s, i)
		cw = advance(text, cw, x)
		if x+cw > width && i > start {
			if text == " " {
				j, n := i, 0
				for j < len(s) {
					jend, t, _ := cluster(s, j)
					if t != " " {
						break
					}
					j, n = jend, n+1
				}
				return j, x + n
			}
			if lastBreak > start {
				return lastBreak, breakWidth
			}
			return i, x
		}
		x += cw
		i = cend
		if text == " " || text == "\t" {
			lastBreak, breakWidth = i, x
		}
	}
	return len(s), x
}

// nextRowStart returns the start of the screen row after the one starting at start in line s,
// and false when that row is the line's last. A line whose last row is full gets one more,
// empty row, where the cursor stands at the end of the line.
func nextRowStart(s string, start, width int) (int, bool) {
	if start >= len(s) {
		return 0, false
	}
	end, w := rowBreak(s, start, width)
	if end < len(s) {
		return end, true
	}
	if w >= width {
		return len(s), true
	}
	return 0, false
}

// rowOf returns the start of the screen row of line s holding byte offset p, and the start of
// the row before it (-1 for the first row). It wraps s from its beginning up to p.
func rowOf(s string, p, width int) (start, prev int) {
	return rowOfFrom(s, 0, p, width)
}

// rowOfFrom is rowOf wrapping from from, which must be the start of a row at or before p; the
// row before from counts as -1.
func rowOfFrom(s string, from, p, width int) (start, prev int) {
	start, prev = from, -1
	for {
		next, ok := nextRowStart(s, start, width)
		if !ok || p < next {
			return start, prev
		}
		prev, start = start, next
	}
}

// lastRow returns the start of the last screen row of line s.
func lastRow(s string, width int) int {
	start := 0
	for {
		next, ok := nextRowStart(s, start, width)
		if !ok {
			return start
		}
		start = next
	}
}

// columnOf returns the screen column of byte offset p in the row of s starting at start.
func columnOf(s string, start, p int) int {
	x := 0
	for i := start; i < p && i < len(s); {
		cend, text, cw := cluster(s, i)
		x += advance(text, cw, x)
		i = cend
	}
	return x
}

// offsetAt returns the byte offset of the cluster covering column x in the row of s that runs
// from start to end; last says whether the row is the line's last, where the end of the line is
// itself a valid position.
func offsetAt(s string, start, end int, last bool, x int) int {
	col, prev := 0, start
	i := start
	for i < end {
		cend, text, cw := cluster(s, i)
		cw = advance(text, cw, col)
		if col+cw > x {
			return i
		}
		col += cw
		prev, i = i, cend
	}
	if !last && i >= end && end > start {
		return prev
	}
	return i
}

// prevBoundary returns the start of the grapheme cluster that ends at byte p of s. It wraps
// nothing: it scans back to a point between two ASCII bytes (always a cluster boundary inside a
// line) and walks forward from there.
func prevBoundary(s string, p int) int {
	if p <= 0 {
		return 0
	}
	q := p - 1
	for q > 0 && !(s[q] < 0x80 && s[q-1] < 0x80) {
		q--
	}
	for {
		next, _, _ := cluster(s, q)
		if next >= p {
			return q
		}
		q = next
	}
}

// blanks is a row of spaces to pad with, without allocating for common widths.
const blanks = "                                                                                                                                                                                                                                                                "

// spaces returns n spaces.
func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(blanks) {
		return blanks[:n]
	}
	return strings.Repeat(" ", n)
}

// validPrefix returns the length of the longest valid UTF-8 prefix of s.
func validPrefix(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(s)
}
