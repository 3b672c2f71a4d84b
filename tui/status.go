package tui

import "charm.land/lipgloss/v2"

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
