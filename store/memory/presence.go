package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// Announce records or refreshes the actor's editor session on a record, until the database
// clock's now + r.TTL.
func (db *DB) Announce(ctx context.Context, r store.PresenceRequest) error {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return err
	}
	if err := db.Registry().CheckPresence(r); err != nil {
		return err
	}
	if err := db.begin(ctx, "Announce"); err != nil {
		return err
	}
	defer db.mu.Unlock()
	now := db.dbNow()
	if db.presence == nil {
		db.presence = map[string]store.Presence{}
	}
	for s, p := range db.presence {
		if now.After(p.ExpiresAt.Add(store.PresencePurgeAfter)) {
			delete(db.presence, s)
		}
	}
	p := store.Presence{Kind: r.Kind, RecordID: r.RecordID, Session: r.Session, User: actor.Name, Since: now, ExpiresAt: now.Add(r.TTL)}
	old, ok := db.presence[r.Session]
	if ok && old.User != actor.Name {
		return nil // another user's session
	}
	if ok && old.Kind == r.Kind && old.RecordID == r.RecordID {
		p.Since = old.Since
	}
	db.presence[r.Session] = p
	return nil
}

// Leave removes a session's presence.
func (db *DB) Leave(ctx context.Context, session string) error {
	if err := db.begin(ctx, "Leave"); err != nil {
		return err
	}
	defer db.mu.Unlock()
	if p, ok := db.presence[session]; ok && leaves(ctx, p.User) {
		delete(db.presence, session)
	}
	return nil
}

// leaves reports whether the actor of ctx may remove a session of holder: its own, or any
// without an actor.
func leaves(ctx context.Context, holder string) bool {
	name := store.ActorName(ctx)
	return name == "" || name == holder
}

// FindPresence returns the live presences f selects, by record, then oldest first.
func (db *DB) FindPresence(ctx context.Context, f store.PresenceFilter) ([]store.Presence, error) {
	if err := db.Registry().CheckPresenceFilter(f); err != nil {
		return nil, err
	}
	if err := db.begin(ctx, "FindPresence"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	now := db.dbNow()
	out := []store.Presence{}
	for _, p := range db.presence {
		if p.Kind == f.Kind && (f.RecordID == 0 || p.RecordID == f.RecordID) && now.Before(p.ExpiresAt) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, comparePresence)
	return out, nil
}

func comparePresence(a, b store.Presence) int {
	if a.RecordID != b.RecordID {
		return int(a.RecordID - b.RecordID)
	}
	if c := a.Since.Compare(b.Since); c != 0 {
		return c
	}
	return strings.Compare(a.Session, b.Session)
}
