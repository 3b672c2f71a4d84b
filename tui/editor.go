package tui

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/google/uuid"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/locks"
	"github.com/tandem-editor/tandem/store"
)

type editorMode int

const (
	modeLoading      editorMode = iota
	modeEdit                    // the form
	modeConfirmLeave            // esc with unsaved changes: discard?
	modeOfferDraft              // a draft from an earlier session exists
	modeConflict                // the conflict dialog
	modeMerge                   // the merge view
	modeTheirChanges            // after a reload: what they changed
	modeMove                    // the tree picker for a record's new parent (a tree kind)
	modeRefPick                 // the picker of a reference field's record
)

// editorModel edits one record: the form, saving, the lease, the live banner, drafts, and
// (through conflict.go and mergeview.go) the conflict dialog and merge view.
type editorModel struct {
	c         *common
	kind      store.Kind
	id        int64 // 0 until a new record is created
	wantLease bool  // lease mode: take the lease on open (or, with leaseOnEdit, at the first edit)
	left      bool  // the editor was left: a lease that arrives now is given back
	// leaseOnEdit: take the lease at the first edit (Options.LeaseOnEdit); cleared once asked.
	leaseOnEdit bool
	edited      bool // something in the form changed since the record was opened
	mode        editorMode

	// form holds the fields, the base version (rec) and what a save sends; the editor
	// adds keys, focus, commands and the rest of the life cycle around it.
	form
	focus int

	readOnly string // why the whole record is read-only ("held by alice since 10:05")
	deleted  bool   // someone deleted the record while it was open (delete.go)
	gone     bool   // a sync removed the record from the working copy (workcopy.go)
	status   statusLine

	held       *locks.Held
	leaseStop  context.CancelFunc
	leaseLost  string       // why our lease was lost; saves fall back to optimistic
	otherLease *store.Lease // someone else's lease on the record, for the indicator
	// leaseLocked: read-only because otherLease holds the record; it follows the lease
	// live (feed events, and a check once it should have expired) and unlocks by itself.
	leaseLocked bool
	leaseSeq    int  // lease checks asked for; answers to older ones are stale
	leaseSeen   int  // the newest answer applied
	leaseAsking bool // a lease check is on its way
	acquiring   bool // our AcquireLease is on its way: lease answers wait for it
	recheck     bool // a lease answer came while acquiring: ask again afterwards

	others []store.Change // saves by others after the base version (the live banner)

	offered    *draft // modeOfferDraft: the draft found on open
	kept       *draft // after a reload: my version, to bring back with ctrl+r
	theirLines []string

	// extBack is the text $EDITOR gave back, from when it exits until Update takes it: a
	// program ended (SIGTERM, SIGHUP) while the editor ran never takes it, and shutdown
	// keeps it in the draft instead.
	extBack *extEditedMsg

	conflict *conflictModel
	merge    *mergeModel
	picker   *movePicker
	refPick  *refPicker
	revert   *revertTo // opened to revert to an old version: its values go into the form once loaded

	saving     bool
	spin       spinner.Model // turns in the status line while a save or move is on its way
	sent       []fieldSnap   // the form as the save in flight sent it
	autoSaves  int           // saves made by one ctrl+s on its own (merge, retry)
	mergedNote string        // said after the next successful save: "merged with bob's v8 (price)"
	// retryOn: the writes a retry re-applies my relative changes on top of, and the version
	// they were made on, for "applied your stock -3 on top of bob's v5 → v6".
	retryOn   []store.Change
	retryBase int64

	lastDraft  time.Time
	draftDirty bool
	discarded  bool             // the person discarded the edits: nothing may write a draft again
	created    *store.Record    // the record this editor created, for the list's cursor
	schemaWait *editorSchemaMsg // a new schema the form waits to be rebuilt under (schema_reload.go)
}

// Editor messages; each carries the editor that asked, so a late answer to a closed editor
// is dropped.
type (
	recordLoadedMsg struct {
		ed     *editorModel
		rec    *store.Record
		leases []store.Lease
		dbNow  time.Time
		sent   time.Time // the local clock when the lease query started
		draft  *draft
		err    error
	}
	leaseAcquiredMsg struct {
		ed   *editorModel
		held *locks.Held
		err  error
	}
	leaseLostMsg struct {
		ed  *editorModel
		err error
	}
	savedMsg struct {
		ed      *editorModel
		u       store.Update
		res     *store.UpdateResult
		created *store.Record
		err     error
		// between: the writes of others that landed between the base version and this
		// save, when a relative save (no version check) went on top of them.
		between []store.Change
	}
	editorLeasesMsg struct {
		ed     *editorModel
		seq    int
		leases []store.Lease
		dbNow  time.Time
		sent   time.Time // the local clock when the query started
		err    error
	}
	extEditedMsg struct {
		ed    *editorModel
		field int
		value string
		start draft // the form as the text was handed to the editor
		err   error
	}
	draftErrMsg struct {
		ed  *editorModel
		err error
	}
	// unlockedMsg is the record (and this store's draft of it) read again when the lease
	// that kept the editor read-only ended.
	unlockedMsg struct {
		ed    *editorModel
		rec   *store.Record
		draft *draft
		err   error
	}
)

