package tui

import (
	"fmt"
	"maps"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// A working copy's open conflicts show where people look, whoever's sync left them (this
// TUI's S, or tandem sync in another terminal, which the copy's state poll notices): the
// list marks their rows with !, the editor of one shows a banner with the key that opens
// it (OpenConflict), and a create the source refused gets a screen of its own that says
// why and offers the ways out (copyCreate), instead of a merge with nothing on one side.

// byRecord indexes conflicts by record.
func byRecord(cs []store.CopyConflict) map[recKey]store.CopyConflict {
	out := make(map[recKey]store.CopyConflict, len(cs))
	for _, cf := range cs {
		out[recKey{cf.Kind, cf.ID}] = cf
	}
	return out
}

// sameConflicts reports whether a and b name the same conflicts for the same reasons.
func sameConflicts(a, b map[recKey]store.CopyConflict) bool {
	return maps.EqualFunc(a, b, func(x, y store.CopyConflict) bool {
		return x.Reason == y.Reason && x.TheirsVersion == y.TheirsVersion && x.Op == y.Op
	})
}

// conflictsMsg is the copy's conflicts as the screens hear them.
func (w *workCopy) conflictsMsg() copyConflictsMsg {
	return copyConflictsMsg{byRec: byRecord(w.conflicts)}
}

// noteConflicts tells the screens the conflicts of a fresh read when they differ from
// what they were told last; new ones a sync of another process left are said on the list.
func (w *workCopy) noteConflicts(first bool) {
	now := byRecord(w.conflicts)
	if !first && sameConflicts(now, w.told) {
		return
	}
	var fresh []store.CopyConflict
	for _, cf := range w.conflicts {
		if _, ok := w.told[recKey{cf.Kind, cf.ID}]; !ok {
			fresh = append(fresh, cf)
		}
	}
	w.told = now
	w.c.send(copyConflictsMsg{byRec: now})
	if len(fresh) > 0 && !first && !w.syncing && !w.reloaded { // not this TUI's own sync, which says them itself
		w.tell(func(s *statusLine) {
			s.warn(fmt.Sprintf("a sync left %s: %s. Its row is marked !; open it and press %s",
				plural(len(fresh), "conflict", "conflicts"), conflictSentence(&fresh[0]), keyName(w.c.keys.OpenConflict)))
		})
	}
}

// openConflict opens the conflict of msg's record, if it is still open.
func (w *workCopy) openConflict(msg openCopyConflictMsg) tea.Cmd {
	for _, cf := range w.conflicts {
		if cf.Kind == msg.key.kind && cf.ID == msg.key.id {
			w.back = msg.from
			w.c.send(openScreenMsg{id: scrCopyMerge, s: w.conflictScreen(cf)})
			return nil
		}
	}
	w.c.send(statusMsg{to: msg.from, line: statusLine{text: fmt.Sprintf("%s %d has no conflict any more", msg.key.kind, msg.key.id), kind: statusInfo}})
	return nil
}

// conflictSentence says conflict cf as a sentence: what happened to which record, and why.
func conflictSentence(cf *store.CopyConflict) string {
	reason := safe.Line(cf.Reason)
	switch {
	case cf.Op == store.CopyCreate:
		return fmt.Sprintf("the source refused the new %s %d: %s", cf.Kind, cf.ID, reason)
	case cf.Reason == "changed on both sides" && len(cf.Fields) > 0:
		return fmt.Sprintf("%s %d: %s changed on both sides", cf.Kind, cf.ID, strings.Join(cf.Fields, ", "))
	case cf.Op == store.CopyDelete:
		return fmt.Sprintf("your delete of %s %d: %s", cf.Kind, cf.ID, reason)
	}
	return fmt.Sprintf("%s %d: %s", cf.Kind, cf.ID, reason)
}

// onCopyConflicts keeps the conflict of the editor's record, for its banner and its key.
func (e *editorModel) onCopyConflicts(msg copyConflictsMsg) {
	e.copyConflict = nil
	if e.id == 0 {
		return
	}
	if cf, ok := msg.byRec[recKey{e.kind, e.id}]; ok {
		e.copyConflict = &cf
	}
}

// copyBanner is the editor's banner while its record has a conflict in the working copy.
func (e *editorModel) copyBanner() string {
	if e.copyConflict == nil {
		return ""
	}
	return fmt.Sprintf("conflict from a sync: %s · %s opens it", conflictSentence(e.copyConflict), e.c.keys.OpenConflict.Help().Key)
}

// openCopyConflict asks for the screen of the record's conflict.
func (e *editorModel) openCopyConflict() tea.Cmd {
	if e.copyConflict == nil {
		e.status.info("this record has no conflict in the working copy")
		return nil
	}
	e.c.send(openCopyConflictMsg{key: recKey{e.kind, e.id}, from: scrEditor})
	return nil
}

// copyCreate is the screen of a create the source refused (a unique field taken there, a
// parent it lacks): it says why and offers the ways out: give the field another value, try
// it again as it is, or drop the new record (a local delete, which drops its conflict too).
type copyCreate struct {
	w      *workCopy
	cf     store.CopyConflict
	field  string // the field a new value is typed for ("" when the refusal names none)
	input  *lineField
	status statusLine
	busy   bool
}

var _ screen = (*copyCreate)(nil)

// newCopyCreate returns the screen of create conflict cf.
func newCopyCreate(w *workCopy, cf store.CopyConflict) *copyCreate {
	s := &copyCreate{w: w, cf: cf}
	if len(cf.Fields) == 1 {
		s.field = cf.Fields[0]
	}
	return s
}

// Init starts nothing: the conflict came with the sync.
func (s *copyCreate) Init() tea.Cmd { return nil }

func (s *copyCreate) typing() bool { return s.input != nil }

// Update takes enter (a new value), 1 (as it is), d (drop it) and esc.
func (s *copyCreate) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case copyDeleteFailedMsg:
		s.busy = false
		s.status.fail("resolve", msg.err)
		return nil
	case tea.PasteMsg:
		if s.input != nil {
			in, cmd := s.input.Update(msg)
			s.input = &in
			return cmd
		}
	case tea.KeyPressMsg:
		return s.onKey(msg)
	}
	return nil
}

