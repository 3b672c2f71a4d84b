package tui

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestConflict_LateAnswerDropped: an answer of the conflict dialog or the merge view that
// arrives after its conflict was decided (a key pressed twice) changes nothing.
func TestConflict_LateAnswerDropped(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	d.apply(mergeDoneMsg{values: store.Values{"name": "late"}})
	d.apply(conflictChoiceMsg{choice: choiceReload, asked: true})
	d.settle()
	if got := mustRecord(t, s, 1); got.Version != 1 {
		t.Fatalf("a late answer saved product 1: v%d", got.Version)
	}
	if d.app.editor.mode != modeEdit {
		t.Fatalf("a late answer left the editor in mode %d", d.app.editor.mode)
	}
}