// newEditor opens record id of kind (0: a new record); asked says it was opened with `e`,
// which takes the lease on open whatever the options say.
func newEditor(c *common, kind store.Kind, id int64, asked bool) *editorModel {
	e := &editorModel{c: c, kind: kind, id: id, spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
	if id != 0 {
		switch {
		case asked:
			e.wantLease = true
		case c.opts.LeaseOnEdit:
			e.leaseOnEdit = true
		case c.opts.Lease:
			e.wantLease = true
		}
	}
	return e
}

// Init loads the record, its leases and any draft.
func (e *editorModel) Init() tea.Cmd {
	if e.id == 0 {
		e.buildForm(nil)
		e.mode = modeEdit
		return e.focusCmd()
	}
	c, kind, id, revert := e.c, e.kind, e.id, e.revert
	return func() tea.Msg {
		var rec *store.Record
		var err error
		if revert != nil {
			rec = revert.base // the version the person looked at is the base, not a newer one
		} else if rec, err = c.st.FindRecord(c.ctx, kind, id); err != nil {
			return recordLoadedMsg{ed: e, err: err}
		}
		sent := c.opts.Now()
		ls, now, err := c.st.FindLeases(c.ctx, store.LeaseFilter{Kind: kind, RecordID: id})
		if err != nil {
			return recordLoadedMsg{ed: e, err: err}
		}
		d, derr := c.drafts.Load(kind, id)
		if derr != nil || revert != nil {
			// An unreadable draft is reported by saving a new one over it; a revert puts an
			// old version into the form, so no draft is offered over it.
			d = nil
		}
		return recordLoadedMsg{ed: e, rec: rec, leases: ls, dbNow: now, sent: sent, draft: d}
	}
}

// typing reports whether keys go into a text field (so ? and q are text, not commands):
// the focused field takes text in edit mode, or a value is being edited in the merge view.
func (e *editorModel) typing() bool {
	switch e.mode {
	case modeEdit:
		if e.readOnly != "" || e.focus >= len(e.fields) {
			return false
		}
		return e.fields[e.focus].readOnly == ""
	case modeMerge:
		return e.merge != nil && e.merge.editing
	case modeRefPick:
		return true // the picker's query takes text
	}
	return false
}

// buildForm makes the inputs from the registry and fills them from rec (nil: a new record).
func (e *editorModel) buildForm(rec *store.Record) {
	e.form = newForm(e.c.reg, e.kind, e.c.opts.Role)
	e.fill(rec)
	if rec != nil {
		e.c.noteItems([]*store.Record{rec})
	}
	for _, fi := range e.fields {
		if fi.body == nil && fi.readOnly == "" {
			fi.line.suggestFor(e.c.suggestions(fi.f), fi.f.Type == store.TypeSet)
		}
	}
	e.focus = e.nextEditable(-1, 1)
	e.layout()
}

// refTitleMsg is the title of a record a reference field names.
type refTitleMsg struct {
	ed    *editorModel
	ref   refKey
	title string
}

// titlesCmd reads the titles of the records the reference fields name, once each.
func (e *editorModel) titlesCmd() tea.Cmd {
	var cmds []tea.Cmd
	for _, ref := range e.missingTitles() {
		c := e.c
		cmds = append(cmds, func() tea.Msg {
			r, err := c.st.FindRecord(c.ctx, ref.kind, ref.id)
			if err != nil {
				return refTitleMsg{ed: e, ref: ref} // shown as the bare id
			}
			return refTitleMsg{ed: e, ref: ref, title: c.st.Registry().TitleOf(r)}
		})
	}
	return tea.Batch(cmds...)
}

func (e *editorModel) focusCmd() tea.Cmd {
	var cmd tea.Cmd
	for i, fi := range e.fields {
		fi.inWord = false // a letter typed after a move to another field starts an undo step
		if fi.body != nil {
			fi.body.SetReadOnly(e.readOnly != "" || fi.readOnly != "")
		}
		switch {
		case i == e.focus && e.readOnly == "" && fi.readOnly == "":
			if fi.body != nil {
				cmd = fi.body.Focus()
			} else {
				cmd = fi.line.Focus()
			}
		case i == e.focus && e.viewing(fi):
			// Read-only and focused: the body editor scrolls it but takes no edits.
			cmd = fi.body.Focus()
		case fi.body != nil:
			fi.body.Blur()
		default:
			fi.line.Blur()
		}
	}
	return cmd
}

// viewing reports whether fi, when focused, shows in the scrollable read-only view: a long
// text that cannot be edited now (the field, or the whole record, is read-only).
func (e *editorModel) viewing(fi *fieldInput) bool {
	return (e.readOnly != "" || fi.readOnly != "") && fi.viewable()
}

// layout sizes the inputs for the window.
func (e *editorModel) layout() {
	w := max(e.c.width-labelWidth-3, 10)
	for _, fi := range e.fields {
		if fi.body != nil {
			fi.body.SetSize(w, e.bodyHeight())
		} else {
			fi.line.SetWidth(w - 1) // and a cell for the cursor at the end
		}
	}
}

const labelWidth = 14

// bodyHeight is the height of the focused text field: what the screen has left, but on a
// short screen no more than leaves its label and the marks of a scrolled form in sight.
func (e *editorModel) bodyHeight() int {
	return max(min(max(e.c.height-6-len(e.fields), 3), e.c.height-5-3), 1)
}

// Update handles editor messages and keys; with Options.LeaseOnEdit, the message that
// makes the first edit also starts taking the lease.
func (e *editorModel) Update(msg tea.Msg) tea.Cmd {
	cmd := tea.Batch(e.update(msg), e.titlesCmd())
	if e.leaseOnEdit && e.edited && e.readOnly == "" && e.held == nil && e.leaseStop == nil {
		e.leaseOnEdit, e.wantLease = false, true
		return tea.Batch(cmd, e.acquireCmd())
	}
	return cmd
}

func (e *editorModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		e.layout()
		if e.merge != nil {
			e.merge.layout()
		}
		return nil
	case recordLoadedMsg:
		if msg.ed != e {
			return nil
		}
		return e.onLoaded(msg)
	case leaseAcquiredMsg:
		if msg.ed != e {
			if msg.held != nil {
				return releaseCmd(e.c, msg.held, nil)
			}
			return nil
		}
		return e.onLeaseAcquired(msg)
	case leaseLostMsg:
		if msg.ed != e || e.held == nil {
			return nil
		}
		e.leaseLost = leaseLostReason(msg.err)
		e.held = nil
		e.status.warn("lease lost: " + e.leaseLost + " — your edits are kept; ctrl+s saves without the lease")
		return nil
	case editorLeasesMsg:
		if msg.ed != e {
			return nil
		}
		if msg.seq == e.leaseSeq {
			e.leaseAsking = false
		}
		if msg.err != nil || msg.seq < e.leaseSeen {
			return nil // a failed check is asked again by the next tick or event
		}
		e.leaseSeen = msg.seq
		if e.acquiring {
			// Our own grant may be in this answer before we know its fence: it would look
			// like someone else's lease.
			e.recheck = true
			return nil
		}
		e.c.learnClock(msg.dbNow, msg.sent)
		return e.followLease(msg.leases, msg.dbNow)
	case unlockedMsg:
		if msg.ed != e {
			return nil
		}
		return e.onUnlocked(msg)
	case refTitleMsg:
		if msg.ed != e {
			return nil
		}
		e.setTitle(msg.ref.kind, msg.ref.id, msg.title)
		return nil
	case savedMsg:
		if msg.ed != e {
			return nil
		}
		return e.onSaved(msg)
	case spinner.TickMsg:
		if !e.busy() {
			return nil // the save came back: the spinner stops by not asking for another frame
		}
		var cmd tea.Cmd
		e.spin, cmd = e.spin.Update(msg)
		return cmd
	case moveTreeMsg:
		if msg.ed != e {
			return nil
		}
		return e.onMoveTree(msg)
	case movedMsg:
		if msg.ed != e {
			return nil
		}
		return e.onMoved(msg)
	case refRowsMsg:
		if msg.ed != e {
			return nil
		}
		return e.onRefRows(msg)
	case extEditedMsg:
		if msg.ed != e {
			return nil
		}
		e.extBack = nil
		// The editor had the terminal: paint the whole screen anew rather than only what
		// changed since the frame before it (a CI run under load once kept a blank pane).
		if msg.err != nil {
			e.status.fail("external editor", msg.err)
			return tea.ClearScreen
		}
		if msg.field >= len(e.fields) || e.readOnly != "" {
			// The record turned read-only meanwhile (someone's lease): the text waits in
			// the draft, offered once it can be edited again.
			d := msg.start
			d.Values = maps.Clone(d.Values)
			if msg.field < len(e.fields) {
				d.Values[e.fields[msg.field].f.Name] = msg.value
			}
			e.status.warn("read-only now: the text from " + e.c.opts.Editor + " is kept as a draft")
			return tea.Batch(tea.ClearScreen, e.saveDraftCmd(d))
		}
		if e.rec == nil || e.rec.Version == msg.start.BaseVersion && !e.differs(msg.start.Values, msg.start.Deltas) {
			// The form is as it was handed out: the text is the edit.
			e.fields[msg.field].replaceText(msg.value) // one edit: ctrl+z takes it back
			e.fieldChanged()
			e.status.info("took the text back from " + e.c.opts.Editor)
			return tea.Batch(tea.ClearScreen, e.writeDraftCmd())
		}
		// The form changed while the editor ran (a reload, a lease that ended): the text is
		// an edit of what was handed out, brought back like any other.
		d := e.extDraft(msg)
		return tea.Batch(tea.ClearScreen, e.bringBack(&d, "the text from "+e.c.opts.Editor+" is"))
	case draftErrMsg:
		if msg.ed == e && msg.err != nil {
			e.status.fail("draft", msg.err)
		}
		return nil
	case changeMsg:
		return e.onChange(msg.c)
	case tickMsg:
		return e.onTick()
	case conflictChoiceMsg:
		return e.onConflictChoice(msg)
	case mergeDoneMsg:
		return e.onMergeDone(msg)
	case tea.KeyPressMsg:
		return e.onKey(msg)
	}
	if e.mode == modeEdit {
		return e.forward(msg)
	}
	return nil
}

