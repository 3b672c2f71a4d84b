package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Styles holds every style the TUI draws with, in one place. Colour is applied by lipgloss and
// downsampled (or dropped, with NO_COLOR) by bubbletea's colour profile at output time.
type Styles struct {
	Title     lipgloss.Style // screen title bar
	Header    lipgloss.Style // column headers
	Selected  lipgloss.Style // the selected row
	Row       lipgloss.Style // an ordinary row
	Dim       lipgloss.Style // secondary text: read-only fields, hints
	Label     lipgloss.Style // field labels in forms
	Focused   lipgloss.Style // the focused field's label
	Status    lipgloss.Style // the status line
	Error     lipgloss.Style // errors in words
	Warn      lipgloss.Style // banners: someone else saved, lease failing
	OK        lipgloss.Style // success messages
	Footer    lipgloss.Style // key help at the bottom
	Dialog    lipgloss.Style // the conflict dialog box
	Mine      lipgloss.Style // my side in a merge
	Theirs    lipgloss.Style // their side in a merge
	Base      lipgloss.Style // the base in a merge
	Conflict  lipgloss.Style // an unresolved conflict marker
	Added     lipgloss.Style // diff: added line
	Removed   lipgloss.Style // diff: removed line
	LockYou   lipgloss.Style // lock indicator: held by you
	LockOther lipgloss.Style // lock indicator: held by someone else
}

// NewStyles returns tandem's styles.
func NewStyles() Styles {
	c := lipgloss.Color
	return Styles{
		Title:     lipgloss.NewStyle().Bold(true).Foreground(c("15")).Background(c("62")).Padding(0, 1),
		Header:    lipgloss.NewStyle().Bold(true).Foreground(c("245")),
		Selected:  lipgloss.NewStyle().Bold(true).Foreground(c("230")).Background(c("57")),
		Row:       lipgloss.NewStyle(),
		Dim:       lipgloss.NewStyle().Foreground(c("243")),
		Label:     lipgloss.NewStyle().Foreground(c("249")),
		Focused:   lipgloss.NewStyle().Bold(true).Foreground(c("212")),
		Status:    lipgloss.NewStyle().Foreground(c("252")),
		Error:     lipgloss.NewStyle().Bold(true).Foreground(c("196")),
		Warn:      lipgloss.NewStyle().Bold(true).Foreground(c("214")),
		OK:        lipgloss.NewStyle().Foreground(c("42")),
		Footer:    lipgloss.NewStyle().Foreground(c("241")),
		Dialog:    lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c("214")).Padding(0, 1),
		Mine:      lipgloss.NewStyle().Foreground(c("39")),
		Theirs:    lipgloss.NewStyle().Foreground(c("171")),
		Base:      lipgloss.NewStyle().Foreground(c("245")),
		Conflict:  lipgloss.NewStyle().Bold(true).Foreground(c("196")),
		Added:     lipgloss.NewStyle().Foreground(c("42")),
		Removed:   lipgloss.NewStyle().Foreground(c("203")),
		LockYou:   lipgloss.NewStyle().Foreground(c("42")),
		LockOther: lipgloss.NewStyle().Foreground(c("214")),
	}
}

// selectedMark puts the selection marker in a row's two-space indent: without colour
// (NO_COLOR) the marker is all that shows which row is selected.
func selectedMark(row string) string {
	if rest, ok := strings.CutPrefix(row, "  "); ok {
		return "▸ " + rest
	}
	return row
}
