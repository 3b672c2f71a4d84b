package store

import (
	"maps"
	"slices"
)

// The decisions a working copy's steps share, whatever keeps its state: how a conflict joins
// the one a record has, what a resolution queues, what the outbox and the conflicts say about
// each record before a repush, and the refusals of a copy's own deletes, restores and leases.
// A backend keeps the state (store/sqlite in wc_* tables, store/memory in maps) and calls
// these.

// LocalIDBase is where the ids of records created in a working copy start, so that they never
// meet the ids of records that come from the source.
const LocalIDBase = int64(1) << 40

// RecordKey names one record of a store.
type RecordKey struct {
	Kind Kind
	ID   int64
}

// CopyColumns returns the fields of kind a working copy tracks: the fields it pushes
// (CopyFields) and, for a kind with a parent, the parent field (pushed as a move).
func (r *Registry) CopyColumns(kind Kind) []*Field {
	fs := r.CopyFields(kind)
	if f, err := r.Field(kind, ParentField); err == nil {
		fs = append(fs, f)
	}
	return fs
}

// CopyValues returns the values of vals a working copy keeps in its outbox and conflicts:
// those of kind's copy columns (CopyColumns), a field absent from vals staying absent; nil
// for nil.
func (r *Registry) CopyValues(kind Kind, vals Values) Values {
	if vals == nil {
		return nil
	}
	out := Values{}
	for _, f := range r.CopyColumns(kind) {
		if v, ok := vals[f.Name]; ok {
			out[f.Name] = v
		}
	}
	return out.Clone()
}

// RecordCopyValues returns the copy columns of rec as the record holds them, every one
// present (nil for a field the record leaves unset, such as a root document's parent).
func (r *Registry) RecordCopyValues(rec *Record) Values {
	out := Values{}
	for _, f := range r.CopyColumns(rec.Kind) {
		out[f.Name] = rec.Fields[f.Name]
	}
	return out.Clone()
}

// JoinConflict returns the conflict a record has once conflict c joins old, the one it has
// open (WorkingCopy.QueueConflict): a save's or a move's that joins a create's stays the
// create's, with c's values added to mine; otherwise the fields are joined, the first base
// of each field is kept (what the person's value was made on) and mine and theirs are c's.
func JoinConflict(old, c CopyConflict) CopyConflict {
	if old.Op == CopyCreate && (c.Op == CopySave || c.Op == CopyMove) {
		// A later write of a record whose create the source refused names a local id the
		// source has never had: it stays the create's conflict, whose answer pushes the
		// create with the newest values.
		mine := old.Mine.Clone()
		maps.Copy(mine, c.Mine)
		old.Mine, old.Actor, old.At = mine, c.Actor, c.At
		return old
	}
	base := c.Base.Clone()
	if base == nil {
		base = Values{}
	}
	for _, f := range old.Fields {
		if v, ok := old.Base[f]; ok {
			base[f] = v
		}
	}
	c.Base = base
	c.Fields = slices.Clone(c.Fields)
	for _, f := range old.Fields {
		if !slices.Contains(c.Fields, f) {
			c.Fields = append(c.Fields, f)
		}
	}
	slices.Sort(c.Fields)
	if c.Reason != old.Reason {
		c.Reason = old.Reason + "; " + c.Reason
	}
	return c
}

// ResolutionEntries returns the outbox entries that take the resolution of conflict c with
// vals (every editor and shared field) to the source (WorkingCopy.ResolveConflict): a create
// again for a create's conflict; otherwise what differs from theirs, as a save on
// TheirsVersion, then a move when the parent differs. A save is queued even when the person
// took theirs everywhere (an empty save): its push reads the record as the source has it now,
// which the pulls skipped while it was in conflict. The entries carry Op, Kind, ID,
// BaseVersion, Before and After; the caller gives them a seq, key, actor and time.
func (r *Registry) ResolutionEntries(c CopyConflict, vals Values) []OutboxEntry {
	entry := func(op CopyOp, base int64, before, after Values) OutboxEntry {
		return OutboxEntry{Op: op, Kind: c.Kind, ID: c.ID, BaseVersion: base, Before: before, After: after}
	}
	if c.Op == CopyCreate {
		return []OutboxEntry{entry(CopyCreate, 0, Values{}, r.CopyValues(c.Kind, vals))}
	}
	before, after := Values{}, Values{}
	for _, f := range r.CopyFields(c.Kind) {
		if v, ok := vals[f.Name]; ok && !Equal(v, c.Theirs[f.Name]) {
			before[f.Name], after[f.Name] = c.Theirs[f.Name], v
		}
	}
	p := ParentField
	if v, ok := vals[p]; ok && !Equal(v, c.Theirs[p]) {
		var out []OutboxEntry
		if len(after) > 0 {
			out = append(out, entry(CopySave, c.TheirsVersion, before, after))
		}
		return append(out, entry(CopyMove, c.TheirsVersion, Values{p: c.Theirs[p]}, Values{p: v}))
	}
	return []OutboxEntry{entry(CopySave, c.TheirsVersion, before, after)}
}

