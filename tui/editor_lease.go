package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/locks"
	"github.com/tandem-editor/tandem/store"
)

// The editor's lease life cycle: taking the lease (on open, with e, or at the first edit),
// the heartbeat's loss signal, and following someone else's lease live (read-only while it
// holds, editable again when it ends).

// editorLease is the editor's lease life cycle: its own lease (wanted, on its way, held,
// lost) and someone else's it follows.
type editorLease struct {
	wantLease bool // lease mode: take the lease on open (or, with leaseOnEdit, at the first edit)
	left      bool // the editor was left: a lease that arrives now is given back
	// leaseOnEdit: take the lease at the first edit (Options.LeaseOnEdit); cleared once asked.
	leaseOnEdit bool

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
	// offlineHeld is our lease of a --local copy, set aside when the connection to the
	// source was lost (disconnect): it is taken again once the source answers (live.go).
	offlineHeld *locks.Held
	retaking    bool // the AcquireLease on its way takes back offlineHeld's lease
}

// othersLease returns the live lease someone else (or this user in another terminal: any
// lease that is not ours) holds on the record's editor group.
func othersLease(ls []store.Lease, user string, mine *locks.Held, now time.Time) *store.Lease {
	for _, l := range ls {
		if !l.Live(now) || l.Group != store.GroupEditor {
			continue
		}
		if mine != nil && mine.Lease().Fence == l.Fence {
			continue
		}
		l := l
		return &l
	}
	return nil
}

func (e *editorModel) acquireCmd() tea.Cmd {
	c, kind, id := e.c, e.kind, e.id
	ctx, cancel := context.WithCancel(c.ctx)
	if e.leaseStop != nil {
		e.leaseStop() // an earlier attempt's context
	}
	e.leaseStop = cancel
	e.acquiring = true
	return func() tea.Msg {
		leases, err := c.leaseStore()
		if err != nil {
			return leaseAcquiredMsg{ed: e, err: err}
		}
		h, err := locks.Acquire(ctx, leases, store.LeaseRequest{Kind: kind, RecordID: id, Group: store.GroupEditor,
			TTL: c.opts.LeaseTTL}, locks.Options{TTL: c.opts.LeaseTTL})
		c.presentLease(h)
		return leaseAcquiredMsg{ed: e, held: h, err: err}
	}
}

func (e *editorModel) onLeaseAcquired(msg leaseAcquiredMsg) tea.Cmd {
	e.acquiring = false
	if e.left {
		if msg.held != nil {
			return releaseCmd(e.c, msg.held, nil)
		}
		return nil
	}
	var again tea.Cmd
	if e.recheck {
		e.recheck = false
		again = e.checkLeasesCmd()
	}
	retaking := e.retaking
	e.retaking = false
	if retaking && !isOfflineLease(msg.err) {
		e.offlineHeld = nil // taken back, or lost for good: said below
	}
	if msg.err != nil {
		var le *store.LeaseError
		if errors.As(msg.err, &le) && !le.Lost {
			l := le.Lease
			e.otherLease = &l
			// Written before the form turns read-only: an edit that met someone else's lease
			// stays on disk, to be offered back when the record is opened again.
			var keep tea.Cmd
			if e.edited && e.dirty() {
				keep = e.writeDraftCmd()
			}
			e.leaseLocked = true
			e.readOnly = heldText(l)
			if retaking {
				e.leaseLost = ""
				e.status.warn("your lease was lost while offline: read-only, " + e.readOnly)
			} else if keep != nil {
				e.status.warn("read-only: " + e.readOnly + " — your edit is kept as a draft")
			} else {
				e.status.warn("read-only: " + e.readOnly)
			}
			e.focusCmd()
			return tea.Batch(keep, again)
		}
		if isOfflineLease(msg.err) {
			if retaking {
				// Offline again before it was taken back: at the next connection.
				e.status.warn(e.lostWarning())
				return again
			}
			e.status.warn(e.c.offlineLeaseText())
			return again
		}
		e.status.fail("take the lease", msg.err)
		return again
	}
	e.held = msg.held
	e.leaseLost = ""
	if retaking {
		e.status.ok("lease taken again: the server answers again; others see this record read-only until you leave")
	} else {
		e.status.ok("lease taken: others see this record read-only until you leave")
	}
	return tea.Batch(waitLost(e, msg.held), again)
}

