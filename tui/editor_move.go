package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Moving a record of a tree kind (documents, or any kind the schema marks tree) from the
// editor: a tree picker of the kind's records, and the move itself through
// store.MoveRecord with the editor's lease token. The picker offers every record; the store
// decides what is allowed (no cycle, no tree deeper than MaxDepth, no leased parent) and its
// refusal is shown as it says it.

// movePicker is the tree of records to pick a new parent from. Row 0 is the top level.
type movePicker struct {
	rows   []*store.Record // tree order; rows[0] is nil: the top level
	depth  map[int64]int
	under  map[int64]bool // the record being moved and its subtree
	cursor int
	offset int
	loaded bool
	moving bool // the move is on its way
}

type (
	// moveTreeMsg is the tree of the kind's records for the picker.
	moveTreeMsg struct {
		ed   *editorModel
		recs []*store.Record
		err  error
	}
	// movedMsg is the answer to a move.
	movedMsg struct {
		ed     *editorModel
		parent *int64
		res    *store.UpdateResult
		err    error
	}
)

// startMove opens the picker on the tree of the record's kind (tree kinds only).
func (e *editorModel) startMove() tea.Cmd {
	switch {
	case !e.c.reg.Tree(e.kind):
		e.status.info(fmt.Sprintf("%s records are not in a tree: nothing to move", e.kind))
		return nil
	case e.rec == nil:
		e.status.info(fmt.Sprintf("only a saved %s can be moved", e.kind))
		return nil
	case e.readOnly != "":
		e.status.warn("read-only: " + e.readOnly)
		return nil
	}
	e.picker = &movePicker{}
	e.mode = modeMove
	c, kind := e.c, e.kind
	return func() tea.Msg {
		recs, err := c.st.FindRecords(c.ctx, store.Filter{Kind: kind, Limit: maxDocuments})
		return moveTreeMsg{ed: e, recs: recs, err: err}
	}
}

func (e *editorModel) onMoveTree(msg moveTreeMsg) tea.Cmd {
	p := e.picker
	if p == nil {
		return nil
	}
	if msg.err != nil {
		e.mode, e.picker = modeEdit, nil
		e.status.fail(fmt.Sprintf("load the %s tree", e.kind), msg.err)
		return nil
	}
	ordered, depth := treeOrder(msg.recs, true)
	p.rows = append([]*store.Record{nil}, ordered...)
	p.depth, p.loaded = depth, true
	p.under = map[int64]bool{}
	cur, _ := e.rec.Fields[store.ParentField].(int64)
	inside := false // the subtree follows its root in tree order, deeper than it
	for i, r := range p.rows {
		if r == nil {
			continue
		}
		if r.ID == cur {
			p.cursor = i
		}
		inside = r.ID == e.id || (inside && depth[r.ID] > depth[e.id])
		if inside {
			p.under[r.ID] = true
		}
	}
	e.clampPicker()
	return nil
}

// pickerRows is how many tree rows the picker shows.
func (e *editorModel) pickerRows() int { return max(e.c.height-6, 1) }

func (e *editorModel) clampPicker() {
	p := e.picker
	p.cursor, p.offset = clampWindow(p.cursor, p.offset, len(p.rows), e.pickerRows())
}

// clampWindow keeps a cursor within rows rows and the window of n rows from offset around
// it, returning both.
func clampWindow(cursor, offset, rows, n int) (int, int) {
	cursor = max(0, min(cursor, rows-1))
	if cursor < offset {
		offset = cursor
	}
	if cursor >= offset+n {
		offset = cursor - n + 1
	}
	return cursor, offset
}

func (e *editorModel) onMoveKey(msg tea.KeyPressMsg) tea.Cmd {
	p, k := e.picker, e.c.keys
	switch {
	case key.Matches(msg, k.Back):
		e.mode, e.picker = modeEdit, nil
		e.status.info("move cancelled")
		return e.focusCmd()
	case !p.loaded || p.moving:
		return nil
	case key.Matches(msg, k.Down):
		p.cursor++
	case key.Matches(msg, k.Up):
		p.cursor--
	case key.Matches(msg, k.PageDown):
		p.cursor += e.pickerRows()
	case key.Matches(msg, k.PageUp):
		p.cursor -= e.pickerRows()
	case key.Matches(msg, k.Confirm):
		var parent *int64
		if r := p.rows[p.cursor]; r != nil {
			id := r.ID
			parent = &id
		}
		p.moving = true
		e.status.info("moving…")
		m := store.Move{Parent: parent, LeaseToken: e.c.saveToken(e.held)}
		c, kind, id := e.c, e.kind, e.id
		return tea.Batch(e.spin.Tick, func() tea.Msg {
			res, err := c.st.MoveRecord(c.ctx, kind, id, m)
			return movedMsg{ed: e, parent: parent, res: res, err: err}
		})
	}
	e.clampPicker()
	return nil
}

