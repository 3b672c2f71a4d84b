package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// historyPageSize is how many versions (or operation-log entries) one page of the history
// screen loads. Versions come without their snapshots; the selected one's diff loads its
// own two, so a history of any length costs the screen what its loaded rows do.
const historyPageSize = 200

// historyModel shows a record's versions (who, when, which fields, and the diff against the
// version before) and, on its own tab, the operation log of writes that added no version.
// Both load a page at a time, newest first, as the cursor nears the end of what is loaded.
type historyModel struct {
	c        *common
	kind     store.Kind
	id       int64
	versions []store.Version // without snapshots
	ops      []store.Change
	more     [2]bool       // by tab: older entries than the loaded ones may exist
	paging   bool          // a page is on its way
	gen      int           // load generation: a page of an older load is dropped
	rec      *store.Record // the record as the history was read: the base of a revert
	loaded   bool
	tab      int // 0 versions, 1 op log
	cursor   int
	toEnd    bool         // end was pressed: the cursor goes to the oldest entry once loaded
	diff     *historyDiff // the selected version's diff, once loaded
	status   statusLine
}

// historyDiff is what the history shows under the selected version.
type historyDiff struct {
	version int64
	what    string   // "v2 → v3", or what a tombstone is
	lines   []string // the changes
}

type historyMsg struct {
	h        *historyModel
	gen      int
	rec      *store.Record
	versions []store.Version
	ops      []store.Change
	more     [2]bool
	err      error
}

// historyPageMsg is one more page of versions (tab 0) or of the operation log (tab 1).
type historyPageMsg struct {
	h        *historyModel
	gen, tab int
	versions []store.Version
	ops      []store.Change
	more     bool
	err      error
}

// historyDiffMsg is the diff of one version.
type historyDiffMsg struct {
	h    *historyModel
	diff *historyDiff
	err  error
}

func newHistory(c *common, kind store.Kind, id int64) *historyModel {
	return &historyModel{c: c, kind: kind, id: id}
}

// typing is false: the history takes no text.
func (h *historyModel) typing() bool { return false }

// Init loads the newest page of the history and of the operation log; reloaded after a
// write of the record, as many as were loaded.
func (h *historyModel) Init() tea.Cmd {
	h.gen++
	h.paging = false
	c, kind, id, gen := h.c, h.kind, h.id, h.gen
	nv, no := max(historyPageSize, len(h.versions)), max(historyPageSize, len(h.ops))
	return func() tea.Msg {
		// The record first: a version saved after it is then in the history too, and a
		// revert based on it meets that version as a conflict. A deleted record has none:
		// its history (ending in the tombstone) still shows, and restore, not revert, applies.
		rec, err := c.st.FindRecord(c.ctx, kind, id)
		if err != nil && store.ErrorCode(err) != store.ENOTFOUND {
			return historyMsg{h: h, gen: gen, err: err}
		}
		msg := historyMsg{h: h, gen: gen, rec: rec}
		vs, err := c.st.FindHistoryPage(c.ctx, kind, id, store.HistoryQuery{Limit: nv + 1})
		if err != nil {
			msg.err = err
			return msg
		}
		ops, err := c.st.FindOpsPage(c.ctx, kind, id, store.HistoryQuery{Limit: no + 1})
		msg.more = [2]bool{len(vs) > nv, len(ops) > no}
		msg.versions, msg.ops, msg.err = vs[:min(len(vs), nv)], ops[:min(len(ops), no)], err
		return msg
	}
}

// loadMore loads the page after the last loaded entry of the current tab; all of them
// when the cursor is to go to the end (entries without snapshots are small).
func (h *historyModel) loadMore() tea.Cmd {
	if h.paging || !h.more[h.tab] {
		return nil
	}
	h.paging = true
	c, kind, id, gen, tab := h.c, h.kind, h.id, h.gen, h.tab
	q := store.HistoryQuery{Limit: historyPageSize + 1}
	if h.toEnd {
		q.Limit = 0
	}
	if tab == 0 && len(h.versions) > 0 {
		q.Before = h.versions[len(h.versions)-1].Version
	}
	if tab == 1 && len(h.ops) > 0 {
		q.Before = h.ops[len(h.ops)-1].Version
	}
	return func() tea.Msg {
		msg := historyPageMsg{h: h, gen: gen, tab: tab}
		if tab == 0 {
			msg.versions, msg.err = c.st.FindHistoryPage(c.ctx, kind, id, q)
			if msg.more = q.Limit > 0 && len(msg.versions) == q.Limit; msg.more {
				msg.versions = msg.versions[:historyPageSize]
			}
			return msg
		}
		msg.ops, msg.err = c.st.FindOpsPage(c.ctx, kind, id, q)
		if msg.more = q.Limit > 0 && len(msg.ops) == q.Limit; msg.more {
			msg.ops = msg.ops[:historyPageSize]
		}
		return msg
	}
}

