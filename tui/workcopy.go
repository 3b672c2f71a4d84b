package tui

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// On a working copy (store.WorkingCopy) the TUI shows the copy's state in a header line
// above every screen, S on the list syncs with the source, and a conflict the sync leaves
// opens the merge view with the source's version as theirs. All of it lives here; the app
// calls in at five places (New, Update, Render, the S key, and a new record, which a copy
// may refuse). It tells the screens what to show by messages (statusMsg, reloadListMsg,
// copyCheckMsg, openScreenMsg, closeScreenMsg, layoutMsg), never by their fields.

// copyPoll is how often the header re-reads the copy's state (pending changes grow with
// every local save).
const copyPoll = 2 * time.Second

type (
	copyStateMsg struct {
		state     *store.CopyState
		conflicts []store.CopyConflict
		err       error
	}
	copyPollMsg   struct{}
	copySyncedMsg struct {
		rep *tsync.Report
		err error
	}
	copyResolvedMsg struct {
		kind store.Kind
		id   int64
		note string // what the resolution does, when more than the usual
		err  error
	}
	copyMergeClosedMsg struct{}
	// copyGoneMsg says the record open in editor ed is no longer in the copy.
	copyGoneMsg struct{ ed *editorModel }
)

// workCopy is the working-copy part of the app.
type workCopy struct {
	c         *common
	wc        store.WorkingCopy
	state     *store.CopyState // nil until read, or when the store is no working copy
	conflicts []store.CopyConflict
	syncing   bool
	// reloaded says this TUI's own sync or resolution just reloaded the list, so the state
	// it changed (reloadMark) is not taken for another process's sync.
	reloaded bool
	// failed is the status line of this TUI's last sync that failed (another tandem's sync
	// holding the copy, a source out of reach), and failedAt the copy's SyncedAt then: once
	// a sync ends after it, the failure no longer describes the copy and is replaced, if the
	// status line still shows it.
	failed   string
	failedAt time.Time
	live     liveSeen // what the TUI showed of a --local copy's syncer (live.go)
	// told is the conflicts the screens were last told of (copyConflictsMsg), by record;
	// back is the screen a conflict opened from the editor returns to.
	told map[recKey]store.CopyConflict
	back screenID
}

// reloadMark is what of a copy's state moves when a sync applies the source's records:
// when it moves between two reads, some sync (another tandem's, or tandem sync) added or
// removed records without a feed entry, and the list is loaded afresh.
func reloadMark(st *store.CopyState) string {
	return fmt.Sprintf("%d %d %d", st.Position, st.SyncedAt.UnixNano(), st.Conflict)
}

// newWorkCopy returns the working-copy part for a store that can be one, else nil.
func newWorkCopy(c *common) *workCopy {
	wc, ok := c.st.(store.WorkingCopy)
	if !ok {
		return nil
	}
	return &workCopy{c: c, wc: wc}
}

// Init reads the copy's state.
func (w *workCopy) Init() tea.Cmd {
	if w == nil {
		return nil
	}
	return w.load()
}

func (w *workCopy) load() tea.Cmd {
	c, wc := w.c, w.wc
	return func() tea.Msg {
		st, err := wc.CopyState(c.ctx)
		if err != nil {
			return copyStateMsg{err: err}
		}
		cs, err := wc.Conflicts(c.ctx)
		return copyStateMsg{state: st, conflicts: cs, err: err}
	}
}

// refuseCreate is the store's refusal (store.CheckCopyCreate, the decision the copy's
// CreateRecord applies too) of a new record of kind, told before a form is filled that
// could never be saved: nil when the store is no working copy or the copy holds kind.
func (w *workCopy) refuseCreate(kind store.Kind) error {
	if !w.active() {
		return nil
	}
	return store.CheckCopyCreate(w.state, kind, 0)
}

// active reports whether the store is a working copy (once its state was read).
func (w *workCopy) active() bool { return w != nil && w.state != nil }

