package bodyedit

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// benchWords is the vocabulary of SampleText.
var benchWords = strings.Fields(`the body editor keeps only the visible rows on screen and wraps
them when they are drawn so a keystroke costs the same on a long document as on a short one
lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt`)

// SampleText returns a deterministic text of n lines for benchmarks: prose lines of varied
// length (some longer than 80 columns, so they wrap), every seventh one empty, joined by LF
// with a final newline.
func SampleText(n int) string {
	var b strings.Builder
	b.Grow(n * 64)
	w := 0
	for i := range n {
		if i%7 != 6 {
			words := 4 + (i*5)%19
			for j := range words {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(benchWords[w%len(benchWords)])
				w++
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// keystrokeBench is an editor at 80x24 with the cursor in the middle of its text, ready to
// type into.
type keystrokeBench struct {
	m        Model
	line     string
	col      int
	key      tea.KeyPressMsg
	typedRun int
}

func newKeystrokeBench(text string) *keystrokeBench {
	m := New()
	m.SetValue(text)
	m.SetSize(80, 24)
	m.Focus()
	line := m.LineCount() / 2
	m.SetCursor(line, 0)
	// The middle of the middle line (for a one-line text, the middle of the text).
	s := m.lines[m.line]
	col := len(s) / 2
	for col > 0 && col < len(s) && s[col]&0xc0 == 0x80 {
		col--
	}
	m.col = col
	m.scrollToCursor()
	return &keystrokeBench{m: m, line: s, col: col, key: tea.KeyPressMsg{Code: 'x', Text: "x"}}
}

// step types one printable key and renders the view. Every 64 keys the line goes back to what
// it was, so that the cursor line does not grow with the number of iterations; the reset is a
// string assignment and does not touch the rest of the text.
func (k *keystrokeBench) step() string {
	if k.typedRun == 64 {
		k.m.lines[k.m.line] = k.line
		k.m.col = k.col
		k.m.edited(k.m.line)
		k.m.scrollToCursor()
		k.typedRun = 0
	}
	k.typedRun++
	k.m, _ = k.m.Update(k.key)
	return k.m.View()
}

// BenchKeystroke returns the average time of one keystroke (Update with a printable key, then
// View) at 80x24 in a text of the given number of lines (from SampleText), with the cursor in
// the middle of the text, over n keystrokes. It is for `tandem bench editor`; Go benchmarks are
// in the package's tests.
func BenchKeystroke(lines, n int) time.Duration {
	return benchText(SampleText(lines), n)
}

// benchText is BenchKeystroke on a given text.
func benchText(text string, n int) time.Duration {
	n = max(n, 1)
	k := newKeystrokeBench(text)
	k.step() // warm up
	start := time.Now()
	for range n {
		k.step()
	}
	return time.Since(start) / time.Duration(n)
}
