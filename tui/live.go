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
	"github.com/tandem-editor/tandem/sync/live"
)

// With --local the TUI works on a working copy that a background syncer (sync/live) keeps in
// step with its source: the header shows the connection as a status ("online · synced 2 s
// ago", "offline since 10:05 · 3 pending"), a save says "saved locally" and then, once the
// syncer pushed it, "saved on the server (v8)". The working-copy part (workcopy.go) calls
// in here at three places: the header, its poll and the editor's save note.

// LiveSync is the background sync of a --local copy as the TUI sees it (*live.Syncer).
type LiveSync interface {
	// Status returns the syncer's status now.
	Status() live.Status
	// Kick asks for a sync soon; it never blocks.
	Kick()
	// LeaseSource returns the source, where leases are taken, renewed and read (a copy has
	// none); an error at once while the source does not answer.
	LeaseSource(ctx context.Context) (store.Store, error)
	// Present makes the syncer's pushes of kind id present token, the person's lease on the
	// source's record, until Withdraw.
	Present(kind store.Kind, id int64, token string)
	// Withdraw ends Present of token on kind id.
	Withdraw(kind store.Kind, id int64, token string)
}

// livePoll is how often the header re-reads the syncer's status ("synced 2 s ago").
const livePoll = time.Second

// liveHeader is the header line of a --local copy.
func (w *workCopy) liveHeader() string {
	s := w.c.opts.Live.Status()
	now := w.c.opts.Now()
	// Pending and conflicts from the copy's state, polled: a local save counts at once,
	// before the syncer's next round.
	pending, conflicts := w.state.Pending, max(w.state.Conflict, len(w.conflicts))
	var line string
	switch {
	case !s.Started:
		line = fmt.Sprintf("connecting to %s · %d pending", safe.Line(shortSource(w.state.Source)), pending)
	case s.Online:
		line = fmt.Sprintf("online · synced %s", agoShort(s.SyncedAt, now))
		if pending > 0 {
			line += fmt.Sprintf(" · %d pending", pending)
		}
	default:
		line = fmt.Sprintf("offline since %s · %d pending", s.OfflineSince.Local().Format("15:04"), pending)
	}
	line += " · " + plural(conflicts, "conflict", "conflicts")
	if s.Waits > 0 {
		line += fmt.Sprintf(" · %d waiting for leases", s.Waits)
	}
	style := w.c.styles.Dim
	if conflicts > 0 {
		style = w.c.styles.Conflict
	}
	return style.Render(w.c.clip(line))
}

// agoShort says how long ago t was, to the second: "2 s ago", "3 min ago".
func agoShort(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	switch d := now.Sub(t); {
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	default:
		return since(t, now)
	}
}

// liveSeen is what the TUI has shown of the syncer's pushes.
type liveSeen struct {
	pushSeq   int
	conflicts int
}

// livePolled tells the person what the syncer did since the last poll: the open record's
// save now on the server (livePushedMsg), and new conflicts (the copy's state is read again,
// so the list and the merge view know them).
func (w *workCopy) livePolled() {
	if w.c.opts.Live == nil {
		return
	}
	s := w.c.opts.Live.Status()
	if s.Online && w.state != nil && w.state.Pending > 0 {
		// Changes the syncer hears no feed of (a conflict resolved here, in the copy's
		// outbox): a round soon. Offline, its backoff decides.
		w.c.opts.Live.Kick()
	}
	// The open editor follows the leases on the source, and loses its own when the source
	// stops answering.
	w.c.send(liveLeaseMsg{online: s.Online})
	if s.PushSeq != w.live.pushSeq {
		w.live.pushSeq = s.PushSeq
		if len(s.LastPushed) > 0 {
			w.c.send(livePushedMsg{pushed: s.LastPushed})
		}
	}
	if s.Conflicts > w.live.conflicts {
		w.tell(func(l *statusLine) {
			l.warn(fmt.Sprintf("%s in the copy: a push met someone else's change; %s opens the merge view",
				plural(s.Conflicts, "conflict", "conflicts"), keyName(w.c.keys.Sync)))
		})
	}
	w.live.conflicts = s.Conflicts
}

// livePushedMsg tells the screens which of a --local copy's saves the syncer put on the
// source: the editor of such a record, and the list when it is shown, say so.
type livePushedMsg struct{ pushed []live.Pushed }

// onPushed is the editor's part of a livePushedMsg.
func (e *editorModel) onPushed(msg livePushedMsg) {
	for _, p := range msg.pushed {
		if e.kind == p.Kind && e.id == p.ID {
			e.status.ok(fmt.Sprintf("saved on the server (v%d)", p.Version))
		}
	}
}

// pushedLine is the list's line for a livePushedMsg: the last record pushed.
func pushedLine(msg livePushedMsg) statusLine {
	var l statusLine
	p := msg.pushed[len(msg.pushed)-1]
	l.ok(fmt.Sprintf("saved on the server: %s %d (v%d)", p.Kind, p.ID, p.Version))
	return l
}

// liveSavedNote is the editor's note for a save on a --local copy: the save is in the copy,
// and the syncer pushes it.
func (c *common) liveSavedNote(note string) string {
	if c.opts.Live == nil {
		return note
	}
	c.opts.Live.Kick()
	return "saved locally"
}

// pollEvery is how often the working-copy part polls: more often with a syncer, whose
// header counts seconds.
func (w *workCopy) pollEvery() time.Duration {
	if w.c.opts.Live != nil {
		return livePoll
	}
	return copyPoll
}