// update handles what concerns the working copy; done says the app need not look at msg.
func (w *workCopy) update(msg tea.Msg) (tea.Cmd, bool) {
	if w == nil {
		return nil, false
	}
	switch msg := msg.(type) {
	case copyStateMsg:
		return w.onState(msg), true
	case copyPollMsg:
		w.livePolled()
		return tea.Batch(w.load(), tea.Tick(w.pollEvery(), func(time.Time) tea.Msg { return copyPollMsg{} })), true
	case copySyncedMsg:
		return w.onSynced(msg), true
	case copyResolvedMsg:
		w.reloaded = true
		w.c.send(closeScreenMsg{id: scrCopyMerge, to: w.back})
		w.back = scrList
		switch {
		case msg.err != nil:
			w.tell(func(s *statusLine) { s.fail("resolve", msg.err) })
		case msg.note != "":
			w.tell(func(s *statusLine) { s.ok(msg.note) })
		default:
			w.tell(func(s *statusLine) {
				s.ok(fmt.Sprintf("resolved %s %d; %s sends it to the source", msg.kind, msg.id, keyName(w.c.keys.Sync)))
			})
		}
		w.c.send(reloadListMsg{})
		return w.load(), true
	case copyMergeClosedMsg:
		w.c.send(closeScreenMsg{id: scrCopyMerge, to: w.back})
		w.back = scrList
		w.tell(func(s *statusLine) {
			s.info(fmt.Sprintf("the conflict stays in the copy; its row is marked !, and %s in its editor opens it again", w.c.keys.OpenConflict.Help().Key))
		})
		return nil, true
	case openCopyConflictMsg:
		return w.openConflict(msg), true
	}
	return nil, false
}

// tell sets the list's status line (the screen a sync reports on) and returns its text.
func (w *workCopy) tell(set func(*statusLine)) string {
	var line statusLine
	set(&line)
	w.c.send(statusMsg{to: scrList, line: line})
	return line.text
}

// onState takes a fresh read of the copy's state: the first one shows the header and starts
// polling; one that shows another process's sync reloads the list.
func (w *workCopy) onState(msg copyStateMsg) tea.Cmd {
	if msg.err != nil {
		if store.ErrorCode(msg.err) != store.ENOTFOUND {
			w.tell(func(s *statusLine) { s.fail("working copy", msg.err) })
		}
		return nil // not a working copy: no header, no polling
	}
	first, old := w.state == nil, w.state
	w.state, w.conflicts = msg.state, msg.conflicts
	w.noteConflicts(first)
	if w.failed != "" && msg.state.SyncedAt.After(w.failedAt) {
		var line statusLine
		line.info(fmt.Sprintf("another sync of this copy ended at %s; %s syncs again",
			msg.state.SyncedAt.Local().Format("15:04:05"), keyName(w.c.keys.Sync)))
		w.c.send(statusMsg{to: scrList, line: line, only: w.failed})
		w.failed = ""
	}
	switch {
	case first:
		// The header takes a line from every screen.
		w.c.send(layoutMsg{})
		return tea.Tick(w.pollEvery(), func(time.Time) tea.Msg { return copyPollMsg{} })
	case w.reloaded:
		w.reloaded = false
	case reloadMark(old) != reloadMark(msg.state):
		w.c.send(reloadListMsg{})
		w.c.send(copyCheckMsg{})
	}
	return nil
}

// startSync starts a sync with the source, unless one is running.
func (w *workCopy) startSync() tea.Cmd {
	if w.syncing {
		w.tell(func(s *statusLine) { s.info("a sync is running") })
		return nil
	}
	w.syncing = true
	w.tell(func(s *statusLine) { s.info("syncing with " + safe.Line(w.state.Source) + "…") })
	return w.sync()
}