func (e *editorModel) onLoaded(msg recordLoadedMsg) tea.Cmd {
	if msg.err != nil {
		e.mode = modeEdit
		e.status.fail(fmt.Sprintf("open %s %d", e.kind, e.id), msg.err)
		if e.fields == nil {
			e.readOnly = "could not be loaded"
		}
		return nil
	}
	e.c.learnClock(msg.dbNow, msg.sent)
	e.rec = msg.rec
	e.buildForm(msg.rec)
	e.mode = modeEdit
	e.otherLease = othersLease(msg.leases, e.c.user, nil, msg.dbNow)
	if e.otherLease != nil {
		e.leaseLocked = true
		e.readOnly = heldText(*e.otherLease)
		e.status.warn("read-only: " + e.readOnly + " — editable as soon as the lease ends")
		e.focusCmd()
		return nil
	}
	var cmds []tea.Cmd
	if e.revert != nil {
		e.applyRevert()
	}
	if msg.draft != nil && e.draftDiffers(msg.draft) {
		e.offered = msg.draft
		e.mode = modeOfferDraft
	}
	if e.wantLease && e.held == nil && !e.acquiring {
		// A record loaded again (a reload) keeps the lease held or on its way: a second
		// acquisition would stop the first one's heartbeat without releasing it.
		cmds = append(cmds, e.acquireCmd())
	}
	cmds = append(cmds, e.focusCmd())
	return tea.Batch(cmds...)
}

