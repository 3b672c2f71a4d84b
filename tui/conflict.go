package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// conflictState is what a save that met a newer version leaves behind: the error with the
// current record, my update, the field-level merge, and my version of the form.
type conflictState struct {
	ce       *store.ConflictError
	u        store.Update
	rm       *merge.RecordResult // the field-by-field merge, resolved in the merge view
	base     *store.Record       // the version I edited
	mine     store.Values
	deltas   map[string]int64
	mineText draft // my form, to keep as a draft on reload
	// broughtBack: the edits met the newer version when they were brought back (ctrl+r, a
	// draft), not in a save; the form holds the newer version without them.
	broughtBack bool
}

// who names the writers since my base version.
func (cs *conflictState) who() string {
	if a := cs.ce.Actors(); len(a) > 0 {
		return safe.Line(strings.Join(a, ", "))
	}
	if cs.ce.Current.UpdatedBy != "" {
		return safe.Line(cs.ce.Current.UpdatedBy)
	}
	return "someone"
}

// retryable returns why retry is not available, or "" when all my changes are relative.
func (cs *conflictState) retryable(reg *store.Registry) string {
	if cs.u.Relative() {
		return ""
	}
	abs := make([]string, 0, len(cs.u.Set))
	for _, f := range cs.u.FieldNames() {
		if _, ok := cs.u.Set[f]; ok {
			abs = append(abs, fieldLabel(reg, cs.ce.Kind, f))
		}
	}
	if len(abs) == 1 {
		return abs[0] + " is an absolute change"
	}
	return strings.Join(abs, ", ") + " are absolute changes"
}

type choice int

const (
	choiceBack choice = iota
	choiceReload
	choiceRetry
	choiceMerge
)

// conflictChoiceMsg is the person's (or the policy's) answer to the conflict dialog; asked
// says it is the person's, a new attempt of its own.
type conflictChoiceMsg struct {
	choice choice
	asked  bool
}

// conflictModel is the conflict dialog: it shows cs and answers with a conflictChoiceMsg;
// it draws to the window's size as it is when drawn.
type conflictModel struct {
	c      *common
	cs     *conflictState
	status statusLine
}

func newConflict(c *common, cs *conflictState) *conflictModel { return &conflictModel{c: c, cs: cs} }

// Update maps reload, retry, merge and back to a choice; retry, where it cannot apply, is
// refused with the reason.
func (m *conflictModel) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	keys := m.c.keys
	var ch choice
	switch {
	case key.Matches(k, keys.Reload):
		ch = choiceReload
	case key.Matches(k, keys.Retry):
		if why := m.cs.retryable(m.c.reg); why != "" {
			m.status.warn("retry is not available: " + why)
			return nil
		}
		ch = choiceRetry
	case key.Matches(k, keys.Merge):
		ch = choiceMerge
	case key.Matches(k, keys.Back):
		ch = choiceBack
	default:
		return nil
	}
	return func() tea.Msg { return conflictChoiceMsg{choice: ch, asked: true} }
}

