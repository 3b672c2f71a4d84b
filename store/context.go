package store

import (
	"context"
	"time"
)

// Role is the kind of writer: a person (editor) or a program (system).
type Role string

// Roles. Field ownership is checked against the role.
const (
	RoleEditor Role = "editor"
	RoleSystem Role = "system"
)

// ParseRole returns the role named s.
func ParseRole(s string) (Role, error) {
	switch Role(s) {
	case RoleEditor, RoleSystem:
		return Role(s), nil
	}
	return "", Errorf(EINVALID, "unknown role %s (want editor or system)", Quote(s))
}

// Actor is who writes: a user name and a role. Every write needs one in its context.
type Actor struct {
	Name string
	Role Role
	// Via, when set, says the write replays an edit made elsewhere (a working copy's sync:
	// "offline copy"), and EditedAt when that edit was made. History keeps both beside the
	// name (HistoryName); updated_by stays the plain name.
	Via      string
	EditedAt time.Time
	// Resolved says the replayed write is a person's answer to a conflict, decided at
	// EditedAt: history says "resolved" then, not "edited", since the values are the
	// answer's (some may be the source's), not the offline edit's.
	Resolved bool
	// ReadOnly, when not empty, says the actor may read but write nothing, and why (a team
	// server's "role viewer"): every write refuses it with EFORBIDDEN (see WriterFrom).
	ReadOnly string
	// Perms, when set, are what the actor may write (a team server's user); nil: whatever
	// Role allows. Every write sequence checks them (see Permissions).
	Perms *Permissions
}

// HistoryName is the actor as a history version names it: the name, and for a replayed
// edit where it came from and when it was made ("alice (offline copy, edited
// 2026-12-01T10:05:00Z)"), or when a conflict it met was resolved ("…, resolved …").
func (a Actor) HistoryName() string {
	if a.Via == "" {
		return a.Name
	}
	if a.EditedAt.IsZero() {
		return a.Name + " (" + a.Via + ")"
	}
	verb := ", edited "
	if a.Resolved {
		verb = ", resolved "
	}
	return a.Name + " (" + a.Via + verb + a.EditedAt.UTC().Format(time.RFC3339) + ")"
}

// WriterFrom is ActorFrom for a write: it also refuses an actor who may only read
// (Actor.ReadOnly) with EFORBIDDEN, saying what was refused and why; nothing is written.
// what names the write ("save product 3", "lease document 7").
func WriterFrom(ctx context.Context, what string) (Actor, error) {
	a, err := ActorFrom(ctx)
	if err != nil {
		return Actor{}, err
	}
	if err := a.CheckWrite(what); err != nil {
		return Actor{}, err
	}
	return a, nil
}

// CheckWrite refuses any write by an actor who may only read (ReadOnly, or Perms of a
// viewer), EFORBIDDEN; nil otherwise.
func (a Actor) CheckWrite(what string) error {
	if a.ReadOnly != "" || (a.Perms != nil && a.Perms.Access == AccessViewer) {
		return a.forbidden(what)
	}
	return nil
}

type ctxKey int

const (
	actorKey ctxKey = iota
	historyKey
)

// WithActor returns a context whose writes are made by a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey, a)
}

// ActorFrom returns the actor of ctx, or an EINVALID error when there is none.
func ActorFrom(ctx context.Context) (Actor, error) {
	a, ok := ctx.Value(actorKey).(Actor)
	if !ok || a.Name == "" {
		return Actor{}, Errorf(EINVALID, "no user: name who is writing").With(WayUser)
	}
	if a.Role == "" {
		a.Role = RoleEditor
	}
	return a, nil
}

// ActorName is the name of ctx's actor, "" when it has none.
func ActorName(ctx context.Context) string {
	a, _ := ctx.Value(actorKey).(Actor)
	return a.Name
}

// WithoutHistory returns a context in which editor writes add an operation-log entry instead
// of a history version (seed 000's scoped version guard). The scope is the context: it ends
// where the context is no longer used, nests, and never affects a concurrent writer.
func WithoutHistory(ctx context.Context) context.Context {
	return context.WithValue(ctx, historyKey, false)
}

// WithHistory returns a context in which editor writes add history versions again, undoing
// an enclosing WithoutHistory for this scope only.
func WithHistory(ctx context.Context) context.Context {
	return context.WithValue(ctx, historyKey, true)
}

// KeepsHistory reports whether a write by a in ctx adds a history version. System writes
// never do; editor writes do unless the innermost scope is WithoutHistory.
func KeepsHistory(ctx context.Context, a Actor) bool {
	if a.Role == RoleSystem {
		return false
	}
	on, ok := ctx.Value(historyKey).(bool)
	return !ok || on
}