// leaveCmd releases what the editor holds; unsaved edits stay in the draft. A form with
// nothing unsaved leaves no draft behind (one left from earlier typing would otherwise be
// offered later against a record others changed since), except the version a reload kept.
func (e *editorModel) leaveCmd() tea.Cmd {
	// Until the root takes the editor down, messages still reach it: a record loaded again
	// must not take the lease anew, and one already on its way is given back on arrival.
	e.wantLease, e.leaseOnEdit, e.left = false, false, true
	var cmds []tea.Cmd
	switch {
	case e.discarded, e.readOnly != "", len(e.fields) == 0:
		// Discarded: deleted by the discard. Read-only: written when the form turned
		// read-only, to be offered when the record can be edited again.
	case e.dirty():
		cmds = append(cmds, e.writeDraftCmd())
	case e.kept == nil && e.offered == nil:
		cmds = append(cmds, e.deleteDraftCmd())
	}
	if e.held != nil {
		cmds = append(cmds, releaseCmd(e.c, e.held, e.leaseStop))
		e.held = nil
	} else if e.leaseStop != nil {
		e.leaseStop()
	}
	return tea.Sequence(cmds...)
}

func (e *editorModel) onChange(ch store.Change) tea.Cmd {
	if ch.Kind != e.kind || ch.RecordID != e.id || e.id == 0 {
		return nil
	}
	switch ch.Event {
	case store.EventDeleted:
		return e.onDeleted(ch)
	case store.EventRestored:
		return e.onRestored(ch)
	case store.EventSaved, store.EventMoved, store.EventCreated, store.EventPulled:
		if e.rec != nil && ch.Version > e.rec.Version {
			e.others = append(e.others, ch)
		}
		return nil
	case store.EventLeaseGranted, store.EventLeaseReleased, store.EventLeaseExpired:
		return e.checkLeasesCmd()
	}
	return nil
}