// onKey handles a key: the new value being typed takes them all; else the ways out.
func (s *copyCreate) onKey(msg tea.KeyPressMsg) tea.Cmd {
	k := s.w.c.keys
	sync := keyName(k.Sync)
	switch {
	case s.input != nil && key.Matches(msg, k.Back):
		s.input = nil
		return nil
	case s.input != nil && key.Matches(msg, k.Confirm):
		v := s.input.Value()
		s.input = nil
		return s.answer(tsync.Picks{s.field: v}, fmt.Sprintf("%s %d: %s set to %s; %s sends it to the source", s.cf.Kind, s.cf.ID, s.field, safe.Line(v), sync))
	case s.input != nil:
		in, cmd := s.input.Update(msg)
		s.input = &in
		return cmd
	case key.Matches(msg, k.Back):
		return func() tea.Msg { return copyMergeClosedMsg{} }
	case s.busy:
		return nil
	case s.field != "" && key.Matches(msg, k.EditValue):
		in := newLineField()
		in.SetValue(fmt.Sprint(s.cf.Mine[s.field]))
		in.Focus()
		s.input = &in
		return nil
	case s.field != "" && key.Matches(msg, k.PickMine):
		return s.answer(tsync.Picks{s.field: "mine"}, fmt.Sprintf("%s %d: %s tries the create again as it is", s.cf.Kind, s.cf.ID, sync))
	case key.Matches(msg, k.Delete):
		return s.drop()
	}
	return nil
}

