package tui

import (
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
	modeDialog                  // a component over the form: the conflict dialog, the merge view, their changes
	modeMove                    // the tree picker for a record's new parent (a tree kind)
	modeRefPick                 // the picker of a reference field's record
)

// editorModel edits one record. It keeps what the record is and how the person sees it (the
// form, the focus, why it is read-only, the status line, the live banner) and owns one part
// per concern, each in its own file: the lease life cycle (editorLease, editor_lease.go),
// drafts (editorDrafts, editor_draft.go), saving and its conflict policy (editorSaving,
// editor.go and editor_conflict.go), and the dialogs it opens over the form (editorDialogs:
// conflict.go, mergeview.go, editor_move.go, editor_ref.go). The view is editor_view.go.
type editorModel struct {
	c    *common
	kind store.Kind
	id   int64 // 0 until a new record is created
	mode editorMode

	// form holds the fields, the base version (rec) and what a save sends; the editor
	// adds keys, focus, commands and the rest of the life cycle around it.
	form
	focus  int
	edited bool // something in the form changed since the record was opened

	readOnly string  // why the whole record is read-only ("held by alice since 10:05")
	path     []int64 // the record's path, when the user's permissions depend on it (recordPath)
	deleted  bool    // someone deleted the record while it was open (delete.go)
	gone     bool    // a sync removed the record from the working copy (workcopy.go)
	status   statusLine
	others   []store.Change // saves by others after the base version (the live banner)
	revert   *revertTo      // opened to revert to an old version: its values go into the form once loaded
	created  *store.Record  // the record this editor created, for the list's cursor
	// copyConflict is the conflict a working copy's sync left on the record (its banner).
	copyConflict *store.CopyConflict
	// schemaWait is a new schema the form waits to be rebuilt under (schema_reload.go).
	schemaWait *editorSchemaMsg

	editorLease
	editorDrafts
	editorSaving
	editorDialogs
}

// editorSaving is the editor's save in flight and what a save says when it lands: a merge
// or a retry that ctrl+s made on its own, and the writes a relative save went on top of.
type editorSaving struct {
	saving     bool
	spin       spinner.Model // turns in the status line while a save or move is on its way
	sent       []fieldSnap   // the form as the save in flight sent it
	autoSaves  int           // saves made by one ctrl+s on its own (merge, retry)
	mergedNote string        // said after the next successful save: "merged with bob's v8 (price)"
	// retryOn: the writes a retry re-applies my relative changes on top of, and the version
	// they were made on, for "applied your stock -3 on top of bob's v5 → v6".
	retryOn   []store.Change
	retryBase int64
	// conflicted is the conflict the policy is deciding (editor_conflict.go): what the
	// dialog and the merge view show, and what their answers apply to.
	conflicted *conflictState
}

// asked starts the count of a save the person asked for (ctrl+s): the saves it makes on
// its own (merge, retry) are bounded from here, and nothing merged before is said of it.
func (s *editorSaving) asked() { s.autoSaves, s.mergedNote = 0, "" }

// editorDialogs are the screens the editor opens over its form. The conflict dialog
// (conflict.go), the merge view (mergeview.go) and their changes after a reload
// (theirchanges.go) are components: each owns its keys, view, size and footer, and answers
// the editor only by messages (conflictChoiceMsg, mergeDoneMsg, theirChangesDoneMsg); shown
// is the one up while the editor's mode is modeDialog. The move and reference pickers are
// modes of the editor's own (editor_move.go, editor_ref.go).
type editorDialogs struct {
	conflict *conflictModel // kept while the merge view is up: esc there returns to it
	merge    *mergeModel
	shown    editorDialog
	picker   *movePicker
	refPick  *refPicker
}

// editorDialog is a component the editor shows over its form.
type editorDialog interface {
	// Update takes the keys while the dialog is up, and every tea.WindowSizeMsg.
	Update(tea.Msg) tea.Cmd
	View() string
	// typing reports whether keys go into a text field of the dialog.
	typing() bool
}

var (
	_ editorDialog = (*conflictModel)(nil)
	_ editorDialog = (*mergeModel)(nil)
)

// resize gives the window's new size to the dialogs that are open.
func (d *editorDialogs) resize(msg tea.WindowSizeMsg) {
	if d.conflict != nil {
		d.conflict.Update(msg)
	}
	if d.merge != nil {
		d.merge.Update(msg)
	}
}