// banner is the live line: "bob saved v8 (price, stock); you are editing v7".
func (e *editorModel) banner() string {
	if e.rec == nil {
		return ""
	}
	var who []string
	var fields []string
	var last int64
	for _, ch := range e.others {
		if ch.Version <= e.rec.Version {
			continue
		}
		if !slices.Contains(who, ch.Actor) {
			who = append(who, ch.Actor)
		}
		for _, f := range fieldLabels(e.c.reg, e.kind, ch.Fields) {
			if !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
		last = max(last, ch.Version)
	}
	if last == 0 {
		return ""
	}
	what := ""
	if len(fields) > 0 {
		what = " (" + strings.Join(fields, ", ") + ")"
	}
	return fmt.Sprintf("%s saved v%d%s; you are editing v%d", safe.Line(strings.Join(who, ", ")), last, what, e.rec.Version)
}

func (e *editorModel) onTick() tea.Cmd {
	var check tea.Cmd
	if e.otherLease != nil && !e.leaseAsking && !e.otherLease.Live(e.c.dbNow()) {
		// An expiry writes no event (a killed holder cannot say so): ask the database once
		// the lease should have ended by our estimate of its clock.
		check = e.checkLeasesCmd()
	}
	if e.held != nil {
		if s := e.held.Status(); s.State == locks.StateFailing {
			e.status.warn(fmt.Sprintf("lease renewal failing: %s left — %v", s.Remaining.Round(time.Second), s.Err))
		}
	}
	if e.draftDirty && e.c.opts.Now().Sub(e.lastDraft) >= draftEvery {
		return tea.Batch(check, e.writeDraftCmd())
	}
	return check
}

// fieldChanged notes an edit for the draft writer (and a lease taken on first edit).
// A message about what was (saved v3, draft restored) no longer describes the form once it
// changes again, so it goes; warnings and errors describe a state that still holds.
func (e *editorModel) fieldChanged() {
	e.draftDirty, e.edited = true, true
	if e.status.kind == statusOK || e.status.kind == statusInfo {
		e.status = statusLine{}
	}
}

func (e *editorModel) onKey(msg tea.KeyPressMsg) tea.Cmd {
	k := e.c.keys
	switch e.mode {
	case modeLoading:
		if key.Matches(msg, k.Back) {
			return e.leave("")
		}
		return nil
	case modeConfirmLeave:
		switch {
		case key.Matches(msg, k.Yes):
			del := e.deleteDraftCmd()
			e.discarded = true
			return tea.Sequence(del, e.leave("edits discarded"))
		case key.Matches(msg, k.No):
			e.mode = modeEdit
			e.status.info("")
		}
		return nil
	case modeOfferDraft:
		switch {
		case key.Matches(msg, k.Yes):
			d := e.offered
			e.offered = nil
			e.mode = modeEdit
			back := e.bringBack(d, fmt.Sprintf("the edits of your draft from %s (made on v%d) are",
				d.Saved.Local().Format("15:04:05"), d.BaseVersion))
			if d.legacy {
				// From now on it is this store's draft.
				return tea.Batch(back, e.deleteLegacyDraftCmd())
			}
			return back
		case key.Matches(msg, k.No):
			d := e.offered
			e.offered = nil
			e.mode = modeEdit
			e.status.info("draft discarded")
			if d.legacy {
				return e.deleteLegacyDraftCmd()
			}
			return e.deleteDraftCmd()
		}
		return nil
	case modeConflict:
		return e.conflict.Update(msg)
	case modeMerge:
		return e.merge.Update(msg)
	case modeMove:
		return e.onMoveKey(msg)
	case modeRefPick:
		return e.onRefKey(msg)
	case modeTheirChanges:
		switch {
		case key.Matches(msg, k.RestoreDraft):
			e.mode = modeEdit
			return e.restoreKept()
		case key.Matches(msg, k.Back), key.Matches(msg, k.Open):
			e.mode = modeEdit
		}
		return nil
	}

	if cmd, ok := e.deleteKey(msg); ok {
		return cmd
	}
	switch {
	case key.Matches(msg, k.Save):
		e.autoSaves = 0
		e.mergedNote = ""
		return e.save()
	case key.Matches(msg, k.Back):
		if e.dirty() {
			e.mode = modeConfirmLeave
			return nil
		}
		return e.leave("")
	case key.Matches(msg, k.NextField), key.Matches(msg, k.PrevField):
		dir := 1
		if key.Matches(msg, k.PrevField) {
			dir = -1
		}
		if e.readOnly != "" {
			e.focus = (e.focus + dir + len(e.fields)) % len(e.fields)
			return e.focusCmd()
		}
		from := e.focus
		e.focus = e.nextStop(e.focus, dir)
		if why := e.skippedControl(from, dir); why != "" {
			e.status.info(why)
		}
		cmd := e.focusCmd()
		if e.draftDirty {
			return tea.Batch(cmd, e.writeDraftCmd())
		}
		return cmd
	case key.Matches(msg, k.RestoreDraft):
		return e.restoreKept()
	case key.Matches(msg, k.ExtEditor):
		return e.externalEdit()
	case key.Matches(msg, k.MoveDoc):
		if e.pickableRef() != nil {
			return e.startRefPick()
		}
		return e.startMove()
	}
	fi := e.fields[e.focus]
	if e.viewing(fi) {
		return fi.body.Update(msg) // scrolls; the body editor is read-only
	}
	if e.readOnly != "" || fi.readOnly != "" {
		return nil
	}
	if key.Matches(msg, k.UndoEdit) || key.Matches(msg, k.RedoEdit) {
		undo := key.Matches(msg, k.UndoEdit)
		done := false
		if undo {
			done = fi.undoEdit()
		} else {
			done = fi.redoEdit()
		}
		switch {
		case done:
			e.fieldChanged()
		case undo:
			e.status.info("nothing to undo in " + fi.f.Label)
		default:
			e.status.info("nothing to redo in " + fi.f.Label)
		}
		return nil
	}
	if fi.f.Rule == store.RuleCounter && (key.Matches(msg, k.Inc) || key.Matches(msg, k.Dec)) {
		fi.noteEdit(fi.state(), "")
		if e.rec != nil {
			fi.setText(fi.f.Format(e.rec.Fields[fi.f.Name]))
		}
		if key.Matches(msg, k.Inc) {
			fi.delta++
		} else {
			fi.delta--
		}
		e.fieldChanged()
		return nil
	}
	return e.forward(msg)
}

// skippedControl says why tab, going from field from in direction dir to the focused
// field, passed over fields holding control characters; "" when it passed over none.
func (e *editorModel) skippedControl(from, dir int) string {
	n := len(e.fields)
	var names []string
	var first *fieldInput
	for i := 1; i < n; i++ {
		j := ((from+dir*i)%n + n) % n
		if j == e.focus {
			break
		}
		if fi := e.fields[j]; fi.readOnly == readOnlyControl {
			names = append(names, fi.f.Label)
			if first == nil {
				first = fi
			}
		}
	}
	if first == nil {
		return ""
	}
	return fmt.Sprintf("skipped %s: control characters (shown escaped) that the editor cannot write back as they are; "+
		"tandem set %s %d %s=… changes it", strings.Join(names, ", "), e.kind, e.id, first.f.Name)
}

// forward sends a message to the focused input.
func (e *editorModel) forward(msg tea.Msg) tea.Cmd {
	if e.readOnly != "" || e.focus >= len(e.fields) {
		return nil
	}
	fi := e.fields[e.focus]
	if fi.readOnly != "" {
		return nil
	}
	var cmd tea.Cmd
	changed := false
	if fi.body != nil {
		// Compare revisions, not values: a keystroke must not cost the whole document.
		rev := fi.body.Revision()
		cmd = fi.body.Update(msg)
		changed = fi.body.Revision() != rev
	} else {
		before := fi.state()
		fi.line, cmd = fi.line.Update(msg)
		changed = fi.line.Value() != before.text
		if changed && fi.f.Type == store.TypeSet {
			fi.line.suggestFor(e.c.suggestions(fi.f), true) // the item being typed is the last one
		}
		if changed {
			typed := ""
			if k, ok := msg.(tea.KeyPressMsg); ok {
				typed = k.Text
			}
			fi.noteEdit(before, typed)
		}
	}
	if changed {
		if fi.f.Rule == store.RuleCounter {
			fi.delta = 0 // typing a value makes it an absolute change
		}
		e.fieldChanged()
	}
	return cmd
}

func (e *editorModel) leave(status string) tea.Cmd {
	cmd := e.leaveCmd()
	created := e.created
	return tea.Sequence(cmd, func() tea.Msg { return backMsg{status: status, created: created} })
}

func (e *editorModel) externalEdit() tea.Cmd {
	if e.readOnly != "" || e.fields[e.focus].readOnly != "" {
		return nil
	}
	idx := e.focus
	f, err := os.CreateTemp("", "tandem-*.txt")
	if err != nil {
		e.status.fail("external editor", err)
		return nil
	}
	name := f.Name()
	_, werr := f.WriteString(e.fields[idx].text())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(name)
		e.status.fail("external editor", werr)
		return nil
	}
	isBody := e.fields[idx].body != nil
	start := e.currentDraft()
	argv := strings.Fields(e.c.opts.Editor)
	cmd := exec.Command(argv[0], append(argv[1:], name)...)
	// The callback runs on the program's loop once the editor exits, before the program
	// can end: what it read waits in extBack for Update, or else for shutdown.
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(name)
		if err != nil {
			return extEditedMsg{ed: e, field: idx, start: start, err: err}
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return extEditedMsg{ed: e, field: idx, start: start, err: err}
		}
		v := string(data)
		if !isBody {
			v = strings.TrimRight(v, "\r\n")
		}
		msg := extEditedMsg{ed: e, field: idx, value: v, start: start}
		e.extBack = &msg
		return msg
	})
}

