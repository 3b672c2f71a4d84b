package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// theirChangesModel is the screen a reload of their version opens over the editor's form:
// what they changed, and my edits, kept as a draft. It answers theirChangesDoneMsg.
type theirChangesModel struct {
	c      *common
	title  string // "product 1 · their changes, now v3"
	intro  string // "what bob changed since v2:"
	lines  []string
	status statusLine // what the reload did, as the editor said it
}

// theirChangesDoneMsg closes the screen of their changes; restore asks the editor to bring
// my kept edits back.
type theirChangesDoneMsg struct{ restore bool }

var _ editorDialog = (*theirChangesModel)(nil)

// Update maps the restore key and back (or open) to the answer.
func (m *theirChangesModel) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	keys := m.c.keys
	switch {
	case key.Matches(k, keys.RestoreDraft):
		return func() tea.Msg { return theirChangesDoneMsg{restore: true} }
	case key.Matches(k, keys.Back), key.Matches(k, keys.Open):
		return func() tea.Msg { return theirChangesDoneMsg{} }
	}
	return nil
}

// typing is false: the screen has no text field.
func (m *theirChangesModel) typing() bool { return false }

// View draws the changes as far as they fit, the status line and the footer.
func (m *theirChangesModel) View() string {
	c, st := m.c, m.c.styles
	var b strings.Builder
	b.WriteString(st.Title.Render("tandem") + " " + st.Header.Render(m.title))
	b.WriteString("\n" + st.Theirs.Render(m.intro) + "\n")
	n := 2
	for _, l := range m.lines {
		if n >= c.height-3 {
			b.WriteString(st.Dim.Render("  …") + "\n")
			break
		}
		b.WriteString(c.clip(l) + "\n")
		n++
	}
	for ; n < c.height-2; n++ {
		b.WriteByte('\n')
	}
	b.WriteString(m.status.style(st).Render(c.clip(m.status.text)))
	b.WriteByte('\n')
	b.WriteString(c.footer(m.keys()))
	return b.String()
}

// keys are the screen's footer.
func (m *theirChangesModel) keys() []key.Binding {
	back := m.c.keys.Back
	back.SetHelp(back.Help().Key, "edit their version")
	return []key.Binding{m.c.keys.RestoreDraft, back}
}
