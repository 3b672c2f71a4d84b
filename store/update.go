package store

import (
	"context"
	"fmt"
	"math"
)

// The sequence of a save (UpdateRecord and LockedUpdate, absolute and relative), decided
// here, once, for every store: RunUpdate asks a store's UpdateSteps, inside the save's one
// transaction (or under the in-memory store's lock), for what it needs and decides
// everything in between, so every store checks, refuses and writes in the same order and
// the same words. The order is the one Records.UpdateRecord documents: a completed key of
// the same request answers first; then the record as it is, the lease check, PlanUpdate (a
// stale base, nothing to change, a counter out of range), the checks that read other
// records (CheckSave), the write with its logs, and the key's result.

// UpdateRequest is a save as a store runs it, decided by Registry.NewUpdateRequest before
// the save's transaction begins.
type UpdateRequest struct {
	Actor  Actor
	Kind   Kind
	ID     int64
	Update Update
	// Keep is set when the save keeps history (KeepsHistory): an editor's save outside
	// WithoutHistory.
	Keep bool
	// Groups are the lease groups the save writes (UpdateGroups).
	Groups []string
	// Hash is the request hash stored with the idempotency key ("" without a key).
	Hash string
	// OneStatement is set when the save may be done by a store's one-statement relative
	// save (RelativeSaver): relative changes only, none of them 0 (or math.MinInt64, whose
	// bound the statement cannot express), made from no base version, with no lease token
	// and no history version. Everything else the sequence decides in Go is a condition of
	// that statement, which writes nothing when one fails; the sequence then decides.
	OneStatement bool
}

// saveWhat names a save of kind id in messages.
func saveWhat(kind Kind, id int64) string { return fmt.Sprintf("the save of %s %d", kind, id) }

// NewUpdateRequest checks the save u of kind id by the actor in ctx before any SQL runs (a
// known kind the actor may write, CheckUpdate) and returns it as a store runs it. EINVALID,
// EFORBIDDEN (*OwnershipError, or the actor's permissions) as CheckUpdate says; an error
// when ctx has no actor.
func (r *Registry) NewUpdateRequest(ctx context.Context, kind Kind, id int64, u Update) (*UpdateRequest, error) {
	actor, err := ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if actor.ReadOnly != "" { // the message is made only for the refusal
		return nil, actor.CheckWrite(saveWhat(kind, id))
	}
	if _, ok := r.kinds[kind]; !ok {
		return nil, r.unknownKind(kind)
	}
	if actor.Perms != nil { // the message is made only for a limited actor
		if err := actor.CheckKind(saveWhat(kind, id), kind); err != nil {
			return nil, err
		}
	}
	if err := r.CheckUpdate(kind, actor.Role, u); err != nil {
		return nil, err
	}
	p := &UpdateRequest{Actor: actor, Kind: kind, ID: id, Update: u, Keep: KeepsHistory(ctx, actor),
		Groups: r.UpdateGroups(kind, u)}
	if u.IdempotencyKey != "" {
		p.Hash = RequestHash(kind, id, u)
	}
	// Where a record sits is read inside the sequence's transaction: no one-statement save.
	p.OneStatement = !p.Keep && u.Relative() && u.BaseVersion == 0 && u.LeaseToken == "" && !actor.LimitsPlace(kind)
	for _, d := range u.Add {
		if d == 0 || d == math.MinInt64 {
			p.OneStatement = false
		}
	}
	return p, nil
}

// UpdateRead is what a save's first read found: the record, and what the store learnt with
// it at no extra cost.
type UpdateRead struct {
	// Current holds the record's version and the values of the fields the save names (the
	// others may be missing); nil when there is no such record.
	Current *Record
	// KeyFree is set when the save's key is known to be free for it: no row of the key
	// exists (SQLite, under its write lock), or the store claimed it in this transaction
	// (PostgreSQL). Otherwise TakeKey decides.
	KeyFree bool
	// Leased is set when a lease row may concern the written groups: the lease check runs.
	// A store that cannot tell sets it.
	Leased bool
	// Schema is the version of the schema the store keeps now, read with the record (0: not
	// read). When it is newer than the registry's, the save is checked against the store's
	// schema too (SchemaReader, which the steps then offer).
	Schema int64
}