// loadDiff loads the selected version and the one before it, with their snapshots, and
// the lines between them; nothing when the diff shown is already the selected version's.
func (h *historyModel) loadDiff() tea.Cmd {
	if h.tab != 0 || h.cursor >= len(h.versions) {
		return nil
	}
	v := h.versions[h.cursor].Version
	if h.diff != nil && h.diff.version == v {
		return nil
	}
	c, kind, id, reg := h.c, h.kind, h.id, h.c.reg
	return func() tea.Msg {
		vs, err := c.st.FindHistoryPage(c.ctx, kind, id, store.HistoryQuery{Before: v + 1, Limit: 2, Snapshots: true})
		if err != nil || len(vs) == 0 || vs[0].Version != v {
			if err == nil {
				err = store.Errorf(store.ENOTFOUND, "%s %d has no history version %d", kind, id, v)
			}
			return historyDiffMsg{h: h, err: err}
		}
		prev, what := store.Values{}, "created"
		if len(vs) > 1 {
			prev, what = vs[1].Snapshot, fmt.Sprintf("v%d → v%d", vs[1].Version, v)
		}
		what, lines := versionDiff(reg, kind, vs[0], what, changeLines(reg, kind, prev, vs[0].Snapshot))
		return historyDiffMsg{h: h, diff: &historyDiff{version: v, what: what, lines: lines}}
	}
}

// Update handles keys and the loaded history.
func (h *historyModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case historyMsg:
		return h.onLoaded(msg)
	case historyPageMsg:
		return h.onPage(msg)
	case historyDiffMsg:
		if msg.h != h {
			return nil
		}
		if msg.err != nil {
			h.status.fail("history", msg.err)
			return nil
		}
		// Diffs come back in any order while the cursor moves: keep the selected one's.
		if h.tab == 0 && h.cursor < len(h.versions) && msg.diff.version == h.versions[h.cursor].Version {
			h.diff = msg.diff
		}
	case changeMsg:
		return h.onChange(msg.c)
	case restoredMsg:
		return h.onRestored(msg)
	case tea.KeyPressMsg:
		return h.onKey(msg)
	}
	return nil
}

// onLoaded takes the history as read (again).
func (h *historyModel) onLoaded(msg historyMsg) tea.Cmd {
	if msg.h != h || msg.gen != h.gen {
		return nil
	}
	h.loaded = true
	if msg.err != nil {
		h.status.fail("history", msg.err)
		return nil
	}
	h.versions, h.ops, h.rec, h.more = msg.versions, msg.ops, msg.rec, msg.more
	h.diff = nil
	return h.moved()
}

// onPage appends the next page of a tab.
func (h *historyModel) onPage(msg historyPageMsg) tea.Cmd {
	if msg.h != h || msg.gen != h.gen {
		return nil
	}
	h.paging = false
	if msg.err != nil {
		h.status.fail("history", msg.err)
		return nil
	}
	h.versions, h.ops = append(h.versions, msg.versions...), append(h.ops, msg.ops...)
	h.more[msg.tab] = msg.more
	return h.moved()
}

// onKey moves the cursor as the list does, and handles the history's own keys.
func (h *historyModel) onKey(msg tea.KeyPressMsg) tea.Cmd {
	if cmd, ok := h.restoreKey(msg); ok {
		return cmd
	}
	k := h.c.keys
	page := h.listRows()
	switch {
	case key.Matches(msg, k.Back), key.Matches(msg, k.Quit):
		return func() tea.Msg { return backMsg{} }
	case key.Matches(msg, k.Revert) && h.tab == 0:
		return h.revert()
	case key.Matches(msg, k.SwitchTab):
		h.tab = 1 - h.tab
		h.cursor, h.toEnd = 0, false
	case key.Matches(msg, k.Down):
		h.cursor++
	case key.Matches(msg, k.Up):
		h.cursor--
	case key.Matches(msg, k.PageDown):
		h.cursor += page
	case key.Matches(msg, k.PageUp):
		h.cursor -= page
	case key.Matches(msg, k.Top):
		h.cursor, h.toEnd = 0, false
	case key.Matches(msg, k.Bottom):
		h.cursor, h.toEnd = h.rows()-1, h.more[h.tab]
	default:
		return nil
	}
	return h.moved()
}

// moved keeps the cursor on a loaded row, and loads what it now needs: the next page when
// it nears the end of the loaded rows, the diff of the version it is on.
func (h *historyModel) moved() tea.Cmd {
	if h.toEnd && !h.more[h.tab] {
		h.cursor, h.toEnd = h.rows()-1, false
	}
	h.cursor = max(0, min(h.cursor, h.rows()-1))
	var more tea.Cmd
	if h.toEnd || h.cursor >= h.rows()-2*h.listRows() {
		more = h.loadMore()
	}
	return tea.Batch(more, h.loadDiff())
}

// rows returns how many rows the current tab has loaded.
func (h *historyModel) rows() int {
	if h.tab == 1 {
		return len(h.ops)
	}
	return len(h.versions)
}

// listRows is how many rows of versions show above the diff (of ops: the whole screen).
func (h *historyModel) listRows() int {
	if h.tab == 1 {
		return max(h.c.height-5, 1)
	}
	return max((h.c.height-4)/2, 3)
}