// Leases with --local live on the source: the editor takes them there (its heartbeat renews
// them there), reads others' leases there (a record leased on the source is read-only in the
// copy too), saves to the copy without the token and has the syncer present it when it
// pushes the record. Offline, no lease can be taken, and a held one is shown lost.

// liveLeaseWait bounds a read of the source's leases, so that opening a record never waits
// on a source that stopped answering before the syncer noticed.
const liveLeaseWait = 2 * time.Second

// offlineLeaseError is the refusal of a lease while the source of a --local copy does not
// answer.
type offlineLeaseError struct{ err error }

func (e *offlineLeaseError) Error() string { return e.err.Error() }
func (e *offlineLeaseError) Unwrap() error { return e.err }

// leaseStore is where leases are taken: the source of a --local copy (an *offlineLeaseError
// while it does not answer), else the store.
func (c *common) leaseStore() (store.Leases, error) {
	if c.opts.Live == nil {
		return c.st, nil
	}
	src, err := c.opts.Live.LeaseSource(c.ctx)
	if err != nil {
		return nil, &offlineLeaseError{err}
	}
	return src, nil
}

// findLeases reads leases where they are: on the source of a --local copy, within
// liveLeaseWait (while it does not answer, the copy's, which has none), else in the store.
func (c *common) findLeases(f store.LeaseFilter) ([]store.Lease, time.Time, error) {
	if c.opts.Live == nil {
		return c.st.FindLeases(c.ctx, f)
	}
	if src, err := c.opts.Live.LeaseSource(c.ctx); err == nil {
		ctx, cancel := context.WithTimeout(c.ctx, liveLeaseWait)
		defer cancel()
		if ls, now, err := src.FindLeases(ctx, f); err == nil {
			return ls, now, nil
		}
	}
	return c.st.FindLeases(c.ctx, f)
}

// saveToken is the token a write to the store presents for h ("" for none): none on a
// --local copy, whose syncer presents it on the source (presentLease).
func (c *common) saveToken(h *locks.Held) string {
	if h == nil || c.opts.Live != nil {
		return ""
	}
	return h.Token()
}

// presentLease has the syncer of a --local copy present h when it pushes h's record.
func (c *common) presentLease(h *locks.Held) {
	if c.opts.Live != nil && h != nil {
		l := h.Lease()
		c.opts.Live.Present(l.Kind, l.RecordID, l.Token)
	}
}

// withdrawLease ends presentLease of h.
func (c *common) withdrawLease(h *locks.Held) {
	if c.opts.Live != nil && h != nil {
		l := h.Lease()
		c.opts.Live.Withdraw(l.Kind, l.RecordID, l.Token)
	}
}

// offlineLeaseText is what the editor says when a lease was asked for offline.
func (c *common) offlineLeaseText() string {
	return fmt.Sprintf("no lease: leases are taken on the server, which does not answer now — edit without one "+
		"(your save goes to the copy and merges when it syncs), or leave and press %s again once online",
		c.keys.OpenLease.Help().Key)
}

// isOfflineLease reports whether err refused a lease because the source does not answer.
func isOfflineLease(err error) bool {
	var oe *offlineLeaseError
	return errors.As(err, &oe)
}

// liveLeaseMsg is the editor's poll of the source's leases, with the syncer's connection.
type liveLeaseMsg struct{ online bool }

// onLiveLease reads the record's leases on the source again (someone may have taken one),
// or, offline, shows the editor's own lease lost: its renewals cannot reach the source.
func (e *editorModel) onLiveLease(msg liveLeaseMsg) tea.Cmd {
	if !msg.online {
		if e.held != nil {
			e.disconnect()
			e.status.warn(e.lostWarning() + "; the lease is taken again once the server answers")
		}
		return nil
	}
	if e.rec == nil || e.id == 0 || e.leaseAsking || e.acquiring {
		return nil
	}
	if e.offlineHeld != nil && !e.left {
		// The lease was ours when the connection went: take it back (or say who has it).
		e.retaking = true
		return e.retakeCmd(e.offlineHeld)
	}
	return e.checkLeasesCmd()
}

// retakeCmd takes the lease of old, ours until the connection to the source was lost,
// again: old's token is given back first (its heartbeat stopped offline, so it may still
// hold there until it expires, and the same person's live lease would refuse the new one),
// then the lease is taken as at open. Someone else's lease taken meanwhile refuses it, and
// the editor turns read-only as for any lease of someone else.
func (e *editorModel) retakeCmd(old *locks.Held) tea.Cmd {
	acquire := e.acquireCmd()
	c := e.c
	return func() tea.Msg {
		if leases, err := c.leaseStore(); err == nil {
			ctx, cancel := context.WithTimeout(c.ctx, liveLeaseWait)
			// Already ended is not an error; a failure leaves it to expire, and the
			// acquisition below says so.
			_, _ = leases.ReleaseLease(ctx, old.Token())
			cancel()
		}
		c.withdrawLease(old)
		return acquire()
	}
}

// disconnect forgets a lease whose renewals cannot reach the source. Its heartbeat is
// stopped, which gives it back in the background should the source answer in time; else it
// expires there. The syncer keeps presenting its token: a push while it still holds goes
// through, and one after it ended goes without it (sync.Options.LeaseToken).
func (l *editorLease) disconnect() {
	l.leaseLost = "the connection to the server was lost"
	if l.leaseStop != nil {
		l.leaseStop()
	}
	l.offlineHeld = l.held
	l.held = nil
}
