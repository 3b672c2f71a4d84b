package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Deleting and restoring from the TUI. `d` on a list row (or in the editor, ctrl+x while
// typing) asks first, naming the record; the app holds the question and draws it in place
// of the status line, whatever screen asked, so the list and the editor need only send
// askDeleteMsg. The answers (deletedMsg, restoredMsg) go to every screen, each taking its
// part (the list its rows, the history its versions) and the one named in `to` reporting. The delete is version-checked against the version the person saw, and
// presents the editor's lease. Lists follow deletes and restores live, from the feed.
// `R` restores: on the history screen, the record whose tombstone is shown; on the list,
// the record this TUI deleted last, and after a subtree delete the documents deleted with it
// too, parents first (what tandem restore --subtree does). On a working copy each restore
// cancels the pending delete of what it brings back.

// deleteAsk is a delete waiting for its confirmation.
type deleteAsk struct {
	kind    store.Kind
	id      int64
	version int64
	title   string
	token   string   // the editor's lease, presented with the delete
	tree    bool     // the kind is a tree: the record may go with everything below it
	from    screenID // the screen that asked
}

// askDeleteMsg asks the app to confirm and run a delete.
type askDeleteMsg struct{ ask deleteAsk }

// deletedMsg is the store's answer to a delete.
type deletedMsg struct {
	ask deleteAsk
	res *store.DeleteResult
	err error
	to  screenID // the screen that reports it, chosen by the root
}

// restoredMsg is the store's answer to a restore.
type restoredMsg struct {
	kind store.Kind
	id   int64
	res  *store.RestoreResult
	err  error
	from screenID
	to   screenID // the screen that reports it, chosen by the root
	// with are the documents deleted with document id that came back with it; left those
	// that stay deleted (a restore of the top alone names them); notes the notes of their
	// restores.
	with  []*store.Record
	left  []store.Tombstone
	notes []string
}

// insertRowMsg carries a record that came back (restored) for the list to put in place.
type insertRowMsg struct{ rec *store.Record }

func askDelete(a deleteAsk) tea.Cmd { return func() tea.Msg { return askDeleteMsg{a} } }

// question is what the confirmation says, in place of the status line.
func (d deleteAsk) question(k KeyMap) string {
	q := fmt.Sprintf("delete %s %d \"%s\" (v%d)? %s yes", d.kind, d.id, safe.Line(d.title), d.version, k.Yes.Help().Key)
	if d.tree {
		q += fmt.Sprintf(" · %s with everything below it", k.Subtree.Help().Key)
	}
	return q + " · " + k.No.Help().Key + " no"
}

// deleteCmd runs the delete.
func deleteCmd(c *common, d deleteAsk, subtree bool) tea.Cmd {
	return func() tea.Msg {
		res, err := c.st.DeleteRecord(c.ctx, d.kind, d.id, store.Delete{ExpectVersion: d.version, LeaseToken: d.token, Subtree: subtree})
		return deletedMsg{ask: d, res: res, err: err}
	}
}

// restoreCmd runs a restore. For a document, with subtree it also restores the documents
// deleted with it (store.DeletedWith), parents first; without, it finds those that stay
// deleted so the status can name them.
func restoreCmd(c *common, kind store.Kind, id int64, from screenID, subtree bool) tea.Cmd {
	return func() tea.Msg {
		res, err := c.st.RestoreRecord(c.ctx, kind, id, store.Restore{})
		msg := restoredMsg{kind: kind, id: id, res: res, err: err, from: from}
		if err != nil || !c.st.Registry().Tree(kind) {
			return msg
		}
		ts, _, err := store.TreeDeletedWith(c.ctx, c.st, kind, id)
		if err != nil {
			msg.err = fmt.Errorf("restored %s %d; find the %ss deleted with it: %w", kind, id, kind, err)
			return msg
		}
		if !subtree {
			msg.left = ts
			return msg
		}
		for i, t := range ts {
			r, err := c.st.RestoreRecord(c.ctx, kind, t.ID, store.Restore{})
			if err != nil {
				msg.left = ts[i:]
				msg.err = fmt.Errorf("restored %s %d and %d of the %d %ss deleted with it; %s %d: %w",
					kind, id, i, len(ts), kind, kind, t.ID, err)
				return msg
			}
			if r.Note != "" {
				msg.notes = append(msg.notes, fmt.Sprintf("%s %d: %s", kind, t.ID, r.Note))
			}
			msg.with = append(msg.with, r.Record)
		}
		return msg
	}
}

// confirmModel is the delete confirmation: while it is up it takes the keys, and it draws
// its question over the status line of whatever screen is shown.
type confirmModel struct {
	c   *common
	ask deleteAsk
}

// closeConfirmMsg asks the root to take the confirmation down.
type closeConfirmMsg struct{}

func newConfirm(c *common, ask deleteAsk) *confirmModel { return &confirmModel{c: c, ask: ask} }

// Update answers the confirmation: yes (or subtree, for a tree) deletes, no keeps.
func (m *confirmModel) Update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k, d := m.c.keys, m.ask
	switch {
	case key.Matches(kp, k.Yes):
		m.c.send(closeConfirmMsg{})
		return deleteCmd(m.c, d, false)
	case d.tree && key.Matches(kp, k.Subtree):
		m.c.send(closeConfirmMsg{})
		return deleteCmd(m.c, d, true)
	case key.Matches(kp, k.No):
		m.c.send(closeConfirmMsg{})
	}
	return nil
}

