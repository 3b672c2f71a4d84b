package tui

import (
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Messages shared between screens. Messages used by one screen only are declared in its file.

// errMsg carries a store error to the screen that asked; it is shown in words, never fatal.
type errMsg struct {
	op  string // what was being done: "load products", "save product 42"
	err error
}

// tickMsg arrives every second: lock countdowns, time-left indicators and draft autosave.
type tickMsg time.Time

// feedReadyMsg says the change feed is subscribed.
type feedReadyMsg struct {
	ch    <-chan store.Change
	after int64 // the cursor the subscription started from
	err   error
}

// changeMsg is one entry of the live change feed.
type changeMsg struct{ c store.Change }

// changesMsg is entries of the feed that were waiting together, in order (waitChange).
type changesMsg struct{ cs []store.Change }

// feedClosedMsg says the feed channel closed (store unreachable); the app resubscribes.
type feedClosedMsg struct{}

// resubscribeMsg asks the app to subscribe to the feed again.
type resubscribeMsg struct{}

// openEditorMsg asks the app to open a record in the editor.
type openEditorMsg struct {
	kind  store.Kind
	id    int64    // 0: a new record
	lease bool     // take a lease on open
	from  screenID // where leaving the editor returns to (the list unless the locks screen)
	// revert opens the editor to revert the record to an old version (from the history).
	revert *revertTo
}

// revertTo is a revert asked for on the history screen: the old version's values, put into
// the form on top of base, the record as the history screen read it.
type revertTo struct {
	base    *store.Record
	version store.Version
}

// openHistoryMsg asks the app to show a record's history.
type openHistoryMsg struct {
	kind store.Kind
	id   int64
}

// openLocksMsg asks the app to show the locks overview.
type openLocksMsg struct{}

// backMsg asks the app to leave the current screen: to the screen it was opened from.
type backMsg struct {
	status string
	// created is the record an editor created, for the list to put its cursor on.
	created *store.Record
}

// leasesMsg carries the live leases of a kind and the database clock.
type leasesMsg struct {
	kind   store.Kind
	leases []store.Lease
	dbNow  time.Time
	sent   time.Time // the local clock when the query started
	err    error
}

// returnedMsg tells the screen shown again after another was left (backMsg) what to say,
// and the record an editor created.
type returnedMsg struct {
	status  string
	created *store.Record
}

// statusMsg sets the status line of screen to (a working copy's sync reports on the list).
type statusMsg struct {
	to   screenID
	line statusLine
	// only, when set, replaces the line only while it still says only: a later message
	// the person has not seen yet is not overwritten.
	only string
}

// apply sets s as msg says.
func (s *statusLine) apply(msg statusMsg) {
	if msg.only == "" || s.text == msg.only {
		*s = msg.line
	}
}

// reloadListMsg asks the list to load afresh: a sync added or removed records without feed
// entries.
type reloadListMsg struct{}

// layoutMsg asks the root to size the screens again: the working copy's header appeared.
type layoutMsg struct{}

// openScreenMsg asks the root to show screen s as id (a working copy's conflict).
type openScreenMsg struct {
	id screenID
	s  screen
}

// closeScreenMsg asks the root to close screen id and show screen to (the list unless
// named): a working copy's conflict opened from the editor returns there.
type closeScreenMsg struct{ id, to screenID }

// recKey names one record.
type recKey struct {
	kind store.Kind
	id   int64
}

// copyConflictsMsg tells every screen the working copy's open conflicts, by record: sent
// whenever a read of the copy finds them changed (this TUI's sync, or another process's,
// such as tandem sync on the command line). The list marks their rows, the editor of one
// shows a banner.
type copyConflictsMsg struct{ byRec map[recKey]store.CopyConflict }

// openCopyConflictMsg asks the working copy's part to open the conflict of record key, from
// screen from (where leaving it returns).
type openCopyConflictMsg struct {
	key  recKey
	from screenID
}

// copyCheckMsg asks the editor to find out whether its record is still in the working copy
// after a sync, which removes what the source deleted without feed entries.
type copyCheckMsg struct{}