// heldText says who holds a lease, for the read-only marks: "held by alice since 10:05".
func heldText(l store.Lease) string {
	return "held by " + safe.Line(l.Holder) + " since " + l.AcquiredAt.Local().Format("15:04")
}

// checkLeasesCmd reads the record's leases (and those ended in the last minutes, to tell
// a release from an expiry); followLease acts on the answer.
func (e *editorModel) checkLeasesCmd() tea.Cmd {
	e.leaseSeq++
	e.leaseAsking = true
	c, kind, id, seq := e.c, e.kind, e.id, e.leaseSeq
	return func() tea.Msg {
		sent := c.opts.Now()
		ls, now, err := c.findLeases(store.LeaseFilter{Kind: kind, RecordID: id, Expired: 10 * time.Minute})
		return editorLeasesMsg{ed: e, seq: seq, leases: ls, dbNow: now, sent: sent, err: err}
	}
}

// followLease makes the editor follow someone else's lease as it is now: read-only the
// moment somebody takes it (unsaved edits written to the draft first), editable again
// without a key press once it ends, released or expired.
func (e *editorModel) followLease(ls []store.Lease, now time.Time) tea.Cmd {
	prev := e.otherLease
	cur := othersLease(ls, e.c.user, e.held, now)
	e.otherLease = cur
	switch {
	case e.rec == nil:
		return nil
	case cur != nil && !e.leaseLocked:
		return e.lockBy(*cur)
	case cur != nil:
		e.readOnly = heldText(*cur) // taken over by someone else meanwhile
		return nil
	case e.leaseLocked:
		return e.unlock(prev, ls, now)
	}
	return nil
}

// lockBy turns the form read-only because l holds the record, telling the person at once.
// Their edits stay in the form and are written to the draft first. A lease of ours that
// the heartbeat still believes in is gone: l could not have been granted otherwise.
func (e *editorModel) lockBy(l store.Lease) tea.Cmd {
	var keep, drop tea.Cmd
	if e.dirty() {
		keep = e.writeDraftCmd()
	}
	if e.held != nil {
		drop = e.editorLease.lose(e.c, errors.New("taken over by "+l.Holder))
	}
	e.leaseLocked = true
	e.readOnly = heldText(l)
	note := safe.Line(l.Holder) + " took the lease: read-only until it ends" // the lock line says since when
	if keep != nil {
		note += "; your edits are kept as a draft"
	}
	e.status.warn(note)
	e.focusCmd()
	return tea.Batch(keep, drop)
}

// unlock ends the read-only state after prev ended (ls tells released from expired) and
// reads the record again.
func (e *editorModel) unlock(prev *store.Lease, ls []store.Lease, now time.Time) tea.Cmd {
	e.leaseLocked = false
	e.readOnly = ""
	who, how := "the", "ended"
	if prev != nil {
		who = safe.Line(prev.Holder) + "'s"
		how = "expired"
		for _, l := range ls {
			if l.Group == prev.Group && l.Fence == prev.Fence && l.Released {
				how = "released"
			}
		}
		if how == "expired" {
			how = "expired at " + prev.ExpiresAt.Local().Format("15:04:05")
		}
	}
	e.status.ok(fmt.Sprintf("%s lease %s: you can edit", who, how))
	c, kind, id := e.c, e.kind, e.id
	return func() tea.Msg {
		rec, err := c.st.FindRecord(c.ctx, kind, id)
		if err != nil {
			return unlockedMsg{ed: e, err: err}
		}
		d, derr := c.drafts.Load(kind, id)
		if derr != nil {
			d = nil
		}
		return unlockedMsg{ed: e, rec: rec, draft: d}
	}
}

// onUnlocked takes the record as it is now. Edits in the form stay on top of the version
// they were made on (ctrl+s merges them with what changed meanwhile); an untouched form
// shows the new version, and a draft left from an earlier session is offered.
func (e *editorModel) onUnlocked(msg unlockedMsg) tea.Cmd {
	if e.leaseLocked {
		return nil // taken again meanwhile
	}
	if msg.err != nil {
		e.status.fail(fmt.Sprintf("open %s %d", e.kind, e.id), msg.err)
		return nil
	}
	var cmds []tea.Cmd
	if e.dirty() {
		e.status.ok(e.status.text + "; your edits are kept — " + keyName(e.c.keys.Save) + " saves them")
	} else {
		e.rec = msg.rec
		e.fill(msg.rec)
		if msg.draft != nil && e.mode == modeEdit && e.draftDiffers(msg.draft) {
			e.offered = msg.draft
			e.mode = modeOfferDraft
		}
	}
	if e.wantLease && e.held == nil && !e.acquiring {
		cmds = append(cmds, e.acquireCmd())
	}
	cmds = append(cmds, e.focusCmd())
	return tea.Batch(cmds...)
}