// busy reports whether a save or a move is on its way (the spinner turns).
func (e *editorModel) busy() bool { return e.saving || (e.picker != nil && e.picker.moving) }

// statusText is the status line's text, after the spinner while the editor is busy.
func (e *editorModel) statusText() string {
	t := safe.Line(e.status.text)
	if e.busy() {
		return e.spin.View() + " " + t
	}
	return t
}

// dirty reports unsaved edits in a form that can be edited now.
func (e *editorModel) dirty() bool { return e.readOnly == "" && e.changed() }

// save starts a version-checked save of the changed fields.
func (e *editorModel) save() tea.Cmd {
	if e.readOnly != "" {
		e.status.warn("read-only: " + e.readOnly)
		return nil
	}
	if e.saving {
		return nil
	}
	c, kind := e.c, e.kind
	if e.rec == nil {
		vals, err := e.createValues()
		if err != nil {
			e.status.fail("check", err)
			return nil
		}
		e.saving = true
		e.status.info("creating…")
		return tea.Batch(e.spin.Tick, func() tea.Msg {
			r, err := c.st.CreateRecord(c.ctx, kind, vals)
			return savedMsg{ed: e, created: r, err: err}
		})
	}
	u, err := e.toUpdate()
	if err != nil {
		e.status.fail("check", err)
		return nil
	}
	if len(u.Set) == 0 && len(u.Add) == 0 {
		// The form equals the record (a merge can end so): a draft of it would only be
		// offered back later as if it held edits.
		if e.mergedNote != "" {
			e.status.info(fmt.Sprintf("nothing to save: the result equals v%d", e.rec.Version))
		} else {
			e.status.info("nothing to save")
		}
		e.mergedNote = ""
		return e.savedDraftCmd()
	}
	// One key per save attempt, time-ordered (UUIDv7): a store's key index then grows at
	// its end instead of at a random page per save (BENCHMARKS.md measures the difference).
	u.IdempotencyKey = uuid.Must(uuid.NewV7()).String()
	var drop tea.Cmd
	if e.held != nil && e.held.Status().State == locks.StateLost {
		// The lock line already says "lease lost": this save is the optimistic one it
		// promises, not one more try with a token the store will refuse.
		drop = e.dropLostLease(e.held.Status().Err)
	}
	if e.held != nil {
		u.LeaseToken = e.held.Token()
	}
	e.saving = true
	e.sent = e.snapshot()
	e.status.info("saving…")
	id := e.id
	return tea.Batch(drop, e.spin.Tick, func() tea.Msg {
		res, err := c.st.UpdateRecord(c.ctx, kind, id, u)
		msg := savedMsg{ed: e, u: u, res: res, err: err}
		if err == nil && !res.Replayed && res.Record.Version > u.BaseVersion+1 {
			// Relative changes carry no version check, so they never meet a conflict: they
			// went on top of whatever others saved meanwhile. Find out who, to say so.
			msg.between = writesBetween(c, kind, id, u.BaseVersion, res.Record.Version)
		}
		return msg
	})
}

