package tui

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// The record merge itself (states, rules, per-hunk picks, undo) is merge.Records; this file
// only shows it and turns keys into its calls.

// Origins of a field's merged value, for the marks in the merge view.
const (
	fromMine   = "mine"
	fromTheirs = "theirs"
	fromBase   = "base"
	fromBoth   = "both"   // both sides' changes, combined by the field's rule
	fromHunks  = "hunks"  // a text conflict resolved hunk by hunk
	fromEdited = "edited" // a value typed in the merge view
)

// origin says where a resolved field's value comes from; "" for an open conflict.
func origin(fm *merge.FieldMerge) string {
	v, ok := fm.Value()
	switch {
	case !ok:
		return ""
	case fm.State == merge.FieldUnchanged:
		return fromBase
	case fm.State == merge.FieldClean:
		// One side changed it; a value taken from the other side (Override) equals the
		// base and is named after the side whose value it is.
		switch {
		case !store.Equal(v, fm.Base) && store.Equal(v, fm.Theirs):
			return fromTheirs
		case !store.Equal(v, fm.Base) && store.Equal(v, fm.Mine):
			return fromMine
		case store.Equal(fm.Base, fm.Mine):
			return fromMine
		}
		return fromTheirs
	case fm.State == merge.FieldMerged:
		return fromBoth
	case byHunks(fm, v):
		return fromHunks
	case store.Equal(v, fm.Mine):
		return fromMine
	case store.Equal(v, fm.Theirs):
		return fromTheirs
	case store.Equal(v, fm.Base):
		return fromBase
	}
	return fromEdited
}

// byHunks reports whether a text conflict's value v is its hunks with the picks applied
// (rather than a whole-field resolution).
func byHunks(fm *merge.FieldMerge, v any) bool {
	if fm.Text == nil || !fm.Text.Done() {
		return false
	}
	s, ok := v.(string)
	return ok && s == string(fm.Text.Bytes(merge.RenderOptions{}))
}

// markedLines is a text merge line by line, each line marked with where it comes from:
// "◆" their change, "●" mine, "◈" text combined from both (a word-level merge or a hunk
// typed in), nothing for text neither side changed. pick returns the choice for the k-th
// conflict hunk; the lines are those Resolution.Bytes writes for the same choices.
func markedLines(st Styles, res merge.Result, pick func(k int) merge.Choice) []string {
	var out []string
	add := func(mark string, lines [][]byte) {
		for _, l := range bytesLines(lines) {
			out = append(out, mark+l)
		}
	}
	theirs, mine, both := st.Theirs.Render("◆ "), st.Mine.Render("● "), st.Conflict.Render("◈ ")
	k := 0
	for _, ch := range res.Chunks {
		switch ch.Kind {
		case merge.ChangedTheirs:
			add(theirs, ch.Lines)
		case merge.ChangedOurs, merge.ChangedBoth:
			add(mine, ch.Lines)
		case merge.Conflict:
			switch c := pick(k); c.Pick {
			case merge.PickEdited:
				add(both, splitBytes(c.Edited))
			case merge.PickTheirs:
				add(theirs, ch.Theirs)
			case merge.PickBase:
				add("  ", ch.Base)
			case merge.PickBoth:
				add(mine, ch.Ours)
				add(theirs, ch.Theirs)
			default:
				add(mine, ch.Ours)
			}
			k++
		default:
			add("  ", ch.Lines)
		}
	}
	return out
}

