package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// statusLine is the one-line message at the bottom of a screen: information, success or an
// error from the store, in words.
type statusLine struct {
	text string
	kind int
}

const (
	statusInfo = iota
	statusOK
	statusErr
	statusWarn
)

func (s *statusLine) info(t string) { *s = statusLine{t, statusInfo} }
func (s *statusLine) ok(t string)   { *s = statusLine{t, statusOK} }
func (s *statusLine) warn(t string) { *s = statusLine{t, statusWarn} }
func (s *statusLine) fail(op string, err error) {
	*s = statusLine{errText(op, err), statusErr}
}

func (s statusLine) style(st Styles) lipgloss.Style {
	switch s.kind {
	case statusOK:
		return st.OK
	case statusErr:
		return st.Error
	case statusWarn:
		return st.Warn
	}
	return st.Status
}

// maxStatusRows bounds the lines a long status message wraps to; what is left over is cut.
const maxStatusRows = 3

// statusLines draws text in s's style at the screen's width: a long message wraps, at word
// boundaries where it can, to at most maxStatusRows lines instead of being cut at the edge.
// The screens that use it take the extra lines from their own rows.
func (c *common) statusLines(s statusLine, text string) []string {
	w := max(c.width, 1)
	rows := strings.Split(ansi.Wrap(text, w, ""), "\n")
	if len(rows) > maxStatusRows {
		rows = rows[:maxStatusRows]
		rows[maxStatusRows-1] = ansi.Truncate(rows[maxStatusRows-1]+" …", w, "…")
	}
	style := s.style(c.styles)
	for i, r := range rows {
		rows[i] = style.Render(r)
	}
	return rows
}
