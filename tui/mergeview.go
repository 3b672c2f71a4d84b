package tui

import (
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

// fieldState is where one field of a three-way record merge stands.
type fieldState int

const (
	stateUnchanged fieldState = iota // nobody changed it
	stateClean                       // one side changed it (or both the same way)
	stateMerged                      // both changed it and the rule combined them
	stateConflict                    // both changed it differently: someone must pick
)

func (s fieldState) String() string {
	return [...]string{"unchanged", "clean", "merged", "conflict"}[s]
}

// pick is a choice for a conflicting field or hunk.
type pick int

const (
	pickNone pick = iota
	pickMine
	pickTheirs
	pickBase
	pickBoth   // text hunks: mine then theirs, without the base
	pickEdited // a value typed in the merge view
)

func (p pick) String() string {
	return [...]string{"", "mine", "theirs", "base", "both", "edited"}[p]
}

// fieldMerge is one field of a record merge.
type fieldMerge struct {
	f                  *store.Field
	base, mine, theirs any
	state              fieldState
	from               string        // clean/merged: "mine", "theirs" or "both", for the preview marks
	value              any           // the result once resolved
	pick               pick          // conflicts: how it was resolved (pickNone: not yet)
	text               *textResolver // text fields both sides changed: the hunks
}

func (fm *fieldMerge) resolved() bool {
	if fm.state != stateConflict {
		return true
	}
	if fm.text != nil && fm.pick != pickEdited {
		return fm.text.left() == 0
	}
	return fm.pick != pickNone
}

// result is the value to write.
func (fm *fieldMerge) result() any {
	if fm.state == stateConflict && fm.text != nil && fm.pick != pickEdited {
		return fm.text.text()
	}
	return fm.value
}

// recordMerge is a field-by-field three-way merge of base, mine and theirs by registry rule.
type recordMerge struct{ fields []*fieldMerge }

// mergeRecord merges every field of kind. deltas are my relative changes (counters).
func mergeRecord(reg *store.Registry, kind store.Kind, base, mine, theirs store.Values, deltas map[string]int64) *recordMerge {
	rm := &recordMerge{}
	for _, f := range reg.Fields(kind) {
		b, m, t := base[f.Name], mine[f.Name], theirs[f.Name]
		fm := &fieldMerge{f: f, base: b, mine: m, theirs: t}
		mc, tc := !store.Equal(b, m), !store.Equal(b, t)
		switch {
		case !mc && !tc:
			fm.state, fm.value = stateUnchanged, t
		case mc && !tc:
			fm.state, fm.value, fm.from = stateClean, m, "mine"
		case !mc && tc:
			fm.state, fm.value, fm.from = stateClean, t, "theirs"
		case store.Equal(m, t):
			fm.state, fm.value, fm.from = stateClean, m, "both"
		default:
			mergeBoth(fm, deltas)
		}
		rm.fields = append(rm.fields, fm)
	}
	return rm
}

// mergeBoth applies a field's rule when both sides changed it differently.
func mergeBoth(fm *fieldMerge, deltas map[string]int64) {
	fm.from = "both"
	switch fm.f.Rule {
	case store.RuleCounter:
		b, _ := fm.base.(int64)
		m, _ := fm.mine.(int64)
		t, _ := fm.theirs.(int64)
		fm.state, fm.value = stateMerged, t+(m-b)
		return
	case store.RuleSet:
		b, _ := fm.base.([]string)
		m, _ := fm.mine.([]string)
		t, _ := fm.theirs.([]string)
		out := slices.Clone(t)
		for _, x := range m {
			if !slices.Contains(b, x) && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
		out = slices.DeleteFunc(out, func(x string) bool { return slices.Contains(b, x) && !slices.Contains(m, x) })
		fm.state, fm.value = stateMerged, store.NormalizeSet(out)
		return
	case store.RuleText:
		b, _ := fm.base.(string)
		m, _ := fm.mine.(string)
		t, _ := fm.theirs.(string)
		tr := newTextResolver(b, m, t)
		fm.text = tr
		if tr.total() == 0 {
			fm.state, fm.value = stateMerged, tr.text()
			return
		}
		fm.state, fm.text = stateConflict, tr
		return
	}
	fm.state = stateConflict
}

func (rm *recordMerge) names(keep func(*fieldMerge) bool) []string {
	var out []string
	for _, fm := range rm.fields {
		if keep(fm) {
			out = append(out, fm.f.Name)
		}
	}
	return out
}

func (rm *recordMerge) theirFields() []string {
	return rm.names(func(fm *fieldMerge) bool { return !store.Equal(fm.base, fm.theirs) })
}

func (rm *recordMerge) mineFields() []string {
	return rm.names(func(fm *fieldMerge) bool { return !store.Equal(fm.base, fm.mine) })
}

func (rm *recordMerge) conflictFields() []string {
	return rm.names(func(fm *fieldMerge) bool { return fm.state == stateConflict })
}

// conflicts counts the conflicts not yet resolved.
func (rm *recordMerge) conflicts() int {
	n := 0
	for _, fm := range rm.fields {
		if !fm.resolved() {
			n++
		}
	}
	return n
}

// result is the merged record's values.
func (rm *recordMerge) result() store.Values {
	out := store.Values{}
	for _, fm := range rm.fields {
		out[fm.f.Name] = fm.result()
	}
	return out
}

// textResolver resolves a text merge hunk by hunk, with an undo stack.
type textResolver struct {
	chunks    []merge.Chunk
	conflicts []int // indexes into chunks
	picks     []pick
	cur       int // the current conflict hunk
}

func newTextResolver(base, mine, theirs string) *textResolver {
	res := merge.TextDiff3([]byte(base), []byte(mine), []byte(theirs))
	t := &textResolver{chunks: res.Chunks}
	for i, ch := range res.Chunks {
		if ch.Kind == merge.Conflict {
			t.conflicts = append(t.conflicts, i)
		}
	}
	t.picks = make([]pick, len(t.conflicts))
	return t
}

func (t *textResolver) total() int { return len(t.conflicts) }

func (t *textResolver) left() int {
	n := 0
	for _, p := range t.picks {
		if p == pickNone {
			n++
		}
	}
	return n
}

// text is the merged text; an unresolved hunk keeps mine.
func (t *textResolver) text() string {
	var b strings.Builder
	k := 0
	for _, ch := range t.chunks {
		if ch.Kind != merge.Conflict {
			writeLines(&b, ch.Lines)
			continue
		}
		switch t.picks[k] {
		case pickTheirs:
			writeLines(&b, ch.Theirs)
		case pickBase:
			writeLines(&b, ch.Base)
		case pickBoth:
			writeLines(&b, ch.Ours)
			writeLines(&b, ch.Theirs)
		default:
			writeLines(&b, ch.Ours)
		}
		k++
	}
	return b.String()
}

// preview is the merged text line by line, each line marked with where it comes from:
// "◆" their change, "●" mine, nothing for text neither side changed.
func (t *textResolver) preview(st Styles) []string {
	var out []string
	add := func(mark string, lines [][]byte) {
		for _, l := range bytesLines(lines) {
			out = append(out, mark+l)
		}
	}
	theirs, mine := st.Theirs.Render("◆ "), st.Mine.Render("● ")
	k := 0
	for _, ch := range t.chunks {
		switch ch.Kind {
		case merge.ChangedTheirs:
			add(theirs, ch.Lines)
		case merge.ChangedOurs, merge.ChangedBoth:
			add(mine, ch.Lines)
		case merge.Conflict:
			switch t.picks[k] {
			case pickTheirs:
				add(theirs, ch.Theirs)
			case pickBase:
				add("  ", ch.Base)
			case pickBoth:
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

func writeLines(b *strings.Builder, lines [][]byte) {
	for _, l := range lines {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.Write(l)
	}
}

// nextOpen returns the next unresolved hunk after cur (wrapping), or cur.
func (t *textResolver) nextOpen() int {
	for i := 1; i <= len(t.picks); i++ {
		j := (t.cur + i) % len(t.picks)
		if t.picks[j] == pickNone {
			return j
		}
	}
	return t.cur
}

// mergeSnapshot is one entry of the merge view's undo stack.
type mergeSnapshot struct {
	field int
	value any
	pick  pick
	picks []pick
	cur   int
}

// mergeDoneMsg ends the merge view: the values to save, or cancel (back to the dialog).
type mergeDoneMsg struct {
	values store.Values
	cancel bool
}

// mergeModel is the merge view.
type mergeModel struct {
	c       *common
	cs      *conflictState
	rm      *recordMerge
	cursor  int   // index into rm.fields
	rows    []int // the fields shown as rows: every field somebody changed
	undo    []mergeSnapshot
	editing bool
	line    lineField
	body    *bodyField
	status  statusLine
}

func newMergeView(c *common, cs *conflictState) *mergeModel {
	m := &mergeModel{c: c, cs: cs, rm: cs.rm}
	for i, fm := range m.rm.fields {
		if fm.state != stateUnchanged {
			m.rows = append(m.rows, i)
		}
	}
	for i, fm := range m.rm.fields {
		if fm.state == stateConflict {
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

func (m *mergeModel) push() {
	fm := m.rm.fields[m.cursor]
	s := mergeSnapshot{field: m.cursor, value: fm.value, pick: fm.pick}
	if fm.text != nil {
		s.picks, s.cur = slices.Clone(fm.text.picks), fm.text.cur
	}
	m.undo = append(m.undo, s)
}

// Update handles the merge keys.
func (m *mergeModel) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	keys := m.c.keys
	fm := m.rm.fields[m.cursor]
	if m.editing {
		return m.updateEditing(k, fm)
	}
	m.status = statusLine{}
	switch {
	case key.Matches(k, keys.Save):
		if n := m.rm.conflicts(); n > 0 {
			m.status.warn(fmt.Sprintf("%d conflicts left: pick 1 mine, 2 theirs, 3 base, or enter to edit", n))
			return nil
		}
		vals := m.rm.result()
		return func() tea.Msg { return mergeDoneMsg{values: vals} }
	case key.Matches(k, keys.Back):
		return func() tea.Msg { return mergeDoneMsg{cancel: true} }
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
	case key.Matches(k, keys.Undo):
		if len(m.undo) == 0 {
			m.status.info("nothing to undo")
			return nil
		}
		s := m.undo[len(m.undo)-1]
		m.undo = m.undo[:len(m.undo)-1]
		f := m.rm.fields[s.field]
		f.value, f.pick = s.value, s.pick
		if f.text != nil {
			f.text.picks, f.text.cur = s.picks, s.cur
		}
		m.cursor = s.field
	case fm.state != stateConflict:
		if key.Matches(k, keys.EditValue) || key.Matches(k, keys.PickMine) || key.Matches(k, keys.PickTheirs) {
			m.status.info(fm.f.Label + " merged without conflict")
		}
	case key.Matches(k, keys.EditValue):
		m.editing = true
		if fm.text != nil {
			m.body.SetValue(fm.result().(string))
			return m.body.Focus()
		}
		v := fm.mine
		if fm.pick != pickNone {
			v = fm.value
		}
		m.line.SetValue(fm.f.Format(v))
		m.line.CursorEnd()
		return m.line.Focus()
	case fm.text != nil:
		return m.updateText(k, fm)
	case key.Matches(k, keys.PickMine), key.Matches(k, keys.PickTheirs), key.Matches(k, keys.PickBase):
		m.push()
		switch {
		case key.Matches(k, keys.PickMine):
			fm.pick, fm.value = pickMine, fm.mine
		case key.Matches(k, keys.PickTheirs):
			fm.pick, fm.value = pickTheirs, fm.theirs
		default:
			fm.pick, fm.value = pickBase, fm.base
		}
		m.nextConflict()
	}
	return nil
}

// updateText handles hunk keys inside a conflicting text field.
func (m *mergeModel) updateText(k tea.KeyPressMsg, fm *fieldMerge) tea.Cmd {
	keys := m.c.keys
	t := fm.text
	var p pick
	switch {
	case key.Matches(k, keys.NextHunk):
		t.cur = (t.cur + 1) % t.total()
		return nil
	case key.Matches(k, keys.PrevHunk):
		t.cur = (t.cur - 1 + t.total()) % t.total()
		return nil
	case key.Matches(k, keys.AllMine), key.Matches(k, keys.AllTheirs):
		m.push()
		p = pickMine
		if key.Matches(k, keys.AllTheirs) {
			p = pickTheirs
		}
		for i := range t.picks {
			if t.picks[i] == pickNone {
				t.picks[i] = p
			}
		}
		fm.pick = pickNone
		m.nextConflict()
		return nil
	case key.Matches(k, keys.PickMine):
		p = pickMine
	case key.Matches(k, keys.PickTheirs):
		p = pickTheirs
	case key.Matches(k, keys.PickBase):
		p = pickBase
	case key.Matches(k, keys.PickBoth):
		p = pickBoth
	default:
		return nil
	}
	m.push()
	t.picks[t.cur] = p
	fm.pick = pickNone
	if t.left() > 0 {
		t.cur = t.nextOpen()
	} else {
		m.nextConflict()
	}
	return nil
}

func (m *mergeModel) updateEditing(k tea.KeyPressMsg, fm *fieldMerge) tea.Cmd {
	if fm.text != nil {
		if k.String() == "esc" {
			m.push()
			fm.pick, fm.value = pickEdited, m.body.Value()
			m.editing = false
			m.body.Blur()
			m.nextConflict()
			return nil
		}
		return m.body.Update(k)
	}
	switch k.String() {
	case "enter":
		v, err := fm.f.Parse(m.line.Value())
		if err != nil {
			m.status.fail("value", err)
			return nil
		}
		m.push()
		fm.pick, fm.value = pickEdited, v
		m.editing = false
		m.line.Blur()
		m.nextConflict()
		return nil
	case "esc":
		m.editing = false
		m.line.Blur()
		return nil
	}
	var cmd tea.Cmd
	m.line, cmd = m.line.Update(k)
	return cmd
}

// nextConflict moves the cursor to the next unresolved field, if any.
func (m *mergeModel) nextConflict() {
	n := len(m.rm.fields)
	for i := 1; i <= n; i++ {
		j := (m.cursor + i) % n
		if !m.rm.fields[j].resolved() {
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
	total := len(m.rm.conflictFields())
	b.WriteString(st.Title.Render("tandem") + " " + st.Header.Render(fmt.Sprintf("merge %s %d · yours (v%d) with %s's v%d",
		cs.ce.Kind, cs.ce.ID, cs.base.Version, cs.who(), cs.ce.Current.Version)))
	b.WriteByte('\n')
	left := m.rm.conflicts()
	counter := fmt.Sprintf("%d of %d conflicts left", left, total)
	if left == 0 {
		b.WriteString(st.OK.Render(counter + " — ctrl+s saves"))
	} else {
		b.WriteString(st.Conflict.Render(counter))
	}
	b.WriteByte('\n')
	b.WriteString(st.Header.Render(fmt.Sprintf("  %-13s %-9s %s", "field", "state", "will be written")))
	b.WriteByte('\n')
	valW := max(c.width-28, 10)
	var same []string
	for _, fm := range m.rm.fields {
		if fm.state == stateUnchanged {
			same = append(same, fm.f.Label)
		}
	}
	for _, i := range m.rows {
		fm := m.rm.fields[i]
		state := fm.state.String()
		stStyle := st.Dim
		switch {
		case fm.state == stateConflict && !fm.resolved():
			stStyle = st.Conflict
		case fm.state == stateConflict:
			state = "resolved"
			stStyle = st.OK
		case fm.state == stateMerged:
			stStyle = st.OK
		}
		val := ansi.Truncate(safe.Line(firstLine(fm.f.Format(fm.result()))), valW-10, "…")
		mark := ""
		switch {
		case fm.state == stateConflict && !fm.resolved():
			if fm.text != nil {
				val = fmt.Sprintf("%d of %d hunks open", fm.text.left(), fm.text.total())
			} else {
				val = "?"
			}
		case fm.state == stateConflict:
			mark = fm.pick.String()
			if fm.text != nil && fm.pick != pickEdited {
				mark = "hunks"
			}
		case fm.from == "theirs":
			mark = "theirs"
		case fm.from == "mine":
			mark = "mine"
		case fm.state == stateMerged:
			mark = "both"
		}
		markS := ""
		switch mark {
		case "theirs":
			markS = st.Theirs.Render(" ◆ theirs")
		case "mine":
			markS = st.Mine.Render(" ● mine")
		case "":
		default:
			markS = st.Dim.Render(" (" + mark + ")")
		}
		cursor := "  "
		label := padRight(ansi.Truncate(fm.f.Label, 13, "…"), 13)
		if i == m.cursor {
			cursor = st.Focused.Render("▸ ")
			label = st.Focused.Render(label)
		}
		b.WriteString(cursor + label + " " + stStyle.Render(padRight(state, 9)) + " " + val + markS + "\n")
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
	room := max(c.height-used-2, 1)
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
	b.WriteString(m.status.style(st).Render(c.clip(safe.Line(m.status.text))))
	b.WriteByte('\n')
	b.WriteString(c.footer(c.keys.MergeKeys()))
	return b.String()
}

// detail is the lower pane for the selected field.
func (m *mergeModel) detail() []string {
	st := m.c.styles
	fm := m.rm.fields[m.cursor]
	if m.editing {
		if fm.text != nil {
			return append([]string{"editing " + fm.f.Label + " (esc when done):"}, strings.Split(m.body.View(), "\n")...)
		}
		return []string{"editing " + fm.f.Label + " (enter keeps, esc cancels):", "  " + m.line.View()}
	}
	switch {
	case fm.f.Type == store.TypeText && fm.resolved():
		out := []string{fm.f.Label + " will be written as (" + st.Theirs.Render("◆ theirs") + ", " + st.Mine.Render("● mine") + "):"}
		switch {
		case fm.text != nil && fm.pick != pickEdited:
			out = append(out, fm.text.preview(st)...)
		default:
			mark := "  "
			switch fm.from {
			case "theirs":
				mark = st.Theirs.Render("◆ ")
			case "mine":
				mark = st.Mine.Render("● ")
			}
			for _, l := range splitText(fm.f.Format(fm.result())) {
				out = append(out, mark+l)
			}
		}
		return out
	case fm.state != stateConflict:
		return []string{fmt.Sprintf("%s: %s — base %s · yours %s · theirs %s", fm.f.Label, fm.state,
			short(fm.f, fm.base), short(fm.f, fm.mine), short(fm.f, fm.theirs))}
	case fm.text == nil:
		return []string{
			fm.f.Label + " changed on both sides:",
			"  " + st.Focused.Render("1") + " " + st.Mine.Render("mine   "+short(fm.f, fm.mine)),
			"  " + st.Focused.Render("2") + " " + st.Theirs.Render("theirs "+short(fm.f, fm.theirs)),
			"  " + st.Focused.Render("3") + " " + st.Base.Render("base   "+short(fm.f, fm.base)),
			"  " + st.Dim.Render("enter: type a value"),
		}
	}
	t := fm.text
	ch := t.chunks[t.conflicts[t.cur]]
	state := "open"
	if p := t.picks[t.cur]; p != pickNone {
		state = "picked " + p.String()
	}
	out := []string{fmt.Sprintf("%s · hunk %d of %d (base line %d) · %s · 1 mine 2 theirs 3 base b both",
		fm.f.Label, t.cur+1, t.total(), ch.BaseStart+1, state)}
	out = append(out, st.Mine.Render("mine vs base:"))
	for _, d := range lineDiff(bytesLines(ch.Base), bytesLines(ch.Ours)) {
		out = append(out, "  "+diffStyle(st, d))
	}
	out = append(out, st.Theirs.Render("theirs vs base:"))
	for _, d := range lineDiff(bytesLines(ch.Base), bytesLines(ch.Theirs)) {
		out = append(out, "  "+diffStyle(st, d))
	}
	return out
}

func diffStyle(st Styles, d string) string {
	switch {
	case strings.HasPrefix(d, "+"):
		return st.Added.Render(d)
	case strings.HasPrefix(d, "-"):
		return st.Removed.Render(d)
	}
	return d
}

func bytesLines(ls [][]byte) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = safe.Line(strings.TrimRight(string(l), "\r\n"))
	}
	return out
}

func splitText(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = safe.Line(strings.TrimSuffix(l, "\r"))
	}
	return lines
}

// lineDiff is a small LCS diff for the few lines of a hunk or a field: "-old", "+new",
// " same" (unchanged lines are kept for context).
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	if n*m > 250000 {
		out := make([]string, 0, n+m)
		for _, l := range a {
			out = append(out, "-"+l)
		}
		for _, l := range b {
			out = append(out, "+"+l)
		}
		return out
	}
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, " "+a[i])
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	if len(out) == 0 {
		out = append(out, " (empty on both)")
	}
	return out
}