// answer resolves the conflict with picks, as tandem resolve KIND ID FIELD=VALUE does.
func (s *copyCreate) answer(picks tsync.Picks, note string) tea.Cmd {
	s.busy = true
	s.status.info("resolving…")
	c, wc, cf := s.w.c, s.w.wc, s.cf
	return func() tea.Msg {
		vals, err := tsync.Resolution(c.st.Registry(), &cf, picks)
		if err == nil {
			err = wc.ResolveConflict(c.ctx, cf.Kind, cf.ID, vals)
		}
		if err != nil {
			return copyDeleteFailedMsg{err: err}
		}
		return copyResolvedMsg{kind: cf.Kind, id: cf.ID, note: note}
	}
}

// drop deletes the new record in the copy, which drops its conflict: it never reaches the
// source.
func (s *copyCreate) drop() tea.Cmd {
	s.busy = true
	s.status.info("dropping…")
	c, cf := s.w.c, s.cf
	return func() tea.Msg {
		if _, err := c.st.DeleteRecord(c.ctx, cf.Kind, cf.ID, store.Delete{ExpectVersion: cf.LocalVersion}); err != nil {
			return copyDeleteFailedMsg{err: err}
		}
		return copyResolvedMsg{kind: cf.Kind, id: cf.ID, note: fmt.Sprintf("new %s %d dropped from this copy; it never reaches the source", cf.Kind, cf.ID)}
	}
}

// View says what was refused and why, the record's values, and the ways out.
func (s *copyCreate) View() string {
	c, st, cf := s.w.c, s.w.c.styles, s.cf
	var b strings.Builder
	line := func(style func(...string) string, text string) {
		for _, l := range strings.Split(ansi.Wrap(text, max(c.width, 1), ""), "\n") {
			b.WriteString(style(c.clip(l)))
			b.WriteByte('\n')
		}
	}
	title := safe.Line(c.reg.TitleOf(&store.Record{Kind: cf.Kind, Fields: cf.Mine}))
	line(st.Title.Render, fmt.Sprintf("conflict · new %s %d %q · created here", cf.Kind, cf.ID, title))
	b.WriteByte('\n')
	line(st.Warn.Render, fmt.Sprintf("You created %s %d here; the source refused it: %s.", cf.Kind, cf.ID, safe.Line(cf.Reason)))
	for _, f := range c.reg.Fields(cf.Kind) {
		if v := firstLine(f.Format(cf.Mine[f.Name])); cf.Mine[f.Name] != nil && v != "" {
			line(st.Row.Render, fmt.Sprintf("  %-14s %s", f.Label, safe.Line(v)))
		}
	}
	b.WriteByte('\n')
	line(st.Header.Render, "Ways out:")
	k := c.keys
	if s.input != nil {
		line(st.Focused.Render, fmt.Sprintf("new %s (%s takes it, %s cancels):", s.field, k.Confirm.Help().Key, k.Back.Help().Key))
		b.WriteString("  " + s.input.View() + "\n")
	} else if s.field != "" {
		line(st.Mine.Render, fmt.Sprintf("%-6s give %s another value (the next sync sends the create with it)", k.EditValue.Help().Key, s.field))
		line(st.Dim.Render, fmt.Sprintf("%-6s try it again as it is (once the source's %s is changed)", k.PickMine.Help().Key, s.field))
	}
	line(st.Theirs.Render, fmt.Sprintf("%-6s drop the new %s: delete it here; it never reaches the source", k.Delete.Help().Key, cf.Kind))
	line(st.Dim.Render, fmt.Sprintf("%-6s decide later: it stays (or tandem resolve %s %d %s=VALUE)", k.Back.Help().Key, cf.Kind, cf.ID, orField(s.field)))
	status := c.statusLines(s.status, safe.Line(s.status.text))
	for n := strings.Count(b.String(), "\n"); n < c.height-1-len(status); n++ {
		b.WriteByte('\n')
	}
	b.WriteString(strings.Join(status, "\n"))
	b.WriteByte('\n')
	b.WriteString(c.footer(k.CopyCreateKeys(s.field != "")))
	return b.String()
}

// orField is the field a resolve names, or FIELD.
func orField(f string) string {
	if f == "" {
		return "FIELD"
	}
	return f
}