// over draws the confirmation over the screen's status line (the line above the footer;
// fitScreen keeps both on any height); a nil confirmation leaves the screen as it is.
func (m *confirmModel) over(screen string) string {
	if m == nil {
		return screen
	}
	lines := strings.Split(screen, "\n")
	if len(lines) < 2 {
		return screen
	}
	lines[len(lines)-2] = m.c.styles.Warn.Render(m.c.clip(m.ask.question(m.c.keys)))
	return strings.Join(lines, "\n")
}

// deletedText is what the status line says of a delete that went through.
func deletedText(k KeyMap, res *store.DeleteResult) string {
	t := res.Deleted[0]
	text := fmt.Sprintf("deleted %s %d \"%s\" (tombstone v%d)", t.Kind, t.ID, safe.Line(t.Title), t.Version)
	if n := len(res.Deleted) - 1; n > 0 {
		return text + fmt.Sprintf(" and %d below it · %s restores all", n, k.Restore.Help().Key)
	}
	return text + " · " + k.Restore.Help().Key + " restores it"
}

// onDeleted notes a delete in the list (its rows, what R restores) and reports it when the
// list is the screen that reports it.
func (l *listModel) onDeleted(msg deletedMsg) tea.Cmd {
	d := msg.ask
	if msg.err != nil {
		if msg.to == scrList {
			l.status.fail(fmt.Sprintf("delete %s %d", d.kind, d.id), msg.err)
		}
		return nil
	}
	t := msg.res.Deleted[0]
	l.lastDeleted = &t
	l.lastSubtree = len(msg.res.Deleted) > 1
	cmd := l.removeRows(msg.res.Deleted)
	if msg.to == scrList {
		l.status.ok(deletedText(l.c.keys, msg.res))
	}
	return cmd
}

// onDeletedHere reports a delete asked in the editor: a failure in its status line, a
// record deleted closes the editor.
func (e *editorModel) onDeletedHere(msg deletedMsg) tea.Cmd {
	if msg.to != scrEditor {
		return nil
	}
	if msg.err != nil {
		e.status.fail(fmt.Sprintf("delete %s %d", msg.ask.kind, msg.ask.id), msg.err)
		return nil
	}
	return e.leave(deletedText(e.c.keys, msg.res))
}

// report says in s what the restore did.
func (msg restoredMsg) report(s *statusLine) {
	if msg.err != nil && msg.res == nil {
		s.fail(fmt.Sprintf("restore %s %d", msg.kind, msg.id), msg.err)
		return
	}
	if msg.err != nil {
		// The top came back, some of what was deleted with it did not.
		s.fail(fmt.Sprintf("restore the %ss deleted with %s %d", msg.kind, msg.kind, msg.id), msg.err)
		return
	}
	text := fmt.Sprintf("restored %s %d as v%d", msg.kind, msg.id, msg.res.Record.Version)
	if n := len(msg.with); n > 0 {
		text += fmt.Sprintf(" and the %s deleted with it", plural(n, string(msg.kind), string(msg.kind)+"s"))
	}
	notes := msg.notes
	if msg.res.Note != "" {
		notes = append([]string{msg.res.Note}, notes...)
	}
	if len(notes) > 0 {
		text += ": " + safe.Line(strings.Join(notes, "; "))
	}
	if n := len(msg.left); n > 0 {
		ids := make([]string, 0, n)
		for _, t := range msg.left {
			ids = append(ids, fmt.Sprint(t.ID))
		}
		text += fmt.Sprintf(" · %s deleted with it stay deleted (%s); tandem restore %s %d --subtree brings them back",
			plural(n, string(msg.kind), string(msg.kind)+"s"), strings.Join(ids, ", "), msg.kind, msg.id)
	}
	s.ok(text)
}