// revert opens the editor with the selected version's values on top of the record as the
// history read it: the save that follows is a normal, version-checked one, so a version
// saved since meets the conflict dialog.
func (h *historyModel) revert() tea.Cmd {
	if h.rec == nil || h.cursor >= len(h.versions) {
		return nil
	}
	v := h.versions[h.cursor].Version
	if v == h.rec.Version {
		h.status.info(fmt.Sprintf("v%d is the current version", v))
		return nil
	}
	c, kind, id, base := h.c, h.kind, h.id, h.rec
	return func() tea.Msg {
		ver, err := c.st.FindVersion(c.ctx, kind, id, v)
		if err != nil {
			return historyDiffMsg{h: h, err: err}
		}
		return openEditorMsg{kind: kind, id: id, revert: &revertTo{base: base, version: *ver}}
	}
}

// View draws the list of versions (or ops) and the diff of the selected version.
func (h *historyModel) View() string {
	c, st := h.c, h.c.styles
	var b strings.Builder
	tabs := []string{"versions", "op log"}
	for i := range tabs {
		if i == h.tab {
			tabs[i] = st.Selected.Render("[ " + tabs[i] + " ]")
		} else {
			tabs[i] = st.Dim.Render("  " + tabs[i] + "  ")
		}
	}
	b.WriteString(st.Title.Render("tandem") + " " + st.Header.Render(fmt.Sprintf("history of %s %d", h.kind, h.id)) + "  " + strings.Join(tabs, ""))
	b.WriteString("\n")
	lines := []string{}
	listRows := h.listRows()
	start := max(0, h.cursor-listRows+1)
	ver := verColumn(h)
	if h.tab == 0 {
		lines = append(lines, st.Header.Render(fmt.Sprintf("  %-*s %-12s %-19s %s", ver.width+1, "ver", "who", "when", "fields")))
		for i := start; i < len(h.versions) && i < start+listRows; i++ {
			v := h.versions[i]
			row := fmt.Sprintf("  %s %-12s %-19s %s", ver.of(v.Version), safe.Line(v.Actor), v.At.Local().Format("2006-01-02 15:04:05"), versionWhat(c.reg, h.kind, v))
			if i == h.cursor {
				row = st.Selected.Render(padRight(c.clip(selectedMark(row)), c.width))
			}
			lines = append(lines, row)
		}
		if len(h.versions) == 0 && h.loaded {
			lines = append(lines, st.Dim.Render("  no versions"))
		}
		for len(lines) < listRows+1 {
			lines = append(lines, "")
		}
		if d := h.diff; d != nil && h.cursor < len(h.versions) && d.version == h.versions[h.cursor].Version {
			lines = append(lines, st.Dim.Render(strings.Repeat("─", max(c.width, 1))), st.Header.Render(d.what))
			for _, l := range d.lines {
				lines = append(lines, diffStyle(st, strings.TrimPrefix(l, "  ")))
			}
		}
	} else {
		lines = append(lines, st.Header.Render(fmt.Sprintf("  %-*s %-8s %-12s %-19s %s", ver.width+1, "ver", "event", "who", "when", "fields")))
		for i := start; i < len(h.ops) && i < start+listRows; i++ {
			op := h.ops[i]
			fields := strings.Join(fieldLabels(c.reg, h.kind, op.Fields), ", ")
			if len(op.Deltas) > 0 {
				fields = deltaText(c.reg, h.kind, op.Deltas)
			}
			row := fmt.Sprintf("  %s %-8s %-12s %-19s %s", ver.of(op.Version), op.Event, safe.Line(op.Actor), op.At.Local().Format("2006-01-02 15:04:05"), fields)
			if i == h.cursor {
				row = st.Selected.Render(padRight(c.clip(selectedMark(row)), c.width))
			}
			lines = append(lines, row)
		}
		if len(h.ops) == 0 && h.loaded {
			lines = append(lines, st.Dim.Render("  no system writes"))
		}
	}
	status := c.statusLines(h.status, safe.Line(h.status.text))
	room := c.height - 3 - (len(status) - 1) // a status that wraps takes its lines from the bottom
	for i, l := range lines {
		if i >= room {
			break
		}
		b.WriteString(c.clip(l) + "\n")
	}
	for i := len(lines); i < room; i++ {
		b.WriteByte('\n')
	}
	b.WriteString(strings.Join(status, "\n"))
	b.WriteByte('\n')
	b.WriteString(c.footer(c.keys.HistoryKeys()))
	return b.String()
}

// versionColumn is the width of the history's version column: that of the newest loaded
// version, so that the rows line up whatever the number of digits.
type versionColumn struct{ width int }

// verColumn returns the version column of the tab shown (its newest row is its first).
func verColumn(h *historyModel) versionColumn {
	top := int64(0)
	if h.tab == 0 && len(h.versions) > 0 {
		top = h.versions[0].Version
	}
	if h.tab == 1 && len(h.ops) > 0 {
		top = h.ops[0].Version
	}
	return versionColumn{width: max(4, len(strconv.FormatInt(top, 10)))}
}

// of returns version v as the column shows it: "v" and the number, padded.
func (vc versionColumn) of(v int64) string { return fmt.Sprintf("v%-*d", vc.width, v) }
