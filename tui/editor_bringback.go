package tui

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// Bringing edits back (ctrl+r after a reload, a draft offered after a crash or a lost lease,
// the text an external editor gives back) is a three-way merge like a conflicting save: base
// is what the edits were made on, mine the edits, theirs the form as it is now. Only the
// fields the edits changed go into the form; a field that both sides changed opens the merge
// view, as the conflict dialog's m does.

// bringBack puts the edits of d on top of the form as it is now, and says so; what names
// them for the status line ("your edits are"). A draft that does not know
// what its edits were made on (one from an older tandem) is put in as it is, with a warning.
func (e *editorModel) bringBack(d *draft, what string) tea.Cmd {
	if d.Base == nil || e.rec == nil {
		e.applyDraft(d)
		if e.rec != nil {
			e.status.warn(fmt.Sprintf("%s put back as typed (made on v%d; you are on v%d): it does not say what it changed, check every field",
				what, d.BaseVersion, e.rec.Version))
		}
		return e.writeDraftCmd()
	}
	theirs := e.values()
	base, mine := theirs.Clone(), theirs.Clone()
	deltas := e.deltas()
	raw := map[string]string{} // texts in the draft that do not parse: kept as typed
	var changed []string
	for _, fi := range e.fields {
		name := fi.f.Name
		bt, okB := d.Base[name]
		mt, okM := d.Values[name]
		if fi.readOnly != "" || !okB || !okM {
			continue
		}
		if dl := d.Deltas[name]; dl != 0 && mt == bt {
			// A relative change stays one: it goes on top of the current value. The merge
			// sees it as mine changing the value now, which is what a save writes.
			deltas[name] += dl
			n, _ := theirs[name].(int64)
			mine[name] = n + dl
			changed = append(changed, fi.f.Label)
			continue
		}
		if _, ok := deltas[name]; ok || mt == bt {
			continue
		}
		bv, err := fi.f.Parse(bt)
		if err != nil {
			continue
		}
		base[name] = bv
		changed = append(changed, fi.f.Label)
		if mv, err := fi.f.Parse(mt); err == nil {
			mine[name] = mv
		} else {
			raw[name] = mt
			mine[name] = bv // the base: their value, if they changed it, goes into the form
		}
	}
	rm := merge.Records(e.c.reg, e.kind, base, mine, theirs)
	vals, err := rm.Values()
	if err != nil {
		return e.bringBackMerge(d, rm, base, mine, deltas)
	}
	e.putEdits(vals, deltas, raw)
	note := fmt.Sprintf("%s back on top of v%d", what, e.rec.Version)
	if len(changed) > 0 {
		note += " (" + strings.Join(changed, ", ") + ")"
	}
	var merged []string
	for _, fm := range rm.Fields {
		if fm.State == merge.FieldMerged {
			merged = append(merged, fm.Field.Label)
		}
	}
	if len(merged) > 0 {
		note += "; merged with their changes: " + strings.Join(merged, ", ")
	}
	e.status.ok(note + "; " + keyName(e.c.keys.Save) + " saves them")
	return e.writeDraftCmd()
}

// putEdits puts vals into the editable fields that differ, each an edit ctrl+z takes back,
// with the relative changes deltas and, as typed, the texts raw that do not parse.
func (e *editorModel) putEdits(vals store.Values, deltas map[string]int64, raw map[string]string) {
	for _, fi := range e.fields {
		if fi.readOnly != "" {
			continue
		}
		name := fi.f.Name
		s, ok := raw[name]
		switch {
		case ok:
		case deltas[name] != 0:
			s = fi.f.Format(e.rec.Fields[name])
		default:
			s = fi.f.Format(vals[name])
		}
		if s != fi.text() {
			fi.replaceText(s)
		}
		fi.delta = deltas[name]
	}
	e.fieldChanged()
}

// bringBackMerge opens the merge view on edits that collide with the form: base is what they
// were made on, mine the edits, theirs the form now. Saving the merge saves the record; esc
// leads to the conflict dialog, whose r keeps the edits as a draft again.
func (e *editorModel) bringBackMerge(d *draft, rm *merge.RecordResult, base, mine store.Values, deltas map[string]int64) tea.Cmd {
	u := store.Update{BaseVersion: d.BaseVersion, Set: store.Values{}, Add: map[string]int64{}}
	for _, name := range slices.Sorted(maps.Keys(mine)) {
		switch {
		case d.Deltas[name] != 0 && d.Values[name] == d.Base[name]:
			u.Add[name] = d.Deltas[name] // a relative change stays one
		case !store.Equal(mine[name], base[name]):
			u.Set[name] = mine[name]
		}
	}
	cs := &conflictState{
		ce:          &store.ConflictError{Kind: e.kind, ID: e.id, BaseVersion: d.BaseVersion, Current: e.rec},
		u:           u,
		rm:          rm,
		base:        &store.Record{Kind: e.kind, ID: e.id, Version: d.BaseVersion, Fields: base},
		mine:        mine,
		deltas:      deltas,
		mineText:    *d,
		broughtBack: true,
	}
	e.kept = d // until the merge is saved, ctrl+r (or r in the dialog) still has it
	e.conflicted, e.conflict = cs, nil
	e.merge = newMergeView(e.c, cs)
	e.showDialog(e.merge)
	e.status.warn(fmt.Sprintf("your edits and v%d both changed %s: pick in the merge view, %s saves",
		e.rec.Version, strings.Join(conflictFields(rm), ", "), keyName(e.c.keys.Save)))
	return nil
}

// extDraft is the text an external editor gave back as a draft of the form as it was handed
// out: its base is that form, so bringing it back changes only the field edited.
func (e *editorModel) extDraft(msg extEditedMsg) draft {
	d := msg.start
	d.Base = d.Values
	d.Values = maps.Clone(d.Values)
	if msg.field < len(e.fields) {
		d.Values[e.fields[msg.field].f.Name] = msg.value
	}
	d.Deltas = nil
	return d
}
