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

// Picking the record a reference field points to (a part's supplier): the target kind's
// records by title, narrowed by what is typed, which the store searches as the list's
// filter does. The pick goes into the field as if typed (one undo step); the store checks
// at save that the record exists.

// refPickLimit bounds the records the picker shows for one query: typing narrows it.
const refPickLimit = 200

// refPicker is the list of records a reference field may point to.
type refPicker struct {
	field  int        // the form field being picked for
	to     store.Kind // the kind it points to
	query  lineField
	search string          // the query the rows answer
	rows   []*store.Record // rows[0] is nil ("no record") when the field may be empty
	cursor int
	offset int
	loaded bool
	more   bool // the query matched more than refPickLimit records
	gen    int  // the newest query asked; answers to older ones are dropped
}

// refRowsMsg is one answer to the picker's query.
type refRowsMsg struct {
	ed     *editorModel
	gen    int
	search string
	recs   []*store.Record
	err    error
}

// pickableRef returns the focused field when it is a reference the picker can fill now (an
// editable ref; a tree's parent moves with the move picker instead), or nil.
func (e *editorModel) pickableRef() *fieldInput {
	if e.readOnly != "" || e.focus < 0 || e.focus >= len(e.fields) {
		return nil
	}
	fi := e.fields[e.focus]
	if fi.f.Type != store.TypeRef || fi.readOnly != "" || fi.f.Name == store.ParentField {
		return nil
	}
	return fi
}

// startRefPick opens the picker for the focused reference field.
func (e *editorModel) startRefPick() tea.Cmd {
	fi := e.pickableRef()
	if fi == nil {
		return nil
	}
	q := newLineField()
	q.Prompt = "/"
	q.Placeholder = "text to find in " + string(fi.f.To) + " records"
	e.refPick = &refPicker{field: e.focus, to: fi.f.To, query: q}
	e.mode = modeRefPick
	return tea.Batch(e.refPick.query.Focus(), e.refRowsCmd())
}

// refRowsCmd asks the store for the records matching the picker's query, by title.
func (e *editorModel) refRowsCmd() tea.Cmd {
	p := e.refPick
	p.gen++
	c, gen, search := e.c, p.gen, strings.TrimSpace(p.query.Value())
	f := store.Filter{Kind: p.to, Search: search, Limit: refPickLimit + 1}
	for _, sf := range c.reg.SortFields(p.to) {
		if sf.Name == c.reg.TitleField(p.to) {
			f.Sort = sf.Name
		}
	}
	title := c.reg.TitleField(p.to)
	byTitle := search != "" && title != "" && !slices.ContainsFunc(c.reg.SearchFields(p.to), func(sf *store.Field) bool { return sf.Name == title })
	if byTitle {
		// The store searches only the fields marked search, which the title is not: the
		// picker matches the titles of the first refScanLimit records itself, as folded.
		f.Search, f.Limit = "", refScanLimit
	}
	return func() tea.Msg {
		recs, err := c.st.FindRecords(c.ctx, f)
		if byTitle && err == nil {
			q, all := store.SearchFold(search), recs
			recs = nil
			for _, r := range all {
				if strings.Contains(store.FoldValue(r.Fields[title]), q) && len(recs) <= refPickLimit {
					recs = append(recs, r)
				}
			}
		}
		return refRowsMsg{ed: e, gen: gen, search: search, recs: recs, err: err}
	}
}

// refScanLimit bounds the records the picker reads to match titles itself (a target kind
// whose title field is not searched).
const refScanLimit = 5000

func (e *editorModel) onRefRows(msg refRowsMsg) tea.Cmd {
	p := e.refPick
	if p == nil || msg.gen != p.gen {
		return nil
	}
	if msg.err != nil {
		e.status.fail("find "+string(p.to)+" records", msg.err)
		return nil
	}
	p.more = len(msg.recs) > refPickLimit
	recs := msg.recs[:min(len(msg.recs), refPickLimit)]
	p.rows = p.rows[:0]
	if !e.fields[p.field].f.Required {
		p.rows = append(p.rows, nil)
	}
	p.rows = append(p.rows, recs...)
	p.search, p.loaded = msg.search, true
	// The cursor starts on the record the field names, else on the first match of a query.
	p.cursor = 0
	if msg.search != "" && len(p.rows) > 1 && p.rows[0] == nil {
		p.cursor = 1
	}
	cur, _ := e.fields[p.field].f.Parse(e.fields[p.field].text())
	for i, r := range p.rows {
		if id, ok := cur.(int64); ok && r != nil && r.ID == id {
			p.cursor = i
		}
	}
	e.clampRefPick()
	return nil
}

func (e *editorModel) clampRefPick() {
	p := e.refPick
	p.cursor, p.offset = clampWindow(p.cursor, p.offset, len(p.rows), e.pickerRows())
}