// UpdateSteps are the reads and writes a store's save offers RunUpdate, each inside the
// save's one transaction (or under the in-memory store's lock), for the record saved.
type UpdateSteps interface {
	// CheckUnique and RecordExists are CheckSave's reads, for the record saved.
	SaveChecks
	// Ancestors reads where the record saved sits, for the actor's permissions.
	PathReader
	// Read reads what PlanUpdate needs of the record p saves (its version and the fields p
	// names), locked against other writers until the transaction ends.
	Read(p *UpdateRequest) (UpdateRead, error)
	// TakeKey answers the key of p whose row Read did not rule out: the stored result when
	// the same request completed it (to replay), nil when the save goes ahead, EINVALID for
	// another request, as CheckSaveKey decides.
	TakeKey(p *UpdateRequest) (*KeyResult, error)
	// Find reads the whole record (ENOTFOUND when there is none).
	Find(id int64) (*Record, error)
	// CheckLeases refuses (ELEASE) a write of groups of record id while a live lease on one
	// of them is held by another token than token, or when token is no longer valid
	// (CheckWriteLeases).
	CheckLeases(id int64, groups []string, token string) error
	// Conflict returns the *ConflictError of a save of id made from version base (ENOTFOUND
	// when the record is gone).
	Conflict(id, base int64) error
	// Write writes plan to cur (the record as Read found it): one UPDATE of the planned
	// fields with the version cur.Version+1, the history version (p.Keep) or nothing, the
	// EventSaved change, and, when p has a key, done as the key's result. It returns the
	// saved record.
	Write(p *UpdateRequest, cur *Record, plan *SavePlan, done KeyResult) (*UpdateResult, error)
	// CompleteKey records done as the result of p's key, for a save that wrote nothing.
	CompleteKey(p *UpdateRequest, done KeyResult) error
}

// RelativeSaver is a step a store may offer beside UpdateSteps: a save p.OneStatement
// allows, in one statement inside the save's transaction, whose conditions are the
// sequence's decisions (no live lease on a written group, no row of the key, every counter
// in range, the store's schema at the registry's version). It returns nil, nil when a condition failed and nothing was written: RunUpdate
// then runs the whole sequence, which explains. Its result may lack the record (the store
// decodes it after the commit). A store whose one-statement save is a transaction of its own
// (PostgreSQL) runs it before the save's transaction when p.OneStatement, and RunUpdate
// after it, in the same way.
type RelativeSaver interface {
	SaveRelative(p *UpdateRequest) (*UpdateResult, error)
}

// RunUpdate runs the save p with a store's steps s, inside its transaction. ECONFLICT
// (*ConflictError), ENOTFOUND, EINVALID, ELEASE as Records.UpdateRecord says; EFORBIDDEN
// for a record outside the subtrees the actor may write.
func (r *Registry) RunUpdate(p *UpdateRequest, s UpdateSteps) (*UpdateResult, error) {
	if rs, ok := s.(RelativeSaver); ok && p.OneStatement {
		if res, err := rs.SaveRelative(p); err != nil || res != nil {
			return res, err
		}
	}
	u := p.Update
	read, err := s.Read(p)
	if err != nil {
		return nil, err
	}
	// A key that was seen, or a record that was not (the key's answer comes first), takes
	// the key's own check.
	if u.IdempotencyKey != "" && !read.KeyFree {
		replay, err := s.TakeKey(p)
		if err != nil {
			return nil, err
		}
		if replay != nil {
			cur, err := s.Find(p.ID)
			if err != nil {
				return nil, err
			}
			return replay.Replay(cur), nil
		}
	}
	cur := read.Current
	if cur == nil {
		return nil, Errorf(ENOTFOUND, "%s %d not found", p.Kind, p.ID)
	}
	if err := p.Actor.CheckPlace(saveWhat(p.Kind, p.ID), p.Kind, p.ID, s); err != nil {
		return nil, err
	}
	// A client opened before a schema change: the store's schema decides too.
	if err := r.checkAgainst(p.Kind, p.ID, read.Schema, s, func(n *Registry) error { return checkUpdateIn(n, p) }); err != nil {
		return nil, err
	}
	if u.LeaseToken != "" || read.Leased {
		if err := s.CheckLeases(p.ID, p.Groups, u.LeaseToken); err != nil {
			return nil, err
		}
	}
	plan, err := r.PlanUpdate(cur, u)
	if err != nil {
		return nil, err
	}
	if plan.Stale {
		return nil, s.Conflict(p.ID, u.BaseVersion)
	}
	if plan.Unchanged {
		rec, err := s.Find(p.ID)
		if err != nil {
			return nil, err
		}
		res := Unchanged(rec)
		if u.IdempotencyKey != "" {
			if err := s.CompleteKey(p, ResultOf(res)); err != nil {
				return nil, err
			}
		}
		return res, nil
	}
	if err := r.CheckSave(p.Kind, plan, s); err != nil {
		return nil, err
	}
	return s.Write(p, cur, plan, KeyResult{Kind: p.Kind, ID: p.ID, Version: cur.Version + 1})
}
