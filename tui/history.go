package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// historyModel shows a record's versions (who, when, which fields, and the diff against the
// version before) and, on its own tab, the operation log of writes that added no version.
type historyModel struct {
	c        *common
	kind     store.Kind
	id       int64
	versions []store.Version
	ops      []store.Change
	rec      *store.Record // the record as the history was read: the base of a revert
	loaded   bool
	tab      int // 0 versions, 1 op log
	cursor   int
	status   statusLine
}

type historyMsg struct {
	h        *historyModel
	rec      *store.Record
	versions []store.Version
	ops      []store.Change
	err      error
}

func newHistory(c *common, kind store.Kind, id int64) *historyModel {
	return &historyModel{c: c, kind: kind, id: id}
}

// typing is false: the history takes no text.
func (h *historyModel) typing() bool { return false }

// Init loads the history and the operation log.
func (h *historyModel) Init() tea.Cmd {
	c, kind, id := h.c, h.kind, h.id
	return func() tea.Msg {
		// The record first: a version saved after it is then in the history too, and a
		// revert based on it meets that version as a conflict. A deleted record has none:
		// its history (ending in the tombstone) still shows, and restore, not revert, applies.
		rec, err := c.st.FindRecord(c.ctx, kind, id)
		if err != nil && store.ErrorCode(err) != store.ENOTFOUND {
			return historyMsg{h: h, err: err}
		}
		vs, err := c.st.FindHistory(c.ctx, kind, id)
		if err != nil {
			return historyMsg{h: h, err: err}
		}
		ops, err := c.st.FindOps(c.ctx, kind, id)
		return historyMsg{h: h, rec: rec, versions: vs, ops: ops, err: err}
	}
}

// Update handles keys and the loaded history.
func (h *historyModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case historyMsg:
		if msg.h != h {
			return nil
		}
		h.loaded = true
		if msg.err != nil {
			h.status.fail("history", msg.err)
			return nil
		}
		h.versions, h.ops, h.rec = msg.versions, msg.ops, msg.rec
	case changeMsg:
		return h.onChange(msg.c)
	case tea.KeyPressMsg:
		if cmd, ok := h.restoreKey(msg); ok {
			return cmd
		}
		k := h.c.keys
		n := len(h.versions)
		if h.tab == 1 {
			n = len(h.ops)
		}
		switch {
		case key.Matches(msg, k.Back), key.Matches(msg, k.Quit):
			return func() tea.Msg { return backMsg{} }
		case key.Matches(msg, k.Revert) && h.tab == 0:
			return h.revert()
		case key.Matches(msg, k.SwitchTab):
			h.tab = 1 - h.tab
			h.cursor = 0
		case key.Matches(msg, k.Down):
			h.cursor = min(h.cursor+1, max(n-1, 0))
		case key.Matches(msg, k.Up):
			h.cursor = max(h.cursor-1, 0)
		}
	}
	return nil
}

// revert opens the editor with the selected version's values on top of the record as the
// history read it: the save that follows is a normal, version-checked one, so a version
// saved since meets the conflict dialog.
func (h *historyModel) revert() tea.Cmd {
	if h.rec == nil || h.cursor >= len(h.versions) {
		return nil
	}
	v := h.versions[h.cursor]
	if v.Version == h.rec.Version {
		h.status.info(fmt.Sprintf("v%d is the current version", v.Version))
		return nil
	}
	r := &revertTo{base: h.rec, version: v}
	kind, id := h.kind, h.id
	return func() tea.Msg { return openEditorMsg{kind: kind, id: id, revert: r} }
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
	listRows := max((c.height-4)/2, 3)
	if h.tab == 0 {
		lines = append(lines, st.Header.Render(fmt.Sprintf("  %-5s %-12s %-19s %s", "ver", "who", "when", "fields")))
		start := max(0, h.cursor-listRows+1)
		for i := start; i < len(h.versions) && i < start+listRows; i++ {
			v := h.versions[i]
			row := fmt.Sprintf("  v%-4d %-12s %-19s %s", v.Version, safe.Line(v.Actor), v.At.Local().Format("2006-01-02 15:04:05"), versionWhat(c.reg, h.kind, v))
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
		if h.cursor < len(h.versions) {
			v := h.versions[h.cursor]
			prev := store.Values{}
			what := "created"
			if h.cursor+1 < len(h.versions) {
				prev = h.versions[h.cursor+1].Snapshot
				what = fmt.Sprintf("v%d → v%d", h.versions[h.cursor+1].Version, v.Version)
			}
			what, diff := versionDiff(c.reg, h.kind, v, what, changeLines(c.reg, h.kind, prev, v.Snapshot))
			lines = append(lines, st.Dim.Render(strings.Repeat("─", max(c.width, 1))), st.Header.Render(what))
			for _, l := range diff {
				lines = append(lines, diffStyle(st, strings.TrimPrefix(l, "  ")))
			}
		}
	} else {
		lines = append(lines, st.Header.Render(fmt.Sprintf("  %-5s %-8s %-12s %-19s %s", "ver", "event", "who", "when", "fields")))
		for i, op := range h.ops {
			if i >= c.height-5 {
				break
			}
			fields := strings.Join(fieldLabels(c.reg, h.kind, op.Fields), ", ")
			if len(op.Deltas) > 0 {
				fields = deltaText(c.reg, h.kind, op.Deltas)
			}
			row := fmt.Sprintf("  v%-4d %-8s %-12s %-19s %s", op.Version, op.Event, safe.Line(op.Actor), op.At.Local().Format("2006-01-02 15:04:05"), fields)
			if i == h.cursor {
				row = st.Selected.Render(padRight(c.clip(selectedMark(row)), c.width))
			}
			lines = append(lines, row)
		}
		if len(h.ops) == 0 && h.loaded {
			lines = append(lines, st.Dim.Render("  no system writes"))
		}
	}
	for i, l := range lines {
		if i >= c.height-3 {
			break
		}
		b.WriteString(c.clip(l) + "\n")
	}
	for i := len(lines); i < c.height-3; i++ {
		b.WriteByte('\n')
	}
	b.WriteString(h.status.style(st).Render(c.clip(h.status.text)))
	b.WriteByte('\n')
	b.WriteString(c.footer(c.keys.HistoryKeys()))
	return b.String()
}