// writesBetween returns the writes that made the versions after base and before next, from
// the history and the operation log (nil when they cannot be read: the note then names the
// versions only).
func writesBetween(c *common, kind store.Kind, id, base, next int64) []store.Change {
	// Only the versions in between, without snapshots: a record with a long history costs
	// no more than the writes this save went on top of.
	q := store.HistoryQuery{Since: base, Before: next}
	vs, err := c.st.FindHistoryPage(c.ctx, kind, id, q)
	if err != nil {
		return nil
	}
	ops, err := c.st.FindOpsPage(c.ctx, kind, id, q)
	if err != nil {
		return nil
	}
	out := make([]store.Change, 0, len(vs)+len(ops))
	for _, v := range vs {
		out = append(out, store.Change{Version: v.Version, Actor: v.Actor, Fields: v.Fields})
	}
	out = append(out, ops...)
	slices.SortFunc(out, func(a, b store.Change) int { return int(a.Version - b.Version) })
	return out
}

// onTopOf names the versions after base and before next and who wrote them: "bob's v5",
// "bob's v5–v7", "v5–v7 by bob, alice".
func onTopOf(base, next int64, writes []store.Change) string {
	lo, hi := base+1, next-1
	span := fmt.Sprintf("v%d", lo)
	if hi > lo {
		span = fmt.Sprintf("v%d–v%d", lo, hi)
	}
	var who []string
	for _, w := range writes {
		if w.Version >= lo && w.Version <= hi && w.Actor != "" && !slices.Contains(who, safe.Line(w.Actor)) {
			who = append(who, safe.Line(w.Actor))
		}
	}
	switch len(who) {
	case 0:
		return span
	case 1:
		return who[0] + "'s " + span
	}
	return span + " by " + strings.Join(who, ", ")
}

