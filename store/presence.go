package store

import (
	"context"
	"time"
)

// Presence is who has a record open in an editor right now: a light, expiring row per open
// editor (a session), refreshed by the editor while it stays open and gone when it is not
// refreshed. Unlike a lease it grants nothing and blocks nobody: no write checks it. It lets
// the list and the editor say "bob is editing" before anyone saves. It is not in the change
// log either (an editor refreshing every few seconds would flood it); screens read it with
// FindPresence.
type Presence struct {
	Kind      Kind
	RecordID  int64
	Session   string    // the editor's session id (random; one per open editor)
	User      string    // who
	Since     time.Time // when this session opened the record (database clock)
	ExpiresAt time.Time // gone after this unless refreshed (database clock)
}

// PresenceRequest announces (or refreshes) that the actor's editor session has a record open.
type PresenceRequest struct {
	Kind     Kind
	RecordID int64
	Session  string
	TTL      time.Duration
}

// PresenceFilter selects presences for FindPresence.
type PresenceFilter struct {
	Kind     Kind  // required
	RecordID int64 // 0 for every record of Kind
}

// Presences keeps who has which record open.
type Presences interface {
	// Announce records that the actor's editor session has the record open until now + TTL
	// (database clock), or refreshes it; Since stays while the session stays on the same
	// record. A session holds one record: announcing another replaces it. It never waits for
	// a lease or another writer's record. A session belongs to the user who announced it
	// (its id is listed to everyone): another user's announce of it changes nothing.
	// EINVALID for a bad request (CheckPresence).
	Announce(ctx context.Context, r PresenceRequest) error
	// Leave removes a session's presence (a closed editor); with an actor, only the actor's
	// own session. Leaving an unknown, expired or another user's session is not an error.
	Leave(ctx context.Context, session string) error
	// FindPresence returns the live (unexpired) presences f selects, by record, then oldest
	// first. EINVALID for an unknown kind.
	FindPresence(ctx context.Context, f PresenceFilter) ([]Presence, error)
}

// Presence lifetimes: an editor refreshes at a third of the TTL, so one lost refresh does not
// make a present person vanish, and a killed editor disappears within the TTL.
const (
	DefaultPresenceTTL = 15 * time.Second
	MinPresenceTTL     = time.Second
	MaxPresenceTTL     = 10 * time.Minute
	// PresencePurgeAfter is how long an expired presence row may stay before a later
	// Announce removes it; expired rows are never returned.
	PresencePurgeAfter = time.Minute
)

// CheckPresence validates a presence request before any store touches it.
func (r *Registry) CheckPresence(req PresenceRequest) error {
	if _, ok := r.kinds[req.Kind]; !ok {
		return r.unknownKind(req.Kind)
	}
	if req.RecordID <= 0 {
		return Errorf(EINVALID, "presence needs a record id")
	}
	if req.Session == "" || len(req.Session) > 64 {
		return Errorf(EINVALID, "a presence session id is 1 to 64 characters")
	}
	if req.TTL < MinPresenceTTL || req.TTL > MaxPresenceTTL {
		return Errorf(EINVALID, "presence TTL %s is outside %s..%s", req.TTL, MinPresenceTTL, MaxPresenceTTL)
	}
	return nil
}

// CheckPresenceFilter validates a FindPresence filter.
func (r *Registry) CheckPresenceFilter(f PresenceFilter) error {
	if _, ok := r.kinds[f.Kind]; !ok {
		return r.unknownKind(f.Kind)
	}
	return nil
}

// NewPresenceSession returns a new editor session id.
func NewPresenceSession() string { return NewLeaseToken()[:32] }