// onRestored forgets a record R would restore once it is back, and reports the restore
// when the list is the screen that reports it.
func (l *listModel) onRestored(msg restoredMsg) tea.Cmd {
	if t := l.lastDeleted; t != nil && msg.res != nil && t.Kind == msg.kind && t.ID == msg.id {
		l.lastDeleted = nil
	}
	if msg.res != nil && msg.from == scrList && msg.kind == l.kind {
		if i := l.indexOf(msg.id); i >= 0 {
			l.cursor = i // the feed's event came first
			l.clampOffset()
		} else {
			l.restored = msg.id // the cursor goes to it when the feed brings it back
		}
	}
	if msg.to == scrList {
		msg.report(&l.status)
	}
	return nil
}

// onRestored reads the history again when its record came back, and reports the restore
// when it was asked here.
func (h *historyModel) onRestored(msg restoredMsg) tea.Cmd {
	var cmd tea.Cmd
	if msg.res != nil && h.kind == msg.kind && h.id == msg.id {
		cmd = h.Init()
	}
	if msg.to == scrHistory {
		msg.report(&h.status)
	}
	return cmd
}

// deleteKey handles d and R on the list; ok reports that the key was one of them.
func (l *listModel) deleteKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := l.c.keys
	switch {
	case key.Matches(msg, k.Delete):
		r := l.selected()
		if r == nil {
			return nil, true
		}
		return askDelete(deleteAsk{kind: r.Kind, id: r.ID, version: r.Version, title: l.c.reg.TitleOf(r), tree: l.c.reg.Tree(r.Kind), from: scrList}), true
	case key.Matches(msg, k.Restore):
		t := l.lastDeleted
		if t == nil {
			l.status.info("nothing deleted here to restore (the history screen restores any deleted record: tandem restore KIND ID)")
			return nil, true
		}
		return restoreCmd(l.c, t.Kind, t.ID, scrList, l.lastSubtree), true
	}
	return nil, false
}

// onDeleteEvent follows a delete or a restore on the feed.
func (l *listModel) onDeleteEvent(ch store.Change) tea.Cmd {
	if ch.Event == store.EventDeleted {
		return l.removeRows([]store.Tombstone{{Kind: ch.Kind, ID: ch.RecordID}})
	}
	if l.tree() {
		return l.load()
	}
	c, kind, search, id := l.c, l.kind, l.search, ch.RecordID
	return func() tea.Msg {
		recs, err := c.st.FindRecords(c.ctx, store.Filter{Kind: kind, IDs: []int64{id}, Search: search})
		if err != nil || len(recs) == 0 {
			return refreshedMsg{kind: kind, err: err}
		}
		return insertRowMsg{rec: recs[0]}
	}
}

// removeRows takes deleted records out of the list (a tree is reloaded).
func (l *listModel) removeRows(ts []store.Tombstone) tea.Cmd {
	if len(ts) == 0 || ts[0].Kind != l.kind {
		return nil
	}
	if l.tree() {
		return l.load()
	}
	for _, t := range ts {
		if i := l.indexOf(t.ID); i >= 0 {
			l.rows = slices.Delete(l.rows, i, i+1)
			l.total = max(l.total-1, len(l.rows))
			if l.cursor > i || l.cursor >= len(l.rows) {
				l.cursor = max(l.cursor-1, 0)
			}
		}
	}
	l.clampOffset()
	return nil
}

// insertRow puts a restored record of a paged kind in its place in the list's order (the
// store's, store.CompareSort), when it falls within what is loaded. The cursor goes to it
// when this list restored it (R), else stays on its row.
func (l *listModel) insertRow(r *store.Record) {
	if r.Kind != l.kind || l.tree() || l.indexOf(r.ID) >= 0 {
		return
	}
	order := store.Filter{Kind: l.kind, Sort: l.sort, Desc: l.desc}
	i, _ := slices.BinarySearchFunc(l.rows, r, func(x, r *store.Record) int { return store.CompareSort(order, x, r) })
	if i == len(l.rows) && l.more {
		return // beyond the loaded pages: it comes with them
	}
	sel := l.selected()
	l.rows = slices.Insert(l.rows, i, r)
	l.total++
	switch {
	case r.ID == l.restored:
		l.cursor, l.restored = i, 0
	case sel != nil:
		l.cursor = l.indexOf(sel.ID)
	}
	l.clampOffset()
}