// LocalState is what a working copy holds besides its records, by record: what Repush sets
// against the source.
type LocalState struct {
	Created map[RecordKey]bool         // records created here (a create entry or a create's conflict)
	Base    map[RecordKey]Values       // what local edits were made on: the oldest value of each field
	Deletes map[RecordKey]*OutboxEntry // local deletes
}

// LocalStateOf reads the open conflicts cs and the outbox es (oldest first) of a working copy.
func LocalStateOf(cs []CopyConflict, es []OutboxEntry) *LocalState {
	st := &LocalState{Created: map[RecordKey]bool{}, Base: map[RecordKey]Values{}, Deletes: map[RecordKey]*OutboxEntry{}}
	for _, c := range cs {
		k := RecordKey{c.Kind, c.ID}
		switch c.Op {
		case CopyCreate:
			st.Created[k] = true
		case CopyDelete:
			st.Deletes[k] = &OutboxEntry{Op: c.Op, Kind: c.Kind, ID: c.ID, Before: c.Base, Actor: c.Actor, At: c.At}
		default:
			// A conflict's base is older than the entries queued after it. What the copy
			// last took from the source is the conflict's theirs, though: a field the source
			// had changed there is a write the copy has seen, and a source that lost it must
			// not have the local value pushed over it without a person's answer.
			b := c.Base.Clone()
			if b == nil {
				b = Values{}
			}
			maps.Copy(b, c.Theirs)
			st.Base[k] = b
		}
	}
	for i := range es {
		e := &es[i]
		k := RecordKey{e.Kind, e.ID}
		switch e.Op {
		case CopyCreate:
			st.Created[k] = true
			continue
		case CopyDelete:
			if _, ok := st.Deletes[k]; !ok {
				st.Deletes[k] = e
			}
			continue
		}
		b := st.Base[k]
		if b == nil {
			b = Values{}
			st.Base[k] = b
		}
		for name, v := range e.Before {
			if _, ok := b[name]; !ok {
				b[name] = v
			}
		}
	}
	return st
}

// DeleteStillHolds reports whether the source's values theirs are still what the local
// delete found (before): then a repush queues the delete again on the source's version;
// otherwise it is a conflict (DeletedHere).
func (r *Registry) DeleteStillHolds(kind Kind, before, theirs Values) bool {
	for _, f := range r.CopyColumns(kind) {
		if v, ok := before[f.Name]; ok && !Equal(v, theirs[f.Name]) {
			return false
		}
	}
	return true
}

// CopyDeleteInConflict is the refusal of a local delete of a record with an open conflict:
// the conflict says what the source has, which the person should see before deleting.
func CopyDeleteInConflict(kind Kind, id int64, reason string) error {
	return Errorf(EINVALID, "%s %d has a conflict with the source (%s): resolve it first (tandem resolve %s %d …, or the merge view), then delete",
		kind, id, reason, kind, id)
}

// NotDeletedInCopy is the refusal of a restore, on a working copy, of a record the source
// deleted (or whose local delete reached it): restoring it here would make a record the source
// does not have.
func NotDeletedInCopy(kind Kind, id int64) error {
	return Errorf(EINVALID, "%s %d is not deleted in this copy only: the source has deleted it (its delete was synced, "+
		"or it was deleted there). Restore it on the source, then sync: the copy takes it back", kind, id).With(WayOnSource)
}

// RestoreUnderDeleted is the refusal of a restore, on a working copy, of a document whose
// parent is deleted in the copy: at the root here and under its parent on the source, the
// copy would differ from the source with nothing in the outbox to say so.
func RestoreUnderDeleted(id int64, parent any) error {
	return Errorf(EINVALID, "document %d was under document %v, which is deleted in this copy: restore document %v first, then document %d",
		id, parent, parent, id)
}

// ResolveDeleteWhole is the refusal to resolve field by field the conflict of a local delete.
func ResolveDeleteWhole(kind Kind, id int64) error {
	return Errorf(EINVALID, "%s %d was deleted here and changed on the source: answer for the whole record (tandem resolve %s %d mine|theirs)", kind, id, kind, id)
}

// NotDeleteConflict is the refusal to answer as a delete's a conflict that is not one.
func NotDeleteConflict(kind Kind, id int64, reason string) error {
	return Errorf(EINVALID, "%s %d's conflict is not about a delete (%s): answer it field by field", kind, id, reason)
}

// NoConflict is the error of answering a conflict a record does not have.
func NoConflict(kind Kind, id int64) error {
	return Errorf(ENOTFOUND, "%s %d has no conflict", kind, id)
}

// DropWithChildren is the refusal to drop a document that has documents under it in the copy.
func DropWithChildren(id int64, n int) error {
	return Errorf(EINVALID, "document %d has %d documents under it in the copy; move them or settle their conflicts first", id, n)
}

// CopyLeaseRefused is the refusal of a lease on a working copy (found at where): a lease would
// hold nobody back, since the others edit the source.
func CopyLeaseRefused(where string) error {
	return Errorf(EINVALID, "leases cannot be taken on a working copy (%s): nobody else edits this file; take the lease on the source, where the others are", where)
}

// GoneConflictRestored is the reason a conflict that found its record gone from the source
// takes once the source has the record again.
const GoneConflictRestored = "deleted on the source after the edit, and restored there since"