// showDialog puts dl over the form.
func (e *editorModel) showDialog(dl editorDialog) {
	e.shown, e.mode = dl, modeDialog
}

// closeDialogs takes the conflict dialog and the merge view down: the conflict is decided.
func (e *editorModel) closeDialogs() {
	e.conflict, e.merge, e.shown, e.conflicted = nil, nil, nil, nil
	e.mode = modeEdit
}

// Editor messages; each carries the editor that asked, so a late answer to a closed editor
// is dropped.
type (
	recordLoadedMsg struct {
		ed     *editorModel
		rec    *store.Record
		path   []int64 // rec's path, when the user's permissions depend on it (recordPath)
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
// revert, when set, puts an old version's values into the form once loaded.
func newEditor(c *common, kind store.Kind, id int64, asked bool, revert *revertTo) *editorModel {
	e := &editorModel{c: c, kind: kind, id: id, revert: revert}
	e.spin = spinner.New(spinner.WithSpinner(spinner.MiniDot))
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
		path, err := recordPath(c.ctx, c, rec)
		if err != nil {
			return recordLoadedMsg{ed: e, err: err}
		}
		sent := c.opts.Now()
		ls, now, err := c.findLeases(store.LeaseFilter{Kind: kind, RecordID: id})
		if err != nil {
			return recordLoadedMsg{ed: e, err: err}
		}
		d, derr := c.drafts.Load(kind, id)
		if derr != nil || revert != nil {
			// An unreadable draft is reported by saving a new one over it; a revert puts an
			// old version into the form, so no draft is offered over it.
			d = nil
		}
		return recordLoadedMsg{ed: e, rec: rec, path: path, leases: ls, dbNow: now, sent: sent, draft: d}
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
	case modeDialog:
		return e.shown.typing()
	case modeRefPick:
		return true // the picker's query takes text
	}
	return false
}

// buildForm makes the inputs from the registry and fills them from rec (nil: a new record).
func (e *editorModel) buildForm(rec *store.Record) {
	e.form = newForm(e.c.reg, e.kind, e.c.opts.Role)
	if why := e.c.writeDenied(e.kind, e.path); why != "" {
		for _, fi := range e.fields {
			fi.readOnly = why
		}
	}
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

// editorMsg is an answer meant for one editor: one for another (closed meanwhile) is dropped.
type editorMsg interface{ editor() *editorModel }

func (m recordLoadedMsg) editor() *editorModel  { return m.ed }
func (m leaseAcquiredMsg) editor() *editorModel { return m.ed }
func (m leaseLostMsg) editor() *editorModel     { return m.ed }
func (m savedMsg) editor() *editorModel         { return m.ed }
func (m editorLeasesMsg) editor() *editorModel  { return m.ed }
func (m extEditedMsg) editor() *editorModel     { return m.ed }
func (m draftErrMsg) editor() *editorModel      { return m.ed }
func (m unlockedMsg) editor() *editorModel      { return m.ed }
func (m refTitleMsg) editor() *editorModel      { return m.ed }
func (m moveTreeMsg) editor() *editorModel      { return m.ed }
func (m movedMsg) editor() *editorModel         { return m.ed }
func (m refRowsMsg) editor() *editorModel       { return m.ed }
func (m copyGoneMsg) editor() *editorModel      { return m.ed }

// update routes msg to the part it concerns: the lease, saving, the dialogs, what other
// screens say, or the form.
func (e *editorModel) update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(editorMsg); ok && m.editor() != e {
		if la, ok := msg.(leaseAcquiredMsg); ok && la.held != nil {
			return releaseCmd(e.c, la.held, nil) // asked by an editor since left: give it back
		}
		return nil
	}
	for _, part := range []func(tea.Msg) (tea.Cmd, bool){e.onLeaseMsg, e.onSavingMsg, e.onDialogMsg, e.fromOthers} {
		if cmd, ok := part(msg); ok {
			return cmd
		}
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		e.layout()
		e.editorDialogs.resize(msg)
		return nil
	case recordLoadedMsg:
		return e.onLoaded(msg)
	case refTitleMsg:
		e.setTitle(msg.ref.kind, msg.ref.id, msg.title)
		return nil
	case extEditedMsg:
		return e.onExtEdited(msg)
	case draftErrMsg:
		if msg.err != nil {
			e.status.fail("draft", msg.err)
		}
		return nil
	case tea.KeyPressMsg:
		return e.onKey(msg)
	}
	if e.mode == modeEdit {
		return e.forward(msg)
	}
	return nil
}

// onSavingMsg handles the answers to a save and the spinner that turns meanwhile, and the
// conflict dialog's and merge view's answers; ok says msg was one.
func (e *editorModel) onSavingMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case savedMsg:
		return e.onSaved(msg), true
	case spinner.TickMsg:
		if !e.busy() {
			return nil, true // the save came back: the spinner stops by not asking for another frame
		}
		var cmd tea.Cmd
		e.spin, cmd = e.spin.Update(msg)
		return cmd, true
	case conflictChoiceMsg:
		return e.onConflictChoice(msg), true
	case mergeDoneMsg:
		return e.onMergeDone(msg), true
	case theirChangesDoneMsg:
		return e.onTheirChangesDone(msg), true
	}
	return nil, false
}