// deleteKey handles d (when not typing) and ctrl+x in the editor; ok reports that it did.
func (e *editorModel) deleteKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := e.c.keys
	if !key.Matches(msg, k.DeleteInEditor) && !(key.Matches(msg, k.Delete) && !e.typing()) {
		return nil, false
	}
	if e.rec == nil || e.id == 0 {
		return nil, true
	}
	a := deleteAsk{kind: e.kind, id: e.id, version: e.rec.Version, title: e.c.reg.TitleOf(e.rec), tree: e.c.reg.Tree(e.kind), from: scrEditor}
	a.token = e.c.saveToken(e.held)
	return askDelete(a), true
}

// onDeleted turns the editor read-only when someone deletes its record; unsaved edits are
// kept as a draft first, to be offered if the record is restored.
func (e *editorModel) onDeleted(ch store.Change) tea.Cmd {
	var cmd tea.Cmd
	if e.dirty() {
		cmd = e.writeDraftCmd()
	}
	e.deleted = true
	e.readOnly = fmt.Sprintf("deleted by %s (v%d)", safe.Line(ch.Actor), ch.Version)
	msg := fmt.Sprintf("%s deleted this %s; tandem restore %s %d brings it back", safe.Line(ch.Actor), e.kind, e.kind, e.id)
	if cmd != nil {
		msg = fmt.Sprintf("%s deleted this %s; your edits are kept as a draft", safe.Line(ch.Actor), e.kind)
	}
	e.status.warn(msg)
	return cmd
}

// restoreKey handles R on the history screen: it restores the record when the
// newest version is its tombstone.
func (h *historyModel) restoreKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if !key.Matches(msg, h.c.keys.Restore) {
		return nil, false
	}
	if len(h.versions) == 0 || h.versions[0].Event != store.EventDeleted {
		h.status.info(fmt.Sprintf("%s %d is not deleted: nothing to restore", h.kind, h.id))
		return nil, true
	}
	return restoreCmd(h.c, h.kind, h.id, scrHistory, false), true
}

// onChange reloads the history when its record is written, so a delete or a restore shows
// while the screen is open.
func (h *historyModel) onChange(ch store.Change) tea.Cmd {
	if ch.Kind != h.kind || ch.RecordID != h.id || !store.IsRecordEvent(ch.Event) {
		return nil
	}
	return h.Init()
}

// versionWhat is the history list's last column: the fields a version wrote, or what it did.
func versionWhat(reg *store.Registry, kind store.Kind, v store.Version) string {
	switch v.Event {
	case store.EventDeleted:
		return "deleted"
	case store.EventRestored:
		return "restored"
	}
	return strings.Join(fieldLabels(reg, kind, v.Fields), ", ")
}

// onRestored opens the record afresh when it comes back while its editor shows it deleted:
// the new editor loads the restored version and offers the draft kept at the delete.
func (e *editorModel) onRestored(ch store.Change) tea.Cmd {
	if !e.deleted {
		return nil
	}
	kind, id := e.kind, e.id
	return tea.Sequence(e.leaveCmd(), func() tea.Msg { return openEditorMsg{kind: kind, id: id} })
}

// versionDiff is the history screen's heading and lines under the selected version: for a
// tombstone, what a restore brings back instead of a diff (which would show only what
// writes without history changed before the delete, if anything).
func versionDiff(reg *store.Registry, kind store.Kind, v store.Version, what string, diff []string) (string, []string) {
	if v.Event != store.EventDeleted {
		return what, diff
	}
	head := fmt.Sprintf("deleted by %s, with these values (what a restore brings back)", safe.Line(v.Actor))
	var out []string
	for _, f := range reg.Fields(kind) {
		if f.Type == store.TypeText {
			s := f.Format(v.Snapshot[f.Name])
			first, _, _ := strings.Cut(s, "\n")
			if n := strings.Count(strings.TrimSuffix(s, "\n"), "\n"); n > 0 {
				first += fmt.Sprintf("  (+%d lines)", n)
			}
			out = append(out, fmt.Sprintf("%-14s %s", f.Label, safe.Line(first)))
			continue
		}
		out = append(out, fmt.Sprintf("%-14s %s", f.Label, safe.Line(f.Format(v.Snapshot[f.Name]))))
	}
	return head, out
}
