package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// The conflict of a delete made in a working copy is not a field merge: one side removed the
// whole record. Its screen says so ("you deleted product 5 here; the source changed it to
// v2"), shows what the source changed, and takes the two answers tandem resolve takes:
// mine deletes the record on the source too, theirs keeps the source's record. Both go
// through tsync.ResolveDelete, as `tandem resolve KIND ID mine|theirs` does.

// conflictScreen is the screen that answers conflict cf: the delete screen for a local
// delete's conflict, the refused create's screen for a create the source refused
// (workcopy_conflicts.go), the merge view for the rest.
func (w *workCopy) conflictScreen(cf store.CopyConflict) screen {
	switch {
	case cf.Op == store.CopyDelete:
		return &copyDelete{w: w, cf: cf}
	case cf.Op == store.CopyCreate && !cf.Lost():
		return newCopyCreate(w, cf)
	}
	return w.mergeScreen(cf)
}

// copyDelete is the screen of a local delete's conflict.
type copyDelete struct {
	w      *workCopy
	cf     store.CopyConflict
	status statusLine
	busy   bool // an answer is on its way to the copy
}

var _ screen = (*copyDelete)(nil)

// copyDeleteFailedMsg is an answer the copy refused: the screen stays, saying why.
type copyDeleteFailedMsg struct{ err error }

// Init starts nothing: the conflict came with the sync.
func (s *copyDelete) Init() tea.Cmd { return nil }

func (s *copyDelete) typing() bool { return false }

// deletedHere reports whether the source met the delete with a changed record (both answers
// possible), rather than refusing it as it is (only theirs).
func (s *copyDelete) deletedHere() bool { return strings.Contains(s.cf.Reason, store.DeletedHere) }

// Update takes 1 (mine), 2 (theirs) and esc (decide later).
func (s *copyDelete) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case copyDeleteFailedMsg:
		s.busy = false
		s.status.fail("resolve", msg.err)
		return nil
	case tea.KeyPressMsg:
		k := s.w.c.keys
		switch {
		case key.Matches(msg, k.Back):
			return func() tea.Msg { return copyMergeClosedMsg{} }
		case s.busy:
			return nil
		case key.Matches(msg, k.PickMine):
			if !s.deletedHere() {
				s.status.warn(fmt.Sprintf("the source refused this delete (%s): the same delete would be refused again; "+
					"2 keeps the source's record, then delete it again seeing all of it", safe.Line(s.cf.Reason)))
				return nil
			}
			return s.answer("mine")
		case key.Matches(msg, k.PickTheirs):
			return s.answer("theirs")
		}
	}
	return nil
}

// answer resolves the conflict with pick, as tandem resolve KIND ID pick does.
func (s *copyDelete) answer(pick string) tea.Cmd {
	s.busy = true
	s.status.info("resolving…")
	c, wc, cf := s.w.c, s.w.wc, s.cf
	sync := keyName(c.keys.Sync) // read here: the command runs off the program's loop
	return func() tea.Msg {
		if err := tsync.ResolveDelete(c.ctx, wc, cf.Kind, cf.ID, pick); err != nil {
			return copyDeleteFailedMsg{err: err}
		}
		note := fmt.Sprintf("%s %d: %s deletes it on the source too (if still at v%d there)", cf.Kind, cf.ID, sync, cf.TheirsVersion)
		if pick == "theirs" {
			note = fmt.Sprintf("%s %d: delete dropped; %s brings the source's record back", cf.Kind, cf.ID, sync)
		}
		return copyResolvedMsg{kind: cf.Kind, id: cf.ID, note: note}
	}
}

// View says what happened on each side, what the source changed, and the two answers.
func (s *copyDelete) View() string {
	c, st, cf := s.w.c, s.w.c.styles, s.cf
	var b strings.Builder
	line := func(style func(...string) string, text string) {
		b.WriteString(style(c.clip(text)))
		b.WriteByte('\n')
	}
	// wrapped draws text on as many lines as the width needs, so nothing of it (the refusal's
	// reason names the ids that matter) is cut; a word longer than the width is broken.
	wrapped := func(style func(...string) string, text string) {
		for _, l := range strings.Split(ansi.Wrap(text, max(c.width, 1), ""), "\n") {
			line(style, l)
		}
	}
	title := ""
	if cf.Theirs != nil {
		title = ` "` + safe.Line(c.reg.TitleOf(&store.Record{Kind: cf.Kind, Fields: cf.Theirs})) + `"`
	}
	line(st.Title.Render, fmt.Sprintf("conflict · %s %d%s · deleted here", cf.Kind, cf.ID, title))
	b.WriteByte('\n')
	if s.deletedHere() {
		line(st.Warn.Render, fmt.Sprintf("you deleted %s %d here (at v%d); the source changed it to v%d.", cf.Kind, cf.ID, cf.BaseVersion, cf.TheirsVersion))
	} else {
		wrapped(st.Warn.Render, fmt.Sprintf("you deleted %s %d here (at v%d); the source refused the delete: %s.", cf.Kind, cf.ID, cf.BaseVersion, safe.Line(cf.Reason)))
	}
	if changed := s.changes(); len(changed) > 0 {
		line(st.Header.Render, fmt.Sprintf("what the source changed since v%d:", cf.BaseVersion))
		for _, l := range changed {
			line(st.Row.Render, l)
		}
	}
	b.WriteByte('\n')
	k := c.keys
	if s.deletedHere() {
		line(st.Mine.Render, fmt.Sprintf("%-4s mine: delete it on the source too (at the next sync, if it is still at v%d)", k.PickMine.Help().Key, cf.TheirsVersion))
	} else {
		line(st.Dim.Render, fmt.Sprintf("%-4s mine: not offered, the source would refuse the same delete again", k.PickMine.Help().Key))
	}
	line(st.Theirs.Render, fmt.Sprintf("%-4s theirs: keep the source's record (the next sync brings it back here)", k.PickTheirs.Help().Key))
	picks := "mine|theirs"
	if !s.deletedHere() {
		picks = "theirs"
	}
	line(st.Dim.Render, fmt.Sprintf("%-4s decide later: it stays (or tandem resolve %s %d %s)", k.Back.Help().Key, cf.Kind, cf.ID, picks))
	// The status line (wrapped when long) and the footer at the bottom, as on the other
	// screens.
	status := c.statusLines(s.status, safe.Line(s.status.text))
	for n := strings.Count(b.String(), "\n"); n < c.height-1-len(status); n++ {
		b.WriteByte('\n')
	}
	b.WriteString(strings.Join(status, "\n"))
	b.WriteByte('\n')
	b.WriteString(c.footer(k.CopyDeleteKeys(s.deletedHere())))
	return b.String()
}

// changes lists the fields the source changed since the version the delete was made at:
// "price  1.00 → 2.00", each value on one line and made safe.
func (s *copyDelete) changes() []string {
	reg, cf := s.w.c.reg, s.cf
	var out []string
	for _, f := range reg.Fields(cf.Kind) {
		before, after := cf.Base[f.Name], cf.Theirs[f.Name]
		if cf.Theirs == nil || store.Equal(before, after) {
			continue
		}
		out = append(out, fmt.Sprintf("  %-14s %s → %s", f.Label, safe.Line(firstLine(f.Format(before))), safe.Line(firstLine(f.Format(after)))))
	}
	return out
}
