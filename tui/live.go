package tui

import (
	"fmt"
	"time"

	"github.com/tandem-editor/tandem/internal/safe"
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
