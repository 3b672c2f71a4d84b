package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// A session's View runs after every message, and most of what it draws is what it drew
// the time before: the rows of a list that one save changed, the footer, the lines of a
// screen that are already as wide as it. The memos here keep the results of those pure
// functions by their whole input, so that a View draws what changed and looks up the rest.
// Each is bounded: past maxMemo entries it starts afresh.

// maxMemo bounds the entries of each memo.
const maxMemo = 1024

// memo maps an input to what a pure function made of it.
type memo map[string]string

// get returns f(in), from the memo when it has it.
func (m *memo) get(in string, f func(string) string) string {
	if out, ok := (*m)[in]; ok {
		return out
	}
	if *m == nil || len(*m) >= maxMemo {
		*m = make(memo, 64)
	}
	out := f(in)
	(*m)[in] = out
	return out
}

// styled is s.Render(text) through m: key tells the styles apart (lipgloss styles cannot
// be map keys).
func (m *memo) styled(key byte, s lipgloss.Style, text string) string {
	return m.get(string(key)+text, func(string) string { return s.Render(text) })
}

// footerMemo keeps the footer: ShortHelpView depends on the width and the help of the
// enabled bindings only.
type footerMemo struct {
	in  strings.Builder
	out memo
}

// footer renders the key help for bindings on one line, width wide.
func (f *footerMemo) footer(c *common, bindings []key.Binding) string {
	f.in.Reset()
	f.in.WriteString(strconv.Itoa(c.width))
	for _, b := range bindings {
		if !b.Enabled() {
			continue
		}
		h := b.Help()
		f.in.WriteByte(0)
		f.in.WriteString(h.Key)
		f.in.WriteByte(1)
		f.in.WriteString(h.Desc)
	}
	return f.out.get(f.in.String(), func(string) string {
		c.help.SetWidth(c.width)
		return c.help.ShortHelpView(bindings)
	})
}

// fitMemo keeps fitLine's answers for one width.
type fitMemo struct {
	width int
	lines memo
}

// fit is fitScreen with its lines' answers kept.
func (f *fitMemo) fit(body string, width, height int) string {
	if f.width != width {
		f.width, f.lines = width, nil
	}
	return fitLines(body, width, height, func(l string) string {
		return f.lines.get(l, func(l string) string { return fitLine(l, width) })
	})
}

// fitLine cuts l to width.
func fitLine(l string, width int) string {
	if ansi.StringWidth(l) > width {
		return ansi.Truncate(l, width, "…")
	}
	return l
}