// onRefKey handles the picker's keys: text narrows the list, the arrows choose, enter
// takes the record, esc leaves the field as it was.
func (e *editorModel) onRefKey(msg tea.KeyPressMsg) tea.Cmd {
	p, k := e.refPick, e.c.keys
	switch {
	case key.Matches(msg, k.Back):
		e.mode, e.refPick = modeEdit, nil
		e.status.info("nothing picked")
		return e.focusCmd()
	case key.Matches(msg, k.ArrowDown):
		p.cursor++
	case key.Matches(msg, k.ArrowUp):
		p.cursor--
	case key.Matches(msg, k.PageDown):
		p.cursor += e.pickerRows()
	case key.Matches(msg, k.PageUp):
		p.cursor -= e.pickerRows()
	case key.Matches(msg, k.Confirm):
		if !p.loaded || p.cursor >= len(p.rows) || strings.TrimSpace(p.query.Value()) != p.search {
			return nil // the rows do not answer what is typed yet
		}
		return e.pickRef(p.rows[p.cursor])
	default:
		before := p.query.Value()
		var cmd tea.Cmd
		p.query, cmd = p.query.Update(msg)
		if p.query.Value() != before {
			return tea.Batch(cmd, e.refRowsCmd())
		}
		return cmd
	}
	e.clampRefPick()
	return nil
}

// pickRef puts r's id into the field (nil: empties it), as one edit.
func (e *editorModel) pickRef(r *store.Record) tea.Cmd {
	p := e.refPick
	fi := e.fields[p.field]
	e.mode, e.refPick = modeEdit, nil
	if e.readOnly != "" {
		// The record turned read-only while the picker was open (someone's lease).
		e.status.warn("read-only: " + e.readOnly + " — nothing picked")
		return e.focusCmd()
	}
	text, what := "", "no "+string(p.to)
	if r != nil {
		text = itoa(r.ID)
		e.setTitle(p.to, r.ID, e.c.reg.TitleOf(r))
		what = fmt.Sprintf("%s %d · %s", p.to, r.ID, safe.Line(e.c.reg.TitleOf(r)))
	}
	if fi.text() != text {
		fi.replaceText(text)
		e.fieldChanged()
	}
	e.focus = p.field
	e.status.info(fi.f.Label + ": " + what + " — " + keyName(e.c.keys.Save) + " saves")
	return e.focusCmd()
}

// refHint is what the form shows beside a reference field's id: the title of the record
// it names, once known ("" otherwise).
func (e *editorModel) refHint(fi *fieldInput) string {
	if fi.f.Type != store.TypeRef || fi.readOnly != "" {
		return ""
	}
	v, err := fi.f.Parse(fi.text())
	id, ok := v.(int64)
	if err != nil || !ok {
		return ""
	}
	if t := e.refTitle(fi.f.To, id); t != "" {
		return " · " + safe.Line(t)
	}
	return ""
}

// refPickView draws the picker.
func (e *editorModel) refPickView() string {
	c, st, p := e.c, e.c.styles, e.refPick
	fi := e.fields[p.field]
	var b strings.Builder
	of := fmt.Sprintf("new %s", e.kind)
	if e.id != 0 {
		of = fmt.Sprintf("%s %d", e.kind, e.id)
	}
	title := fmt.Sprintf("pick a %s", p.to)
	if fi.f.Label != string(p.to) {
		title += " for " + fi.f.Label // a field named otherwise than its kind: "pick a supplier for maker"
	}
	b.WriteString(st.Title.Render("tandem") + " " + st.Header.Render(title) + "  " + st.Dim.Render(of))
	b.WriteByte('\n')
	b.WriteString(p.query.View())
	b.WriteByte('\n')
	n, lines := e.pickerRows(), 0
	switch {
	case !p.loaded:
		b.WriteString(st.Dim.Render("  loading…") + "\n")
		lines++
	case len(p.rows) == 0:
		b.WriteString(st.Dim.Render(c.clip("  no "+string(p.to)+" records match")) + "\n")
		lines++
	}
	for i := p.offset; p.loaded && i < len(p.rows) && i < p.offset+n; i++ {
		r := p.rows[i]
		text := "(none)"
		if r != nil {
			text = itoa(r.ID) + " · " + safe.Line(c.reg.TitleOf(r))
		}
		row := "  " + text
		if i == p.cursor {
			row = st.Selected.Render(padRight(c.clip(selectedMark(row)), c.width))
		} else {
			row = c.clip(row)
		}
		b.WriteString(row + "\n")
		lines++
	}
	for ; lines < n; lines++ {
		b.WriteByte('\n')
	}
	status := e.statusText()
	if p.more && status == "" {
		status = fmt.Sprintf("the first %d shown: type to narrow", refPickLimit)
	}
	b.WriteString(e.status.style(st).Render(c.clip(status)))
	b.WriteByte('\n')
	b.WriteString(c.footer(c.keys.RefPickKeys()))
	return b.String()
}