func (e *editorModel) onSaved(msg savedMsg) tea.Cmd {
	e.saving = false
	if msg.err == nil {
		rec := msg.created
		if msg.res != nil {
			rec = msg.res.Record
		}
		first := e.rec == nil
		if first {
			// The draft of a new record was kept under id 0.
			e.id = 0
		}
		cmd := e.savedDraftCmd()
		e.id, e.rec = rec.ID, rec
		typed := e.typedSince(e.sent)
		e.fill(rec)
		for i, t := range typed {
			// Keys typed while the save was on its way stay: they are the next edit.
			e.fields[i].setText(t.text)
			e.fields[i].delta = t.delta
			e.draftDirty = true
		}
		e.sent = nil
		e.mode = modeEdit
		e.conflict, e.merge = nil, nil
		note := fmt.Sprintf("saved v%d", rec.Version)
		base, writes := msg.u.BaseVersion, msg.between
		if e.retryOn != nil {
			base, writes = e.retryBase, e.retryOn
		}
		switch {
		case first:
			note = fmt.Sprintf("created %s %d", rec.Kind, rec.ID)
			e.created = rec
		default:
			note = e.c.liveSavedNote(note)
		case rec.Version > base+1 && msg.u.Relative():
			note = fmt.Sprintf("applied your %s on top of %s → v%d", deltaText(e.c.reg, e.kind, msg.u.Add),
				onTopOf(base, rec.Version, writes), rec.Version)
		}
		if e.mergedNote != "" {
			note = e.mergedNote + "; " + note
		}
		e.mergedNote, e.retryOn = "", nil
		e.status.ok(note)
		return tea.Batch(cmd, e.focusCmd())
	}
	var ce *store.ConflictError
	if errors.As(msg.err, &ce) {
		return e.onConflict(ce, msg.u)
	}
	var le *store.LeaseError
	if errors.As(msg.err, &le) {
		if le.Lost {
			e.leaseLost = leaseLostReason(msg.err)
			if e.held != nil {
				cmd := releaseCmd(e.c, e.held, e.leaseStop)
				e.held = nil
				e.status.warn("lease lost: " + e.leaseLost + " — your edits are kept; ctrl+s saves without the lease")
				return cmd
			}
			e.status.warn("lease lost: " + e.leaseLost + " — your edits are kept; ctrl+s saves without the lease")
			return nil
		}
		l := le.Lease
		e.otherLease = &l
		e.status.warn(fmt.Sprintf("not saved: held by %s since %s; your edits are kept", safe.Line(l.Holder), l.AcquiredAt.Local().Format("15:04")))
		return e.writeDraftCmd()
	}
	e.status.fail("save", msg.err)
	return e.writeDraftCmd()
}

// rebase makes cur the new base version with vals in the form (see form.rebase); the draft
// is written again.
func (e *editorModel) rebase(cur *store.Record, vals store.Values, deltas map[string]int64) {
	e.form.rebase(cur, vals, deltas)
	e.draftDirty = true
}
