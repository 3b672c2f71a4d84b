package tui

import (
	"fmt"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// Reverting to a version from the history screen: the old values go into the form on top of
// the record as the history read it, and the normal save path does the rest (version
// check, conflict dialog, merge).

// applyRevert puts the values of the version being reverted to into the editable fields,
// each an undoable edit, and says what a save will do; fields this person cannot write (a
// parent changed only by a move, system fields) keep their current values, and are named.
func (e *editorModel) applyRevert() {
	v := e.revert.version
	var kept []string
	for _, fi := range e.fields {
		old, ok := v.Snapshot[fi.f.Name]
		if !ok || store.Equal(old, e.rec.Fields[fi.f.Name]) {
			continue
		}
		if fi.readOnly != "" {
			kept = append(kept, fi.f.Label)
			continue
		}
		fi.replaceText(fi.f.Format(old)) // each field's revert is an edit ctrl+z takes back
	}
	e.fieldChanged()
	// The fields not reverted come first: a narrow terminal clips the end of the line.
	head := fmt.Sprintf("reverting to v%d", v.Version)
	if len(kept) > 0 {
		head += " (not reverted: " + strings.Join(kept, ", ") + ")"
	}
	note := fmt.Sprintf("%s: check the form, %s saves it as a new version on v%d", head, keyName(e.c.keys.Save), e.rec.Version)
	if !e.changed() {
		note = fmt.Sprintf("v%d holds the same values as v%d for the fields you can write", v.Version, e.rec.Version)
	}
	e.status.info(note)
}