// splitBytes splits text into lines, each keeping its line ending.
func splitBytes(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// conflictMarkers renders open hunks with these labels, so a value edited in the merge view
// shows both sides; one left with markers in it is not taken.
var conflictMarkers = merge.RenderOptions{OursLabel: "mine", TheirsLabel: "theirs"}

func hasMarkers(s string) bool {
	return strings.Contains(s, "<<<<<<< "+conflictMarkers.OursLabel) &&
		strings.Contains(s, ">>>>>>> "+conflictMarkers.TheirsLabel)
}

// mergeDoneMsg ends the merge view: the values to save, or cancel (back to the dialog).
type mergeDoneMsg struct {
	values store.Values
	cancel bool
}

// mergeModel is the merge view over cs.rm: a component of the editor (a save's conflict)
// and of a working copy's merge screen (workcopy.go).
type mergeModel struct {
	c       *common
	cs      *conflictState
	rm      *merge.RecordResult
	cursor  int                 // index into rm.Fields
	rows    []int               // the fields shown as rows: every field somebody changed
	hunk    map[int]int         // the current hunk of each text conflict
	words   *merge.WordProposal // the current hunk's word-level merge, while shown (w)
	editing bool
	line    lineField
	body    *bodyField
	status  statusLine
}

func newMergeView(c *common, cs *conflictState) *mergeModel {
	m := &mergeModel{c: c, cs: cs, rm: cs.rm, hunk: map[int]int{}}
	for i, fm := range m.rm.Fields {
		if fm.State != merge.FieldUnchanged {
			m.rows = append(m.rows, i)
		}
	}
	for i, fm := range m.rm.Fields {
		if !fm.Resolved() {
			m.cursor = i
			break
		}
	}
	m.line = newLineField()
	m.line.Prompt = ""
	m.body = newBodyField()
	m.layout()
	return m
}

func (m *mergeModel) layout() {
	m.line.SetWidth(max(m.c.width-20, 10))
	m.body.SetSize(max(m.c.width-4, 10), max(m.c.height-len(m.rows)-9, 3))
}

// typing reports whether keys go into a value being edited.
func (m *mergeModel) typing() bool { return m.editing }

// Update handles the window's size and the merge keys: an edit in progress takes them all,
// a word-level proposal shown takes enter, then the view's own keys, then the current
// field's. The view answers its opener with a mergeDoneMsg.
func (m *mergeModel) Update(msg tea.Msg) tea.Cmd {
	if _, ok := msg.(tea.WindowSizeMsg); ok {
		m.layout()
		return nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || len(m.rm.Fields) == 0 {
		return nil
	}
	fm := m.rm.Fields[m.cursor]
	if m.editing {
		return m.updateEditing(k, fm)
	}
	m.status = statusLine{}
	if m.words != nil {
		if cmd, done := m.onProposalKey(k, fm); done {
			return cmd
		}
	}
	if cmd, done := m.onViewKey(k); done {
		return cmd
	}
	return m.onFieldKey(k, fm)
}

// onProposalKey handles a key while a word-level proposal is shown: Confirm takes it, any
// other key puts it away (and, but for esc and w, does what it does: done is false).
func (m *mergeModel) onProposalKey(k tea.KeyPressMsg, fm *merge.FieldMerge) (tea.Cmd, bool) {
	keys := m.c.keys
	m.words = nil
	if key.Matches(k, keys.Confirm) {
		if _, err := m.rm.TakeWords(fm.Field.Name, m.hunk[m.cursor]); err != nil {
			m.status.fail("merge", err)
			return nil, true
		}
		m.status.info(fmt.Sprintf("%s hunk %d: word-level merge taken (%s undoes it)", fm.Field.Label, m.hunk[m.cursor]+1, keyName(keys.Undo)))
		m.afterHunk(fm.Text, m.hunk[m.cursor])
		return nil, true
	}
	return nil, key.Matches(k, keys.Back) || key.Matches(k, keys.Words)
}

// onViewKey handles the keys of the whole view: save the result, leave, move between
// fields, undo the last step; done says the key was one.
func (m *mergeModel) onViewKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	keys := m.c.keys
	switch {
	case key.Matches(k, keys.Save):
		if n := m.rm.Conflicts(); n > 0 {
			m.status.warn(plural(n, "conflict", "conflicts") + " left: pick " + m.pickKeys() + ", or " + keyName(keys.EditValue) + " to edit")
			return nil, true
		}
		vals, err := m.rm.Values()
		if err != nil {
			m.status.fail("merge", err)
			return nil, true
		}
		return func() tea.Msg { return mergeDoneMsg{values: vals} }, true
	case key.Matches(k, keys.Back):
		return func() tea.Msg { return mergeDoneMsg{cancel: true} }, true
	case key.Matches(k, keys.Down), key.Matches(k, keys.Up):
		at := slices.Index(m.rows, m.cursor)
		if key.Matches(k, keys.Down) {
			at = min(at+1, len(m.rows)-1)
		} else {
			at = max(at-1, 0)
		}
		if at >= 0 {
			m.cursor = m.rows[at]
		}
		return nil, true
	case key.Matches(k, keys.Undo):
		m.undo()
		return nil, true
	}
	return nil, false
}

// undo takes back the last step and shows the field (and hunk) it was in.
func (m *mergeModel) undo() {
	u, ok := m.rm.Undo()
	if !ok {
		m.status.info("nothing to undo")
		return
	}
	for i, f := range m.rm.Fields {
		if f.Field == u.Field {
			m.cursor = i
		}
	}
	if u.Hunk >= 0 {
		m.hunk[m.cursor] = u.Hunk
	}
	m.status.info(u.String())
}

// onFieldKey handles a key on the current field: edit its value, pick a side, or the hunk
// keys of a text field.
func (m *mergeModel) onFieldKey(k tea.KeyPressMsg, fm *merge.FieldMerge) tea.Cmd {
	keys := m.c.keys
	switch {
	case fm.State == merge.FieldClean && (key.Matches(k, keys.PickMine) || key.Matches(k, keys.PickTheirs) || key.Matches(k, keys.PickBase)):
		m.override(fm, k)
	case fm.State != merge.FieldConflict:
		if key.Matches(k, keys.EditValue) || key.Matches(k, keys.PickMine) || key.Matches(k, keys.PickTheirs) {
			m.status.info(fm.Field.Label + " merged without conflict")
		}
	case key.Matches(k, keys.EditValue):
		return m.startEditing(fm)
	case fm.Text != nil:
		return m.updateText(k, fm)
	case key.Matches(k, keys.PickMine), key.Matches(k, keys.PickTheirs), key.Matches(k, keys.PickBase):
		p := merge.PickOurs
		switch {
		case key.Matches(k, keys.PickTheirs):
			p = merge.PickTheirs
		case key.Matches(k, keys.PickBase):
			p = merge.PickBase
		}
		m.resolved(m.rm.Resolve(fm.Field.Name, p))
	case key.Matches(k, keys.PickBoth), key.Matches(k, keys.NextHunk), key.Matches(k, keys.PrevHunk),
		key.Matches(k, keys.AllMine), key.Matches(k, keys.AllTheirs), key.Matches(k, keys.Words):
		// The footer offers these for text fields; a field of one value has no hunks.
		m.status.info(k.String() + " works only in text fields: " + fm.Field.Label + " takes " + m.pickKeys() + " or " + keyName(keys.EditValue))
	}
	return nil
}

// override takes the side key k names for field fm, which merged cleanly: the change one
// side made is not always the one to keep.
func (m *mergeModel) override(fm *merge.FieldMerge, k tea.KeyPressMsg) {
	keys := m.c.keys
	p := merge.PickOurs
	switch {
	case key.Matches(k, keys.PickTheirs):
		p = merge.PickTheirs
	case key.Matches(k, keys.PickBase):
		p = merge.PickBase
	}
	if err := m.rm.Override(fm.Field.Name, p); err != nil {
		m.status.fail("merge", err)
		return
	}
	m.status.info(fmt.Sprintf("%s: %s taken (%s undoes it)", fm.Field.Label, pickName(p), keyName(keys.Undo)))
}

// startEditing opens field fm's value for editing: a text with its conflict markers, one
// value as mine.
func (m *mergeModel) startEditing(fm *merge.FieldMerge) tea.Cmd {
	m.editing = true
	v, resolved := fm.Value()
	if fm.Text != nil {
		text, _ := v.(string)
		if !resolved {
			text = string(fm.Text.Bytes(conflictMarkers))
		}
		m.body.SetValue(text)
		return m.body.Focus()
	}
	if !resolved {
		v = fm.Mine
	}
	m.line.SetValue(fm.Field.Format(v))
	m.line.CursorEnd()
	return m.line.Focus()
}

// resolved records a successful step and moves on to the next open conflict, or shows
// why the step failed.
func (m *mergeModel) resolved(err error) {
	if err != nil {
		m.status.fail("merge", err)
		return
	}
	m.nextConflict()
}

// updateText handles hunk keys inside a conflicting text field.
func (m *mergeModel) updateText(k tea.KeyPressMsg, fm *merge.FieldMerge) tea.Cmd {
	keys := m.c.keys
	t, name, cur := fm.Text, fm.Field.Name, m.hunk[m.cursor]
	var p merge.Pick
	switch {
	case t.Hunks() == 0:
		return nil
	case key.Matches(k, keys.NextHunk):
		m.hunk[m.cursor] = (cur + 1) % t.Hunks()
		return nil
	case key.Matches(k, keys.PrevHunk):
		m.hunk[m.cursor] = (cur - 1 + t.Hunks()) % t.Hunks()
		return nil
	case key.Matches(k, keys.AllMine), key.Matches(k, keys.AllTheirs):
		m.pickRemaining(fm, key.Matches(k, keys.AllTheirs))
		return nil
	case key.Matches(k, keys.PickMine):
		p = merge.PickOurs
	case key.Matches(k, keys.PickTheirs):
		p = merge.PickTheirs
	case key.Matches(k, keys.PickBase):
		p = merge.PickBase
	case key.Matches(k, keys.PickBoth):
		p = merge.PickBoth
	case key.Matches(k, keys.Words):
		m.proposeWords(fm, cur)
		return nil
	default:
		return nil
	}
	if err := m.rm.PickHunk(name, cur, p); err != nil {
		m.status.fail("merge", err)
		return nil
	}
	m.afterHunk(t, cur)
	return nil
}

// pickRemaining takes mine (or, with theirs, theirs) for every open hunk of text field fm.
func (m *mergeModel) pickRemaining(fm *merge.FieldMerge, theirs bool) {
	p := merge.PickOurs
	if theirs {
		p = merge.PickTheirs
	}
	n, err := m.rm.PickRemaining(fm.Field.Name, p)
	if err == nil && n == 0 {
		m.status.info("no open hunks left in " + fm.Field.Label)
		return
	}
	m.resolved(err)
}

// proposeWords shows the word-level merge of hunk cur of text field fm, or why there is none.
func (m *mergeModel) proposeWords(fm *merge.FieldMerge, cur int) {
	w, err := m.rm.ProposeWords(fm.Field.Name, cur)
	if err != nil {
		m.status.warn(fmt.Sprintf("%s hunk %d: %v", fm.Field.Label, cur+1, err))
		return
	}
	m.words = w
}

// afterHunk moves on after hunk cur of t was resolved: to its next open hunk, or to the next
// open conflict.
func (m *mergeModel) afterHunk(t *merge.Resolution, cur int) {
	if t.Remaining() > 0 {
		m.hunk[m.cursor] = nextOpenHunk(t, cur)
	} else {
		m.nextConflict()
	}
}

// nextOpenHunk returns the next unresolved hunk after cur (wrapping), or cur.
func nextOpenHunk(t *merge.Resolution, cur int) int {
	for i := 1; i <= t.Hunks(); i++ {
		j := (cur + i) % t.Hunks()
		if c, err := t.Choice(j); err == nil && c.Pick == merge.PickNone {
			return j
		}
	}
	return cur
}

// updateEditing gives a key to the value being edited: back ends a text's edit, confirm
// takes a one-line value.
func (m *mergeModel) updateEditing(k tea.KeyPressMsg, fm *merge.FieldMerge) tea.Cmd {
	if fm.Text != nil {
		return m.updateEditingText(k, fm)
	}
	name := fm.Field.Name
	switch {
	case key.Matches(k, m.c.keys.Confirm):
		v, err := fm.Field.Parse(m.line.Value())
		if err == nil {
			err = m.rm.ResolveValue(name, v)
		}
		if err != nil {
			m.status.fail("value", err)
			return nil
		}
		m.editing = false
		m.line.Blur()
		m.nextConflict()
		return nil
	case key.Matches(k, m.c.keys.Back):
		m.editing = false
		m.line.Blur()
		return nil
	}
	var cmd tea.Cmd
	m.line, cmd = m.line.Update(k)
	return cmd
}

// updateEditingText gives a key to the text being edited; back takes the text unless it
// still has conflict markers.
func (m *mergeModel) updateEditingText(k tea.KeyPressMsg, fm *merge.FieldMerge) tea.Cmd {
	if !key.Matches(k, m.c.keys.Back) {
		return m.body.Update(k)
	}
	m.editing = false
	m.body.Blur()
	text := m.body.Value()
	if hasMarkers(text) {
		m.status.warn(fm.Field.Label + " still has conflict markers: not taken")
		return nil
	}
	if v, ok := fm.Value(); ok && store.Equal(v, text) {
		return nil
	}
	m.resolved(m.rm.ResolveValue(fm.Field.Name, text))
	return nil
}

// nextConflict moves the cursor to the next unresolved field, if any.
func (m *mergeModel) nextConflict() {
	n := len(m.rm.Fields)
	for i := 1; i <= n; i++ {
		j := (m.cursor + i) % n
		if !m.rm.Fields[j].Resolved() {
			m.cursor = j
			return
		}
	}
}

// View draws every field with its state and the result to be written (their changes marked),
// then the detail of the selected field: the three values, or the current hunk's diffs.
func (m *mergeModel) View() string {
	c, st, cs := m.c, m.c.styles, m.cs
	var b strings.Builder
	total := len(conflictFields(m.rm))
	b.WriteString(st.Title.Render("tandem") + " " + st.Header.Render(fmt.Sprintf("merge %s %d · yours (v%d) with %s's v%d",
		cs.ce.Kind, cs.ce.ID, cs.base.Version, cs.who(), cs.ce.Current.Version)))
	b.WriteByte('\n')
	left := m.rm.Conflicts()
	counter := fmt.Sprintf("%d of %s left", left, plural(total, "conflict", "conflicts"))
	if left == 0 {
		b.WriteString(st.OK.Render(counter + " — " + keyName(c.keys.Save) + " saves"))
	} else {
		b.WriteString(st.Conflict.Render(counter))
	}
	b.WriteByte('\n')
	b.WriteString(st.Header.Render(fmt.Sprintf("  %-13s %-9s %s", "field", "state", "will be written")))
	b.WriteByte('\n')
	valW := max(c.width-28, 10)
	var same []string
	for _, fm := range m.rm.Fields {
		if fm.State == merge.FieldUnchanged {
			same = append(same, fm.Field.Label)
		}
	}
	for _, i := range m.rows {
		b.WriteString(m.row(i, valW) + "\n")
	}
	if len(same) > 0 {
		b.WriteString(st.Dim.Render(c.clip("  unchanged: " + strings.Join(same, ", "))))
		b.WriteByte('\n')
	}
	b.WriteString(st.Dim.Render(strings.Repeat("─", max(c.width, 1))))
	b.WriteByte('\n')
	used := 4 + len(m.rows)
	if len(same) > 0 {
		used++
	}
	// A status that wraps takes its extra lines from the detail.
	status := c.statusLines(m.status, safe.Line(m.status.text))
	room := max(c.height-used-1-len(status), 1)
	detail := m.detail()
	if len(detail) > room {
		detail = detail[:room]
	}
	for _, l := range detail {
		b.WriteString(c.clip(l) + "\n")
	}
	for i := len(detail); i < room; i++ {
		b.WriteByte('\n')
	}
	b.WriteString(strings.Join(status, "\n"))
	b.WriteByte('\n')
	b.WriteString(c.footer(c.keys.MergeKeys()))
	return b.String()
}

// row is field i's line: label, state, the value to be written and where it comes from.
func (m *mergeModel) row(i, valW int) string {
	st := m.c.styles
	fm := m.rm.Fields[i]
	state, stStyle := fm.State.String(), st.Dim
	switch {
	case !fm.Resolved():
		stStyle = st.Conflict
	case fm.State == merge.FieldConflict:
		state, stStyle = "resolved", st.OK
	case fm.State == merge.FieldMerged:
		stStyle = st.OK
	}
	var val string
	switch v, ok := fm.Value(); {
	case ok:
		val = ansi.Truncate(safe.Line(firstLine(fm.Field.Format(v))), valW-10, "…")
	case fm.Text != nil:
		val = fmt.Sprintf("%d of %s open", fm.Text.Remaining(), plural(fm.Text.Hunks(), "hunk", "hunks"))
	default:
		val = "?"
	}
	var mark string
	switch from := origin(fm); from {
	case fromTheirs:
		mark = st.Theirs.Render(" ◆ theirs")
	case fromMine:
		mark = st.Mine.Render(" ● mine")
	case "":
	default:
		mark = st.Dim.Render(" (" + from + ")")
	}
	cursor := "  "
	label := padRight(ansi.Truncate(fm.Field.Label, 13, "…"), 13)
	if i == m.cursor {
		cursor = st.Focused.Render("▸ ")
		label = st.Focused.Render(label)
	}
	return cursor + label + " " + stStyle.Render(padRight(state, 9)) + " " + val + mark
}

// detail is the lower pane for the selected field.
func (m *mergeModel) detail() []string {
	st, keys := m.c.styles, m.c.keys
	if len(m.rm.Fields) == 0 {
		return nil
	}
	fm := m.rm.Fields[m.cursor]
	f := fm.Field
	if m.editing {
		if fm.Text != nil {
			return append([]string{"editing " + f.Label + " (" + keyName(keys.Back) + " when done; with conflict markers left in it is not taken):"},
				strings.Split(m.body.View(), "\n")...)
		}
		return []string{"editing " + f.Label + " (" + keyName(keys.Confirm) + " keeps, " + keyName(keys.Back) + " cancels):", "  " + m.line.View()}
	}
	switch {
	case f.Type == store.TypeText && fm.Resolved():
		return append([]string{f.Label + " will be written as (" + st.Theirs.Render("◆ theirs") + ", " + st.Mine.Render("● mine") +
			", " + st.Conflict.Render("◈ both") + "):"},
			m.preview(fm)...)
	case fm.State != merge.FieldConflict:
		v := shortAll(f, 16, fm.Base, fm.Mine, fm.Theirs)
		return []string{fmt.Sprintf("%s: %s — base %s · yours %s · theirs %s", f.Label, fm.State, v[0], v[1], v[2])}
	case fm.Text == nil || fm.Text.Hunks() == 0:
		v := shortAll(f, max(m.c.width-12, 16), fm.Mine, fm.Theirs, fm.Base)
		return []string{
			f.Label + " changed on both sides:",
			"  " + st.Focused.Render(keyName(keys.PickMine)) + " " + st.Mine.Render("mine   "+v[0]),
			"  " + st.Focused.Render(keyName(keys.PickTheirs)) + " " + st.Theirs.Render("theirs "+v[1]),
			"  " + st.Focused.Render(keyName(keys.PickBase)) + " " + st.Base.Render("base   "+v[2]),
			"  " + st.Dim.Render(keyName(keys.EditValue)+": type a value"),
		}
	}
	cur := m.hunk[m.cursor]
	ch, err := fm.Text.Hunk(cur)
	if err != nil {
		return []string{err.Error()}
	}
	state := "open"
	if c, _ := fm.Text.Choice(cur); c.Pick != merge.PickNone {
		state = "picked " + pickName(c.Pick)
	}
	out := []string{fmt.Sprintf("%s · hunk %d of %d (base line %d) · %s · %s mine %s theirs %s base %s both",
		f.Label, cur+1, fm.Text.Hunks(), ch.BaseStart+1, state,
		keyName(keys.PickMine), keyName(keys.PickTheirs), keyName(keys.PickBase), keyName(keys.PickBoth))}
	if m.words != nil {
		out = append(out, fmt.Sprintf("word-level merge (%s, %s) · %s takes it, %s puts it away:",
			st.Mine.Render("●[mine]"), st.Theirs.Render("◆[theirs]"), keyName(keys.Confirm), keyName(keys.Back)))
		return append(out, wordLines(st, m.words, max(m.c.width-2, 10))...)
	}
	out = append(out, st.Mine.Render("mine vs base:"))
	for _, d := range editLines(ch.OursDiff()) {
		out = append(out, "  "+diffStyle(st, d))
	}
	out = append(out, st.Theirs.Render("theirs vs base:"))
	for _, d := range editLines(ch.TheirsDiff()) {
		out = append(out, "  "+diffStyle(st, d))
	}
	return out
}

// pickKeys names the keys that pick a side, as bound: "1 mine, 2 theirs, 3 base".
func (m *mergeModel) pickKeys() string {
	k := m.c.keys
	return fmt.Sprintf("%s mine, %s theirs, %s base", keyName(k.PickMine), keyName(k.PickTheirs), keyName(k.PickBase))
}

// pickName says a pick the way the merge view's keys do.
func pickName(p merge.Pick) string {
	if p == merge.PickOurs {
		return "mine"
	}
	return p.String()
}

// preview is a resolved text field as it will be written, each line marked with its origin.
func (m *mergeModel) preview(fm *merge.FieldMerge) []string {
	st := m.c.styles
	v, _ := fm.Value()
	switch {
	case byHunks(fm, v):
		return markedLines(st, fm.Text.Result(), func(k int) merge.Choice {
			c, _ := fm.Text.Choice(k)
			return c
		})
	case fm.State == merge.FieldMerged:
		b, _ := fm.Base.(string)
		mi, _ := fm.Mine.(string)
		t, _ := fm.Theirs.(string)
		return markedLines(st, merge.Text([]byte(b), []byte(mi), []byte(t)), func(int) merge.Choice { return merge.Choice{} })
	}
	mark := "  "
	switch origin(fm) {
	case fromTheirs:
		mark = st.Theirs.Render("◆ ")
	case fromMine:
		mark = st.Mine.Render("● ")
	}
	var out []string
	for _, l := range splitText(fm.Field.Format(v)) {
		out = append(out, mark+l)
	}
	return out
}

// wordLines is a word-level proposal as it would be written, wrapped to width, with each
// side's words marked: "●[…]" mine, "◆[…]" theirs (in their colours too), so the marks show
// without colour. Database text goes through safe.Line piece by piece.
func wordLines(st Styles, w *merge.WordProposal, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, pc := range w.Pieces {
		segs := strings.Split(pc.Text, "\n")
		for i, seg := range segs {
			if i > 0 {
				lines = append(lines, cur.String())
				cur.Reset()
			}
			if seg == "" {
				continue
			}
			seg = safe.Line(seg)
			switch pc.From {
			case merge.ChangedOurs:
				seg = st.Mine.Render("●[" + seg + "]")
			case merge.ChangedTheirs:
				seg = st.Theirs.Render("◆[" + seg + "]")
			case merge.ChangedBoth:
				seg = st.Mine.Render("●◆[" + seg + "]")
			}
			cur.WriteString(seg)
		}
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap("  "+l, width, ""), "\n")...)
	}
	return out
}