// View draws the dialog: who changed what, which fields collide, and the choices that can
// apply.
func (m *conflictModel) View() string {
	c, st, cs := m.c, m.c.styles, m.cs
	w := min(c.width-2, 76)
	inner := w - 4
	var b strings.Builder
	line := func(s string) { b.WriteString(ansi.Truncate(s, inner, "…") + "\n") }

	line(st.Warn.Render(fmt.Sprintf("%s %d changed while you were editing", cs.ce.Kind, cs.ce.ID)))
	line(fmt.Sprintf("%s saved v%d; you edited v%d", cs.who(), cs.ce.Current.Version, cs.base.Version))
	line("")
	line(st.Theirs.Render("they changed: ") + orNone(theirFields(cs.rm)))
	line(st.Mine.Render("you changed:  ") + orNone(mineFields(cs.rm)))
	line(st.Conflict.Render("collide:      ") + orNone(conflictFields(cs.rm)))
	line("")
	collided := false
	for _, fm := range cs.rm.Fields {
		if fm.State != merge.FieldConflict {
			continue
		}
		collided = true
		f := fm.Field
		if fm.Text != nil {
			line(fmt.Sprintf("  %-12s %s", f.Label, plural(fm.Text.Hunks(), "conflicting hunk", "conflicting hunks")))
			continue
		}
		// Three values on one line: each gets a third of what the labels leave.
		v := shortAll(f, max((inner-38)/3, 6), fm.Base, fm.Mine, fm.Theirs)
		line(fmt.Sprintf("  %-12s base %s · %s · %s", f.Label, v[0],
			st.Mine.Render("yours "+v[1]), st.Theirs.Render("theirs "+v[2])))
	}
	if collided {
		line("")
	}
	line(st.Focused.Render(c.keys.Reload.Help().Key) + "  reload theirs (your edits are kept as a draft)")
	// Retry is offered only where it can apply: a save of relative changes only, which
	// meets this dialog once the automatic retries gave up. A save with an absolute change
	// would overwrite theirs, so it is not offered (a says why if pressed).
	if cs.retryable(c.reg) == "" {
		line(st.Focused.Render(c.keys.Retry.Help().Key) + "  retry: apply " + deltaText(m.c.reg, cs.ce.Kind, cs.deltas) + " to v" + itoa(cs.ce.Current.Version))
	}
	line(st.Focused.Render(c.keys.Merge.Help().Key) + "  merge field by field")
	line(st.Focused.Render(c.keys.Back.Help().Key) + " back to editing")

	box := st.Dialog.Width(w).Render(strings.TrimRight(b.String(), "\n"))
	title := st.Title.Render("tandem") + " " + st.Header.Render(fmt.Sprintf("%s %d · conflict", cs.ce.Kind, cs.ce.ID))
	body := lipgloss.JoinVertical(lipgloss.Left, title, "", box)
	// A status that wraps takes its extra lines from the space above it.
	status := c.statusLines(m.status, safe.Line(m.status.text))
	if n := strings.Count(body, "\n") + 1; n < c.height-1-len(status) {
		body += strings.Repeat("\n", c.height-1-len(status)-n)
	}
	return body + "\n" + strings.Join(status, "\n") + "\n" + c.footer(m.keys())
}

// keys are the dialog's footer: the choices that can apply.
func (m *conflictModel) keys() []key.Binding {
	k := m.c.keys
	retry := k.Retry
	retry.SetEnabled(m.cs.retryable(m.c.reg) == "") // the footer shows only what works
	return []key.Binding{k.Reload, retry, k.Merge, k.Back}
}

// typing is false: the dialog has no text field.
func (m *conflictModel) typing() bool { return false }

// plural says n things: "1 conflicting hunk", "2 conflicting hunks".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func orNone(fs []string) string {
	if len(fs) == 0 {
		return "—"
	}
	return strings.Join(fs, ", ")
}

// shortAll formats values of f that are shown side by side, each in at most w cells. Values
// that agree on a long prefix would all be cut to that prefix and look equal, so then each
// is shown from a little before the first cell where they differ ("…ur, red").
func shortAll(f *store.Field, w int, vs ...any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = safe.Line(f.Format(v))
	}
	// The latest point where two of them part: cut there, every pair shows its difference.
	d := -1
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			d = max(d, firstDifference(out[i], out[j]))
		}
	}
	start := 0
	if d >= w-1 {
		start = max(d-w/3, 1)
	}
	for i, s := range out {
		switch {
		case s == "":
			s = "∅"
		case start > 0 && ansi.StringWidth(s) > start:
			s = "…" + ansi.TruncateLeft(s, start, "")
		}
		out[i] = ansi.Truncate(s, w, "…")
	}
	return out
}

// firstDifference returns the first cell at which a and b differ, or -1 when they are equal.
func firstDifference(a, b string) int {
	cells := 0
	ra, rb := []rune(a), []rune(b)
	for i := range ra {
		if i >= len(rb) || ra[i] != rb[i] {
			return cells
		}
		cells += ansi.StringWidth(string(ra[i]))
	}
	if len(rb) > len(ra) {
		return cells
	}
	return -1
}