// parentName is how the picker and messages name a parent: "the top level" or "3 · Handbook".
func (e *editorModel) parentName(parent *int64) string {
	if parent == nil {
		return "the top level"
	}
	if e.picker != nil {
		for _, r := range e.picker.rows {
			if r != nil && r.ID == *parent {
				return fmt.Sprintf("%d · %s", r.ID, safe.Line(e.c.reg.TitleOf(r)))
			}
		}
	}
	return itoa(*parent)
}

// onMoved takes the moved record as the new base when the move is all that changed since
// the base (so typed edits stay, on top of it); after other writes the base stays, and the
// next save meets them as a conflict like any other.
func (e *editorModel) onMoved(msg movedMsg) tea.Cmd {
	if e.picker != nil {
		e.picker.moving = false
	}
	if msg.err != nil {
		// Stay in the picker: the store's refusal (a cycle, too deep, a leased parent) says
		// why, and another parent may be picked.
		e.status.fail("move", msg.err)
		return nil
	}
	where := e.parentName(msg.parent)
	e.mode, e.picker = modeEdit, nil
	rec := msg.res.Record
	switch {
	case msg.res.Unchanged:
		e.status.info("already under " + where)
	case !e.changed():
		e.rec = rec
		e.fill(rec)
		e.status.ok(fmt.Sprintf("moved under %s → v%d", where, rec.Version))
	case rec.Version == e.rec.Version+1:
		e.rebase(rec, e.values(), e.deltas())
		e.status.ok(fmt.Sprintf("moved under %s → v%d; your edits are kept", where, rec.Version))
	default:
		e.status.ok(fmt.Sprintf("moved under %s → v%d; others saved meanwhile: %s merges your edits", where, rec.Version, keyName(e.c.keys.Save)))
	}
	e.titles = map[refKey]string{} // the parent's title is asked for again
	return e.focusCmd()
}

// moveView draws the picker.
func (e *editorModel) moveView() string {
	c, st, p := e.c, e.c.styles, e.picker
	var b strings.Builder
	b.WriteString(st.Title.Render("tandem") + " " + st.Header.Render(fmt.Sprintf("move %s %d", e.kind, e.id)) + "  " +
		st.Dim.Render(safe.Line(ansi.Truncate(c.reg.TitleOf(e.rec), max(c.width-30, 10), "…"))))
	b.WriteByte('\n')
	b.WriteString(c.clip("Put it under:"))
	b.WriteByte('\n')
	cur, _ := e.rec.Fields[store.ParentField].(int64)
	n := e.pickerRows()
	lines := 0
	if !p.loaded {
		b.WriteString(st.Dim.Render("  loading…") + "\n")
		lines++
	}
	for i := p.offset; p.loaded && i < len(p.rows) && i < p.offset+n; i++ {
		r := p.rows[i]
		text, note := "(top level)", ""
		if r != nil {
			text = strings.Repeat("  ", p.depth[r.ID]) + itoa(r.ID) + " · " + safe.Line(c.reg.TitleOf(r))
			switch {
			case r.ID == e.id:
				note = fmt.Sprintf("  (this %s)", e.kind)
			case p.under[r.ID]:
				note = fmt.Sprintf("  (inside this %s)", e.kind)
			}
		}
		if (r == nil && cur == 0) || (r != nil && r.ID == cur) {
			note = "  (current parent)"
		}
		row := "  " + text + note
		switch {
		case i == p.cursor:
			row = st.Selected.Render(padRight(c.clip(selectedMark(row)), c.width))
		case note != "":
			row = st.Dim.Render(c.clip(row))
		default:
			row = c.clip(row)
		}
		b.WriteString(row + "\n")
		lines++
	}
	for ; lines < n; lines++ {
		b.WriteByte('\n')
	}
	b.WriteString(e.status.style(st).Render(c.clip(e.statusText())))
	b.WriteByte('\n')
	b.WriteString(c.footer(c.keys.MoveKeys()))
	return b.String()
}