// onDialogMsg handles the answers the move and reference pickers asked for; ok says msg
// was one.
func (e *editorModel) onDialogMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case moveTreeMsg:
		return e.onMoveTree(msg), true
	case movedMsg:
		return e.onMoved(msg), true
	case refRowsMsg:
		return e.onRefRows(msg), true
	}
	return nil, false
}

// fromOthers handles what the feed, the tick and the other parts of the TUI tell the
// editor; ok says msg was one.
func (e *editorModel) fromOthers(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case changeMsg:
		return e.onChange(msg.c), true
	case tickMsg:
		return e.onTick(), true
	case errMsg:
		e.status.fail(msg.op, msg.err)
		return nil, true
	case deletedMsg:
		return e.onDeletedHere(msg), true
	case copyCheckMsg:
		return e.checkInCopy(), true
	case copyConflictsMsg:
		e.onCopyConflicts(msg)
		return nil, true
	case copyGoneMsg:
		return e.goneFromCopy(), true
	case livePushedMsg:
		e.onPushed(msg)
		return nil, true
	case liveLeaseMsg:
		return e.onLiveLease(msg), true
	}
	return nil, false
}

// onExtEdited takes the text $EDITOR gave back into the focused field, or into a draft when
// the form can no longer take it as it is.
func (e *editorModel) onExtEdited(msg extEditedMsg) tea.Cmd {
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
	e.rec, e.path = msg.rec, msg.path
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
	cmds = append(cmds, e.editorLease.release(e.c))
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
	if bn := e.copyBanner(); bn != "" {
		return bn
	}
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
	if e.editorDrafts.due(e.c.opts.Now()) {
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

// onKey handles a key: the mode's own keys while a dialog or question is up, else the
// editor's commands, then the focused field's keys.
func (e *editorModel) onKey(msg tea.KeyPressMsg) tea.Cmd {
	if e.mode != modeEdit {
		return e.onModeKey(msg)
	}
	if cmd, ok := e.deleteKey(msg); ok {
		return cmd
	}
	if cmd, ok := e.onCommandKey(msg); ok {
		return cmd
	}
	return e.onFieldKey(msg)
}

// onModeKey gives a key to what is up over the form: a question, a dialog or a picker.
func (e *editorModel) onModeKey(msg tea.KeyPressMsg) tea.Cmd {
	k := e.c.keys
	switch e.mode {
	case modeLoading:
		if key.Matches(msg, k.Back) {
			return e.leave("")
		}
	case modeConfirmLeave:
		return e.onConfirmLeaveKey(msg)
	case modeOfferDraft:
		return e.onOfferDraftKey(msg)
	case modeDialog:
		return e.shown.Update(msg)
	case modeMove:
		return e.onMoveKey(msg)
	case modeRefPick:
		return e.onRefKey(msg)
	}
	return nil
}

// onConfirmLeaveKey answers "discard your edits?".
func (e *editorModel) onConfirmLeaveKey(msg tea.KeyPressMsg) tea.Cmd {
	k := e.c.keys
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
}

// onOfferDraftKey answers the offer of a draft found on open: bring it back or discard it.
func (e *editorModel) onOfferDraftKey(msg tea.KeyPressMsg) tea.Cmd {
	k := e.c.keys
	d := e.offered
	switch {
	case key.Matches(msg, k.Yes):
		e.offered, e.mode = nil, modeEdit
		back := e.bringBack(d, fmt.Sprintf("the edits of your draft from %s (made on v%d) are",
			d.Saved.Local().Format("15:04:05"), d.BaseVersion))
		if d.legacy {
			// From now on it is this store's draft.
			return tea.Batch(back, e.deleteLegacyDraftCmd())
		}
		return back
	case key.Matches(msg, k.No):
		e.offered, e.mode = nil, modeEdit
		e.status.info("draft discarded")
		if d.legacy {
			return e.deleteLegacyDraftCmd()
		}
		return e.deleteDraftCmd()
	}
	return nil
}

// onCommandKey handles the editor's commands on the form: save, leave, move between fields,
// bring kept edits back, the external editor, the pickers; ok says the key was one.
func (e *editorModel) onCommandKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := e.c.keys
	switch {
	case key.Matches(msg, k.Save):
		e.editorSaving.asked()
		return e.save(), true
	case key.Matches(msg, k.Back):
		if e.dirty() {
			e.mode = modeConfirmLeave
			return nil, true
		}
		return e.leave(""), true
	case key.Matches(msg, k.NextField):
		return e.moveFocus(1), true
	case key.Matches(msg, k.PrevField):
		return e.moveFocus(-1), true
	case key.Matches(msg, k.RestoreDraft):
		return e.restoreKept(), true
	case key.Matches(msg, k.ExtEditor):
		return e.externalEdit(), true
	case key.Matches(msg, k.OpenConflict):
		return e.openCopyConflict(), true
	case key.Matches(msg, k.MoveDoc):
		if e.pickableRef() != nil {
			return e.startRefPick(), true
		}
		return e.startMove(), true
	}
	return nil, false
}

// moveFocus moves to the next field in direction dir that takes edits (any field, when the
// whole record is read-only), saying which it passed over, and writes the draft.
func (e *editorModel) moveFocus(dir int) tea.Cmd {
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
}

// onFieldKey gives a key to the focused field: undo and redo, a counter's steps, or the
// input itself.
func (e *editorModel) onFieldKey(msg tea.KeyPressMsg) tea.Cmd {
	k := e.c.keys
	fi := e.fields[e.focus]
	switch {
	case e.viewing(fi):
		return fi.body.Update(msg) // scrolls; the body editor is read-only
	case e.readOnly != "" || fi.readOnly != "":
		return nil
	case key.Matches(msg, k.UndoEdit), key.Matches(msg, k.RedoEdit):
		e.undoKey(fi, key.Matches(msg, k.UndoEdit))
		return nil
	case fi.f.Rule == store.RuleCounter && (key.Matches(msg, k.Inc) || key.Matches(msg, k.Dec)):
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

// undoKey takes back (or, with undo false, makes again) the last edit of field fi.
func (e *editorModel) undoKey(fi *fieldInput, undo bool) {
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
	if why := e.c.opts.NoEditor; why != "" {
		e.status.warn(why)
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
		drop = e.editorLease.lose(e.c, e.held.Status().Err)
	}
	u.LeaseToken = c.saveToken(e.held)
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

// onSaved takes the answer to a save: the saved record into the form, or what the error
// calls for.
func (e *editorModel) onSaved(msg savedMsg) tea.Cmd {
	e.saving = false
	if msg.err != nil {
		return e.onSaveFailed(msg)
	}
	return e.onSavedOK(msg)
}

// onSavedOK puts the saved record into the form, keeping what was typed meanwhile, and
// says what the save did.
func (e *editorModel) onSavedOK(msg savedMsg) tea.Cmd {
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
	e.closeDialogs()
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

// onSaveFailed handles a save the store refused: a newer version goes to the conflict
// policy, a lease to the lease's part; the edits are kept in the draft.
func (e *editorModel) onSaveFailed(msg savedMsg) tea.Cmd {
	var ce *store.ConflictError
	if errors.As(msg.err, &ce) {
		return e.onConflict(ce, msg.u)
	}
	var le *store.LeaseError
	if errors.As(msg.err, &le) {
		if le.Lost {
			cmd := e.editorLease.lose(e.c, msg.err)
			e.status.warn(e.lostWarning())
			return cmd
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
