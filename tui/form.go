package tui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// fieldInput is one field of the form.
type fieldInput struct {
	f        *store.Field
	readOnly string // why the field cannot be edited; "" when it can
	line     lineField
	body     *bodyField // text fields
	delta    int64      // counter fields: the relative change recorded with +/-
	shown    string     // read-only fields: the sanitised text shown
	// stored is a one-line field's text as loaded; offSchema, when the schema refuses that
	// value (another program wrote it), says why: the form marks it while it is unchanged.
	stored, offSchema string

	// undo and redo are a one-line field's earlier and undone states (text and relative
	// change), for ctrl+z and ctrl+y; a text field keeps its own in the body editor.
	// inWord: the last edit typed a letter, so the next letter joins its undo step.
	undo, redo []fieldSnap
	inWord     bool
}

// maxFieldUndo bounds the undo steps one one-line field keeps.
const maxFieldUndo = 200

// noteEdit records the field's state before an edit, for undo. Text typed on within a word
// (and the space that ends it) joins the word's step; anything else starts a step.
func (fi *fieldInput) noteEdit(before fieldSnap, typed string) {
	fi.redo = nil
	if typed == "" || !fi.inWord {
		fi.undo = append(fi.undo, before)
		if len(fi.undo) > maxFieldUndo {
			fi.undo = fi.undo[1:]
		}
	}
	fi.inWord = typed != "" && !strings.HasSuffix(typed, " ") && !strings.HasSuffix(typed, "\t")
}

// replaceText puts s into the field as one edit that undoEdit takes back (text from an
// external editor, a revert); a counter's relative change goes with it.
func (fi *fieldInput) replaceText(s string) {
	if fi.body != nil {
		fi.body.Replace(s)
		return
	}
	fi.noteEdit(fi.state(), "")
	fi.setText(s)
	fi.delta = 0
}

// state is the field's text and relative change now.
func (fi *fieldInput) state() fieldSnap { return fieldSnap{text: fi.text(), delta: fi.delta} }

// undoEdit takes back the field's last edit step and reports whether there was one.
func (fi *fieldInput) undoEdit() bool {
	if fi.body != nil {
		return fi.body.m.Undo()
	}
	return fi.step(&fi.undo, &fi.redo)
}

// redoEdit makes the field's last undone step again and reports whether there was one.
func (fi *fieldInput) redoEdit() bool {
	if fi.body != nil {
		return fi.body.m.Redo()
	}
	return fi.step(&fi.redo, &fi.undo)
}

// step restores the newest state of from, keeping the state it replaces on to: an undo
// (from the undo stack to the redo stack) or a redo (the other way).
func (fi *fieldInput) step(from, to *[]fieldSnap) bool {
	if len(*from) == 0 {
		return false
	}
	s := (*from)[len(*from)-1]
	*from = (*from)[:len(*from)-1]
	*to = append(*to, fi.state())
	fi.setText(s.text)
	fi.delta, fi.inWord = s.delta, false
	return true
}

func (fi *fieldInput) text() string {
	if fi.body != nil {
		return fi.body.Value()
	}
	return fi.line.Value()
}

func (fi *fieldInput) setText(s string) {
	if fi.body != nil {
		fi.body.SetValue(s)
	} else {
		fi.line.SetValue(s)
		fi.line.CursorEnd()
	}
}

// bodyEditable reports whether the body editor can edit s and give it back as it was: it
// keeps the raw bytes, shows a tab as spaces and keeps the line ending of the text (CRLF
// stays CRLF), so text the store accepts is editable. Invalid UTF-8 and other control
// characters (shown escaped, never raw) are not: the store would refuse the value anyway.
func bodyEditable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}

// fieldSnap is a field's text and relative change at one moment.
type fieldSnap struct {
	text  string
	delta int64
	rev   uint64
}

// shownText is the field's value for a read-only cell: as loaded for a field nobody may
// edit, and as typed for a form that is read-only for now (someone's lease), so the edits
// it keeps stay in sight.
func (fi *fieldInput) shownText() string {
	switch {
	case fi.readOnly != "":
		return fi.shown
	case fi.body != nil:
		return oneLine(fi.text())
	}
	return safe.Line(fi.text())
}