// onSynced reports a sync and opens the first conflict it left.
func (w *workCopy) onSynced(msg copySyncedMsg) tea.Cmd {
	w.syncing, w.reloaded, w.failed = false, true, ""
	// A sync writes the source's records without feed entries: records it added and
	// removed show only in a list loaded afresh.
	w.c.send(reloadListMsg{})
	w.c.send(copyCheckMsg{})
	switch {
	case msg.err != nil:
		w.failed = w.tell(func(s *statusLine) { s.fail("sync", msg.err) })
		w.failedAt = w.state.SyncedAt
	case len(msg.rep.Conflicts) > 0:
		c := msg.rep.Conflicts[0]
		w.tell(func(s *statusLine) {
			s.warn(fmt.Sprintf("%s: %s", plural(len(msg.rep.Conflicts), "conflict", "conflicts"), conflictSentence(&c)))
		})
		w.back = scrList
		w.c.send(openScreenMsg{id: scrCopyMerge, s: w.conflictScreen(c)})
	case len(msg.rep.Waits) > 0:
		wt := msg.rep.Waits[0]
		w.tell(func(s *statusLine) {
			s.warn(fmt.Sprintf("%s %d waits: leased by %s until %s", wt.Kind, wt.ID, wt.Holder, wt.Until.Local().Format("15:04:05")))
		})
	default:
		w.tell(func(s *statusLine) { s.ok(syncSummary(msg.rep)) })
	}
	return w.load()
}

// checkInCopy finds out whether the editor's record is still in the copy after a sync: a
// sync removes the records the source deleted without a feed entry, so the editor hears of
// it only so (copyGoneMsg).
func (e *editorModel) checkInCopy() tea.Cmd {
	if e.id == 0 || e.rec == nil || e.deleted || e.gone {
		return nil
	}
	c, kind, id := e.c, e.kind, e.id
	return func() tea.Msg {
		if _, err := c.st.FindRecord(c.ctx, kind, id); store.ErrorCode(err) == store.ENOTFOUND {
			return copyGoneMsg{ed: e}
		}
		return nil // still there, or unreadable now: a save then tells
	}
}

// goneFromCopy turns the editor read-only when a sync removed its record from the copy (the
// source deleted it); unsaved edits are kept as a draft first, offered again if the record
// comes back (restored on the source, then synced).
func (e *editorModel) goneFromCopy() tea.Cmd {
	var cmd tea.Cmd
	if e.dirty() {
		cmd = e.writeDraftCmd()
	}
	e.gone = true
	e.readOnly = "gone from this copy (the source deleted it; a sync removed it)"
	keep := fmt.Sprintf("tandem restore %s %d on the source, then S, brings it back", e.kind, e.id)
	if cmd != nil {
		keep = "your edits are kept as a draft, offered if it is restored on the source and synced"
	}
	e.status.warn(fmt.Sprintf("gone from this copy: a sync removed this %s, which the source deleted; %s", e.kind, keep))
	return cmd
}

// syncSummary is the status line of a sync that left nothing to answer: what it pulled,
// removed and pushed, as tandem sync says it.
func syncSummary(rep *tsync.Report) string {
	s := fmt.Sprintf("in sync: pulled %s, pushed %s", plural(rep.Pulled, "record", "records"), plural(rep.Pushed, "change", "changes"))
	if rep.Removed > 0 {
		s += fmt.Sprintf(", removed %s the source deleted", plural(rep.Removed, "record", "records"))
	}
	return s
}

// sync runs one sync with the source the TUI was given.
func (w *workCopy) sync() tea.Cmd {
	c, wc := w.c, w.wc
	return func() tea.Msg {
		if c.opts.OpenSource == nil {
			return copySyncedMsg{err: store.Errorf(store.EINVALID, "no source to sync with: run tandem sync")}
		}
		src, err := c.opts.OpenSource(c.ctx)
		if err != nil {
			return copySyncedMsg{err: err}
		}
		defer src.Close()
		rep, err := tsync.Sync(c.ctx, src, wc)
		return copySyncedMsg{rep: rep, err: waysOn(err)}
	}
}

// waysOn adds to a refusal of a source that went back in time what the person can do: the
// TUI offers neither way itself.
func waysOn(err error) error {
	var rw *tsync.RewoundError
	if !errors.As(err, &rw) {
		return err
	}
	return fmt.Errorf("%w. Ways on: quit and run tandem sync --repush (your values go to the source again as changes), "+
		"or clone the source afresh (docs/offline.md, \"A source restored from a backup\")", err)
}

