package tui

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/resave"
)

// What the editor does when a save meets a newer version: merge clean fields and save,
// retry relative changes, or decide by policy or through the dialog and the merge view.

// onConflict handles a save that met a newer version: merge the fields; without collisions
// save the merge at once; otherwise decide by policy or ask. The saves one ctrl+s makes on
// its own (clean merges, retries) are counted in autoSaves and bounded by resave.MaxRounds,
// the bound of every merge-and-save-again loop; resave.Decide makes each round's choice.
func (e *editorModel) onConflict(ce *store.ConflictError, u store.Update) tea.Cmd {
	rm := merge.Records(e.c.reg, e.kind, e.rec.Fields, e.values(), ce.Current.Fields)
	cs := &conflictState{ce: ce, u: u, rm: rm, base: e.rec, mine: e.values(), deltas: e.deltas(), mineText: e.draftToKeep()}
	e.conflicted, e.conflict = cs, nil
	if u.Relative() && e.autoSaves < resave.MaxRounds && e.c.opts.OnConflict != OnConflictReload {
		// Relative changes are operations: re-applying them on the fresh record is always
		// right (seed 001), so they are retried without asking, a bounded number of times.
		return e.onConflictChoice(conflictChoiceMsg{choice: choiceRetry})
	}
	if resave.Decide(rm, e.autoSaves) == resave.SaveMerge {
		// No field collides: the merge is the save.
		vals, _ := rm.Values() // no field is open, so Values has them all
		e.autoSaves++
		e.mergedNote = fmt.Sprintf("merged with %s's v%d (%s)", cs.who(), ce.Current.Version, strings.Join(theirFields(rm), ", "))
		e.rebase(ce.Current, vals, cs.deltas)
		return e.save()
	}
	switch e.c.opts.OnConflict {
	case OnConflictReload:
		return e.onConflictChoice(conflictChoiceMsg{choice: choiceReload})
	case OnConflictMerge:
		return e.onConflictChoice(conflictChoiceMsg{choice: choiceMerge})
	case OnConflictRetry:
		if cs.retryable(e.c.reg) == "" {
			return e.onConflictChoice(conflictChoiceMsg{choice: choiceRetry})
		}
	}
	e.showConflict()
	return e.writeDraftCmd()
}

// showConflict puts the conflict dialog on e.conflicted over the form: the one already
// open (back from the merge view), or a new one.
func (e *editorModel) showConflict() {
	if e.conflict == nil {
		e.conflict = newConflict(e.c, e.conflicted)
	}
	e.showDialog(e.conflict)
}

// onConflictChoice applies the answer of the conflict dialog (or of the policy) to
// e.conflicted. The dialog offers retry only where it can apply and says why not itself.
func (e *editorModel) onConflictChoice(msg conflictChoiceMsg) tea.Cmd {
	cs := e.conflicted
	if cs == nil {
		return nil // a late answer (a key pressed twice): the conflict is decided
	}
	if cs.broughtBack && msg.choice == choiceReload {
		// The form already is their version (with what was typed since): reloading it
		// would drop that typing. The edits stay kept for ctrl+r, as esc leaves them.
		msg.choice = choiceBack
	}
	switch msg.choice {
	case choiceBack:
		e.mode = modeEdit
		if cs.broughtBack {
			e.status.warn("your edits were not brought back: " + keyName(e.c.keys.RestoreDraft) + " brings them back")
			return e.focusCmd()
		}
		e.status.warn(fmt.Sprintf("not saved: %s saved v%d; %s to try again", cs.who(), cs.ce.Current.Version, keyName(e.c.keys.Save)))
		return e.focusCmd()
	case choiceReload:
		return e.reloadTheirs(cs)
	case choiceRetry:
		return e.retry(cs, msg.asked)
	case choiceMerge:
		e.merge = newMergeView(e.c, cs)
		e.showDialog(e.merge)
		return nil
	}
	return nil
}

// reloadTheirs puts their version into the form and keeps my edits as a draft, showing
// what they changed.
func (e *editorModel) reloadTheirs(cs *conflictState) tea.Cmd {
	restore := keyName(e.c.keys.RestoreDraft)
	kept := cs.mineText
	e.kept = &kept
	lines := changeLines(e.c.reg, e.kind, cs.base.Fields, cs.ce.Current.Fields)
	lines = append(lines, "", "your edits, kept as a draft ("+restore+" brings them back):")
	for _, l := range changeLines(e.c.reg, e.kind, cs.base.Fields, cs.mine) {
		lines = append(lines, "  "+l)
	}
	e.rec = cs.ce.Current
	e.fill(cs.ce.Current)
	e.status.ok(fmt.Sprintf("reloaded %s's v%d; your edits are kept as a draft: %s brings them back", cs.who(), cs.ce.Current.Version, restore))
	e.showDialog(&theirChangesModel{c: e.c, lines: lines, status: e.status,
		title: fmt.Sprintf("%s %d · their changes, now v%d", e.kind, e.id, e.rec.Version),
		intro: fmt.Sprintf("what %s changed since v%d:", cs.who(), cs.base.Version)})
	return tea.Batch(e.focusCmd(), e.saveDraftCmd(kept))
}

// retry re-applies my relative changes on the current version, after a short random pause
// so that two writers retrying at once part; asked says the person pressed it.
func (e *editorModel) retry(cs *conflictState, asked bool) tea.Cmd {
	if asked {
		// The dialog offered "apply … to vN": the person's a is that attempt, not one
		// more of the automatic ones that gave up.
		e.autoSaves = 0
	}
	if e.autoSaves >= resave.MaxRounds {
		e.showConflict()
		e.status.warn("gave up retrying after several collisions")
		return nil
	}
	e.autoSaves++
	e.rebase(cs.ce.Current, cs.ce.Current.Fields, cs.deltas)
	e.mode = modeEdit
	e.retryBase, e.retryOn = cs.base.Version, cs.ce.Since
	if len(e.retryOn) == 0 { // the change log was pruned: at least the last writer is known
		e.retryOn = []store.Change{{Version: cs.ce.Current.Version, Actor: cs.ce.Current.UpdatedBy}}
	}
	backoff := time.Duration(10+rand.IntN(90)) * time.Millisecond
	save := e.save()
	return tea.Sequence(tea.Tick(backoff, func(time.Time) tea.Msg { return nil }), save)
}

// onTheirChangesDone goes back to the form with their version, bringing my kept edits back
// if asked.
func (e *editorModel) onTheirChangesDone(msg theirChangesDoneMsg) tea.Cmd {
	e.mode, e.shown = modeEdit, nil
	if msg.restore {
		return e.restoreKept()
	}
	return nil
}

// onMergeDone saves the merge view's result, or returns to the conflict dialog.
func (e *editorModel) onMergeDone(msg mergeDoneMsg) tea.Cmd {
	if msg.cancel {
		e.merge = nil
		e.showConflict()
		return nil
	}
	cs := e.conflicted
	if cs == nil {
		return nil // a late answer (a key pressed twice): the conflict is decided
	}
	if cs.broughtBack {
		e.kept = nil // the edits are in the form now: ctrl+r would bring them back twice
	}
	e.rebase(cs.ce.Current, msg.values, cs.deltas)
	e.mode = modeEdit
	e.autoSaves = 0
	e.mergedNote = fmt.Sprintf("merged with %s's v%d", cs.who(), cs.ce.Current.Version)
	return e.save()
}