// form is the editor's fields and the version they were loaded from (the base): the values
// as typed, the relative changes of counters, and what a save of them would send. It knows
// nothing of keys, commands or the store's calls, so its rules are tested without a program.
type form struct {
	kind   store.Kind
	fields []*fieldInput
	rec    *store.Record     // the base: the version the edits are made on; nil for a new record
	titles map[refKey]string // titles of the records reference fields name ("" while unknown)
}

// refKey names the record a reference field points to: refs of one form may point to
// records of several kinds (a tree's parent, a part's supplier), whose ids may be equal.
type refKey struct {
	kind store.Kind
	id   int64
}

// newForm makes the inputs of kind's fields, in registry order, for a writer in role.
func newForm(reg *store.Registry, kind store.Kind, role store.Role) form {
	f := form{kind: kind, titles: map[refKey]string{}}
	for _, fd := range reg.Fields(kind) {
		fi := &fieldInput{f: fd}
		switch {
		case fd.ReadOnly:
			fi.readOnly = "changed only by a move"
		case !fd.Writable(role):
			fi.readOnly = "owned by " + string(fd.Owner)
		}
		if fd.Type == store.TypeText {
			fi.body = newBodyField()
		} else {
			ti := newLineField()
			ti.Prompt = ""
			fi.line = ti
		}
		f.fields = append(f.fields, fi)
	}
	return f
}

// fill makes rec the base and puts its values into the inputs (nil: a new record, the
// fields' zero values), clearing the relative changes.
func (f *form) fill(rec *store.Record) {
	f.rec = rec
	for _, fi := range f.fields {
		var v any
		if rec != nil {
			v = rec.Fields[fi.f.Name]
		} else {
			v = fi.f.Zero()
		}
		s := fi.f.Format(v)
		fi.delta = 0
		fi.undo, fi.redo, fi.inWord = nil, nil, false // a new base: earlier states are not edits of it
		// A backslash shown doubled (safe.Line) is still typed back as it is: only what is
		// shown escaped makes a field read-only.
		clean, editable := safe.Line(s), !safe.Escapes(s)
		if fi.body != nil {
			clean, editable = safe.Text(s), bodyEditable(s)
		}
		fi.shown = clean
		if !editable && fi.readOnly == "" {
			// Text another program wrote with control characters is shown escaped; editing
			// it would write the escaped form back, so the field stays read-only.
			fi.readOnly = readOnlyControl
		}
		fi.setText(s)
		fi.stored, fi.offSchema = s, ""
		if fi.readOnly != "" {
			fi.shown = f.shownValue(fi, v)
			fi.setText(fi.shown)
		} else if rec != nil && fi.body == nil {
			if _, err := fi.f.Parse(s); err != nil {
				fi.offSchema = strings.TrimPrefix(err.Error(), fi.f.Name+": ")
			}
		}
	}
}

// offSchemaHint is the mark beside a field whose stored value the schema refuses, while
// the field holds it unchanged: a save leaves it as it is, one that changes it must bring
// it within the schema.
func (fi *fieldInput) offSchemaHint() string {
	if fi.offSchema == "" || fi.body != nil || fi.line.Value() != fi.stored {
		return ""
	}
	return " · stored value: " + safe.Line(fi.offSchema)
}

// readOnlyControl is why a field holding control characters (written by another program)
// cannot be edited: it is shown escaped, and editing would write the escaped form back.
const readOnlyControl = "contains control characters"

// controlHint is the mark beside such a field's value, so that tab passing over it is
// no surprise.
const controlHint = " · read-only: control characters"

// shownValue is how a read-only field shows v: made safe, and a reference with the title
// of the record it names ("3 · Handbook"), once the title is known.
func (f *form) shownValue(fi *fieldInput, v any) string {
	s := fi.f.Format(v)
	if fi.body != nil {
		return safe.Text(s)
	}
	out := safe.Line(s)
	if id, ok := v.(int64); ok && fi.f.Type == store.TypeRef {
		if t := f.titles[refKey{fi.f.To, id}]; t != "" {
			out += " · " + safe.Line(t)
		}
	}
	return out
}