// header is the working copy's line above every screen.
func (w *workCopy) header() string {
	if w.c.opts.Live != nil {
		return w.liveHeader()
	}
	st := w.state
	pending := fmt.Sprintf("%d pending", st.Pending)
	if st.Deletes > 0 {
		pending += fmt.Sprintf(" (%s)", plural(st.Deletes, "delete", "deletes"))
	}
	if st.Held > 0 {
		// As tandem status lists them: the source's records a sync could not take yet. Only
		// when there are some, to keep the line short.
		pending += fmt.Sprintf(" · %d held back", st.Held)
	}
	line := fmt.Sprintf("offline copy of %s · %s · %s · synced %s", safe.Line(shortSource(st.Source)), pending,
		plural(len(w.conflicts), "conflict", "conflicts"), since(st.SyncedAt, w.c.opts.Now()))
	if w.syncing {
		line += " · syncing…"
	}
	style := w.c.styles.Dim
	if len(w.conflicts) > 0 {
		style = w.c.styles.Conflict
	}
	return style.Render(w.c.clip(line))
}

// lines is how many lines the header takes.
func (w *workCopy) lines() int {
	if w.active() {
		return 1
	}
	return 0
}

// shortSource names a source briefly for the header: a file by its name, a server by its
// host and database (the copy keeps no password).
func shortSource(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		return u.Host + u.Path
	}
	return filepath.Base(s)
}

// decorate puts the header above body when the store is a working copy.
func (w *workCopy) decorate(body string) string {
	if !w.active() {
		return body
	}
	return w.header() + "\n" + body
}

// since says how long ago t was.
func since(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	switch d := now.Sub(t); {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
}

// mergeScreen is the merge view of conflict cf: base is what the local edit was made on,
// mine the local values, theirs the source's version the sync met.
func (w *workCopy) mergeScreen(cf store.CopyConflict) *copyMerge {
	theirs := &store.Record{Kind: cf.Kind, ID: cf.ID, Version: cf.TheirsVersion, UpdatedBy: "the source", Fields: cf.Theirs}
	cs := &conflictState{
		ce:   &store.ConflictError{Kind: cf.Kind, ID: cf.ID, BaseVersion: cf.BaseVersion, Current: theirs},
		rm:   tsync.Merge(w.c.reg, &cf),
		base: &store.Record{Kind: cf.Kind, ID: cf.ID, Version: cf.BaseVersion, Fields: cf.Base},
		mine: cf.Mine,
	}
	return &copyMerge{w: w, cf: cf, m: newMergeView(w.c, cs)}
}

// copyMerge is the merge view as a screen of its own: saving resolves the conflict in the
// copy (pushed, version-checked, at the next sync), esc leaves it queued. A local delete's
// conflict has a screen of its own (copyDelete).
type copyMerge struct {
	w  *workCopy
	cf store.CopyConflict
	m  *mergeModel
}

var _ screen = (*copyMerge)(nil)

// Init starts nothing: the merge is ready when the screen opens.
func (s *copyMerge) Init() tea.Cmd { return nil }

// Update passes keys to the merge view; its end resolves the conflict or leaves it queued.
func (s *copyMerge) Update(msg tea.Msg) tea.Cmd {
	done, ok := msg.(mergeDoneMsg)
	if !ok {
		return s.m.Update(msg)
	}
	if done.cancel {
		return func() tea.Msg { return copyMergeClosedMsg{} }
	}
	c, wc, cf := s.w.c, s.w.wc, s.cf
	vals := done.values
	return func() tea.Msg {
		err := wc.ResolveConflict(c.ctx, cf.Kind, cf.ID, vals)
		return copyResolvedMsg{kind: cf.Kind, id: cf.ID, err: err}
	}
}

// View draws the merge view.
func (s *copyMerge) View() string { return s.m.View() }

func (s *copyMerge) typing() bool { return s.m.typing() }
