package store

import "time"

// Version is one entry of a record's history: a snapshot written by an editor save.
// System writes and writes inside WithoutHistory add no version, only a Change.
type Version struct {
	Kind     Kind
	RecordID int64
	Version  int64
	Actor    string
	At       time.Time
	Fields   []string // the fields this save changed, sorted
	Snapshot Values   // every field after the save
}

// Event names what a Change records.
type Event string

// Change events. Record events carry Version and Fields; lease events carry Group.
const (
	EventCreated       Event = "created"
	EventSaved         Event = "saved"
	EventMoved         Event = "moved"
	EventLeaseGranted  Event = "lease_granted"
	EventLeaseRenewed  Event = "lease_renewed"
	EventLeaseReleased Event = "lease_released"
	EventLeaseExpired  Event = "lease_expired"
)

// Change is one entry of the change log: every committed write and every lease event, in
// commit order. The change log is the operation log of system writes, the source of the live
// feed, and the truth a subscriber catches up from after a reconnect (by ID, its cursor).
type Change struct {
	ID       int64 // increasing in commit order; a subscriber's cursor
	Event    Event
	Kind     Kind
	RecordID int64
	Version  int64 // the record's version after the write (record events)
	Actor    string
	Role     Role
	Fields   []string         // fields written, sorted
	Deltas   map[string]int64 // relative changes applied, by field
	History  bool             // an editor save with a history version
	Group    string           // lease events: the lease's group
	Fence    int64            // lease events: the lease's fencing number
	At       time.Time
}