// missingTitles returns the records reference fields of the base name whose titles were
// not asked for yet, and marks them asked.
func (f *form) missingTitles() []refKey {
	if f.rec == nil {
		return nil
	}
	var out []refKey
	for _, fi := range f.fields {
		id, ok := f.rec.Fields[fi.f.Name].(int64)
		if fi.f.Type != store.TypeRef || !ok {
			continue
		}
		k := refKey{fi.f.To, id}
		if _, asked := f.titles[k]; !asked {
			f.titles[k] = ""
			out = append(out, k)
		}
	}
	return out
}

// refTitle is the known title of the record of kind to with id ("" when not known yet).
func (f *form) refTitle(to store.Kind, id int64) string { return f.titles[refKey{to, id}] }

// setTitle notes the title of record id of kind and shows it beside the references to it.
func (f *form) setTitle(kind store.Kind, id int64, title string) {
	f.titles[refKey{kind, id}] = title
	for _, fi := range f.fields {
		if fi.f.Type == store.TypeRef && fi.readOnly != "" && f.rec != nil {
			fi.shown = f.shownValue(fi, f.rec.Fields[fi.f.Name])
			fi.setText(fi.shown)
		}
	}
}

// nextEditable returns the next field from from in direction dir (1 or -1) that can be
// edited, wrapping; from itself (at least 0) when none can.
func (f *form) nextEditable(from, dir int) int {
	n := len(f.fields)
	for i := 1; i <= n; i++ {
		j := ((from+dir*i)%n + n) % n
		if f.fields[j].readOnly == "" {
			return j
		}
	}
	return max(from, 0)
}

// viewable reports whether a read-only field opens in a scrollable read-only view when
// focused: a text with more than one line, which a one-line cell cannot show.
func (fi *fieldInput) viewable() bool {
	return fi.body != nil && fi.body.LineCount() > 1
}

// nextStop returns the next field from from in direction dir (1 or -1) that tab stops at:
// one that can be edited, or a read-only long text, to be read in its scrollable view.
func (f *form) nextStop(from, dir int) int {
	n := len(f.fields)
	for i := 1; i <= n; i++ {
		j := ((from+dir*i)%n + n) % n
		if fi := f.fields[j]; fi.readOnly == "" || fi.viewable() {
			return j
		}
	}
	return max(from, 0)
}

// counterUnchanged reports whether a counter field still shows the base value, so its
// delta is a relative change (typing a value makes the change absolute).
func (f *form) counterUnchanged(fi *fieldInput) bool {
	return fi.delta != 0 && f.rec != nil && fi.text() == fi.f.Format(f.rec.Fields[fi.f.Name])
}

// values returns my version of every field: the base with my edits applied (a counter as
// base plus my delta). Fields that do not parse keep the base value.
func (f *form) values() store.Values {
	out := store.Values{}
	if f.rec != nil {
		out = f.rec.Fields.Clone()
	}
	for _, fi := range f.fields {
		if fi.readOnly != "" {
			continue
		}
		name := fi.f.Name
		if f.counterUnchanged(fi) {
			n, _ := f.rec.Fields[name].(int64)
			out[name] = n + fi.delta
			continue
		}
		if v, err := fi.f.Parse(fi.text()); err == nil {
			out[name] = v
		}
	}
	return out
}

// toUpdate makes the save of an existing record: only the changed fields, counters as
// relative changes, on the base version. EINVALID when a field does not parse.
func (f *form) toUpdate() (store.Update, error) {
	u := store.Update{BaseVersion: f.rec.Version, Set: store.Values{}, Add: map[string]int64{}}
	for _, fi := range f.fields {
		if fi.readOnly != "" {
			continue
		}
		name := fi.f.Name
		base := f.rec.Fields[name]
		if f.counterUnchanged(fi) {
			u.Add[name] = fi.delta
			continue
		}
		text := fi.text()
		if text == fi.f.Format(base) {
			// Unchanged, so not sent: a stored value the schema refuses (another program
			// wrote it) does not stop a save of the other fields, as in the store.
			continue
		}
		v, err := fi.f.Parse(text)
		if err != nil {
			return u, err
		}
		if !store.Equal(v, base) {
			u.Set[name] = v
		}
	}
	if len(u.Set) == 0 {
		u.Set = nil
	}
	if len(u.Add) == 0 {
		u.Add = nil
	}
	return u, nil
}