// waitLost waits for the lease's loss signal; it ends quietly when the lease is released.
func waitLost(e *editorModel, h *locks.Held) tea.Cmd {
	return func() tea.Msg {
		err, ok := <-h.Lost()
		if !ok {
			return nil
		}
		return leaseLostMsg{ed: e, err: err}
	}
}

func leaseLostReason(err error) string {
	var le *store.LeaseError
	if errors.As(err, &le) && le.Reason != "" {
		return le.Reason
	}
	if err == nil {
		return "ended"
	}
	return err.Error()
}

// releaseCmd ends a held lease and stops its heartbeat.
func releaseCmd(c *common, h *locks.Held, stop context.CancelFunc) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 5*time.Second)
		defer cancel()
		err := h.Release(ctx)
		c.withdrawLease(h)
		if stop != nil {
			stop()
		}
		if err != nil {
			return errMsg{op: "release the lease", err: err}
		}
		return nil
	}
}

// release gives the lease back, or stops an acquisition on its way; nil when there is none.
func (l *editorLease) release(c *common) tea.Cmd {
	if l.held == nil {
		if l.leaseStop != nil {
			l.leaseStop()
		}
		return nil
	}
	cmd := releaseCmd(c, l.held, l.leaseStop)
	l.held = nil
	return cmd
}

// lose forgets a lease that was lost (why: err) and stops its heartbeat; later saves are
// optimistic.
func (l *editorLease) lose(c *common, err error) tea.Cmd {
	l.leaseLost = leaseLostReason(err)
	if l.held == nil {
		return nil
	}
	cmd := releaseCmd(c, l.held, l.leaseStop)
	l.held = nil
	return cmd
}

// lostWarning is what the status line says once the lease is lost, naming the save key as
// bound.
func (e *editorModel) lostWarning() string {
	return "lease lost: " + e.leaseLost + " — your edits are kept; " + keyName(e.c.keys.Save) + " saves without the lease"
}

// lockLine is the editor's lock indicator.
func (e *editorModel) lockLine() string {
	st := e.c.styles
	switch {
	case e.held != nil:
		s := e.held.Status()
		switch s.State {
		case locks.StateFailing:
			return st.Warn.Render(fmt.Sprintf("lease: renewal failing, %s left", s.Remaining.Round(time.Second)))
		case locks.StateLost:
			return st.Error.Render("lease lost: " + leaseLostReason(s.Err))
		}
		return st.LockYou.Render(fmt.Sprintf("lease: you, %s left", s.Remaining.Round(time.Second)))
	case e.readOnly != "":
		return st.LockOther.Render("read-only: " + e.readOnly)
	case e.leaseLost != "":
		return st.Error.Render("lease lost: " + safe.Line(e.leaseLost) + " — saving optimistically")
	case e.otherLease != nil:
		ind, _ := lockIndicator(*e.otherLease, e.c.user, e.c.dbNow())
		return st.LockOther.Render("lock: " + ind)
	case e.wantLease && e.id != 0:
		return st.Dim.Render("lease: taking…")
	case e.leaseOnEdit:
		return st.Dim.Render("lock: free · the lease is taken at your first edit")
	}
	return st.Dim.Render("lock: free · saves check the version")
}

// onLeaseMsg handles the answers about leases: ours taken or lost, the record's leases read
// again, the record read again once someone's lease ended; ok says msg was one.
func (e *editorModel) onLeaseMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case leaseAcquiredMsg:
		return e.onLeaseAcquired(msg), true
	case leaseLostMsg:
		if e.held == nil {
			return nil, true
		}
		// The heartbeat that said so has stopped: nothing is left to give back.
		e.leaseLost, e.held = leaseLostReason(msg.err), nil
		e.status.warn(e.lostWarning())
		return nil, true
	case editorLeasesMsg:
		return e.onLeases(msg), true
	case unlockedMsg:
		return e.onUnlocked(msg), true
	}
	return nil, false
}

// onLeases follows the record's leases as read again.
func (e *editorModel) onLeases(msg editorLeasesMsg) tea.Cmd {
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
}