// createValues returns the values of a new record: every editable field, parsed.
func (f *form) createValues() (store.Values, error) {
	vals := store.Values{}
	for _, fi := range f.fields {
		if fi.readOnly != "" {
			continue
		}
		v, err := fi.f.Parse(fi.text())
		if err != nil {
			return nil, err
		}
		vals[fi.f.Name] = v
	}
	return vals, nil
}

// changed reports whether the form holds edits: something a save would send (or a field
// that does not parse), or for a new record anything but the zero values.
func (f *form) changed() bool {
	if len(f.fields) == 0 {
		return false
	}
	if f.rec == nil {
		for _, fi := range f.fields {
			if fi.readOnly == "" && fi.text() != fi.f.Format(fi.f.Zero()) {
				return true
			}
		}
		return false
	}
	u, err := f.toUpdate()
	return err != nil || len(u.Set) > 0 || len(u.Add) > 0
}

// deltas returns the relative changes in the form.
func (f *form) deltas() map[string]int64 {
	out := map[string]int64{}
	for _, fi := range f.fields {
		if fi.readOnly == "" && f.counterUnchanged(fi) {
			out[fi.f.Name] = fi.delta
		}
	}
	return out
}

// snapshot records the form as a save sends it.
func (f *form) snapshot() []fieldSnap {
	out := make([]fieldSnap, len(f.fields))
	for i, fi := range f.fields {
		out[i].delta = fi.delta
		if fi.body != nil {
			out[i].rev = fi.body.Revision() // cheap: no copy of a large body
		} else {
			out[i].text = fi.line.Value()
		}
	}
	return out
}

// typedSince returns the fields edited after snapshot sent was taken, by index.
func (f *form) typedSince(sent []fieldSnap) map[int]fieldSnap {
	out := map[int]fieldSnap{}
	if len(sent) != len(f.fields) {
		return out
	}
	for i, fi := range f.fields {
		changed := fi.delta != sent[i].delta
		if fi.body != nil {
			changed = changed || fi.body.Revision() != sent[i].rev
		} else {
			changed = changed || fi.line.Value() != sent[i].text
		}
		if changed {
			out[i] = fieldSnap{text: fi.text(), delta: fi.delta}
		}
	}
	return out
}

// rebase makes cur the new base version, with the form holding vals (my merged version) and
// the counter deltas kept as relative changes on top of cur.
func (f *form) rebase(cur *store.Record, vals store.Values, deltas map[string]int64) {
	f.rec = cur
	for _, fi := range f.fields {
		if fi.readOnly != "" {
			fi.shown = f.shownValue(fi, cur.Fields[fi.f.Name])
			fi.setText(fi.shown)
			continue
		}
		if d := deltas[fi.f.Name]; d != 0 {
			fi.setText(fi.f.Format(cur.Fields[fi.f.Name]))
			fi.delta = d
			continue
		}
		fi.delta = 0
		fi.setText(fi.f.Format(vals[fi.f.Name]))
	}
}

// edits returns every editable field's text and the relative changes: what a draft keeps.
func (f *form) edits() (map[string]string, map[string]int64) {
	vals, deltas := map[string]string{}, map[string]int64{}
	for _, fi := range f.fields {
		if fi.readOnly != "" {
			continue
		}
		vals[fi.f.Name] = fi.text()
		if fi.delta != 0 {
			deltas[fi.f.Name] = fi.delta
		}
	}
	return vals, deltas
}

// setEdits puts texts and relative changes (a draft's) into the editable fields.
func (f *form) setEdits(vals map[string]string, deltas map[string]int64) {
	for _, fi := range f.fields {
		if fi.readOnly != "" {
			continue
		}
		if s, ok := vals[fi.f.Name]; ok {
			fi.setText(s)
		}
		fi.delta = deltas[fi.f.Name]
	}
}

// differs reports whether texts and relative changes (a draft's) differ from the form.
func (f *form) differs(vals map[string]string, deltas map[string]int64) bool {
	for _, fi := range f.fields {
		if fi.readOnly != "" {
			continue
		}
		if s, ok := vals[fi.f.Name]; ok && s != fi.text() {
			return true
		}
		if deltas[fi.f.Name] != fi.delta {
			return true
		}
	}
	return false
}
