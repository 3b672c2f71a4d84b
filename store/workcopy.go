package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A working copy is a store cloned from a source store, usable with no source reachable, that
// syncs back (package sync). It is an ordinary store with extra state: where it came from and
// how far it has read the source's change feed, the base version and values of each record
// (the source's, as last synced), an outbox of what local saves did, and a queue of conflicts
// a person must resolve. The decisions of a sync live in package sync; a WorkingCopy only
// keeps that state, each step in one local transaction.

// CopyOp names what an outbox entry or a conflict did locally.
type CopyOp string

// Outbox operations.
const (
	CopyCreate CopyOp = "create" // a record created locally
	CopySave   CopyOp = "save"   // a save of editor and shared fields
	CopyMove   CopyOp = "move"   // a document put under another parent
	// CopyDelete is a record deleted locally: pushed as a delete on the source at the
	// entry's base version, with its key. Before holds the record's values as the delete
	// found them. A record's delete entry is its last: nothing is written to it after.
	CopyDelete CopyOp = "delete"
)

// DeletedHere is the reason of the conflict a local delete meets when the source changed
// the record since the version the delete was made on.
const DeletedHere = "deleted here, changed on the source"

// CopyState describes a working copy: its source, its scope and how far it has synced.
type CopyState struct {
	SourceID string    // the source's StoreID: a sync checks it is talking to the same store
	Source   string    // where the source was found (a path or a DSN without its password)
	Kinds    []Kind    // the kinds cloned
	Subtree  int64     // for documents: only this document and its descendants (0: all)
	Position int64     // the source's change-feed ID up to which the copy has read
	ClonedAt time.Time // when the clone was made
	// SyncedAt is when the last sync that reached the source ran its pull and push to the
	// end, whatever it left (conflicts, lease waits); zero: never.
	SyncedAt time.Time
	Pending  int // outbox entries not yet on the source
	Deletes  int // of those, local deletes (CopyDelete)
	Conflict int // conflicts waiting for a person
	// Held is how many of the source's records the copy holds back (Stale): a sync read
	// them but could not write them yet.
	Held int
	// Mark is what the source's change Position was when the copy read it (ChangeMark),
	// so that a sync can tell whether the source still has that change as it was; "" when
	// Position is 0 or the copy has not kept it yet.
	Mark string
}

// FeedPoint is a place in a source's change feed: the id of a change and its mark
// (ChangeMark), which tells that change from another one that took the same id later (a
// source put back from an older backup and written to again hands out the same ids anew).
// The zero FeedPoint is no place: a write given it leaves the copy's position alone.
type FeedPoint struct {
	ID   int64
	Mark string
}

// PointOf returns the feed point of change c.
func PointOf(c Change) FeedPoint { return FeedPoint{ID: c.ID, Mark: ChangeMark(c)} }

// ChangeMark describes change c in one line: its event, record or lease, version, writer
// and time. The same change read again from the same store gives the same mark; a change
// written later under the same id (after a restore) gives another one, since its time at
// least differs.
func ChangeMark(c Change) string {
	what := fmt.Sprintf("%s %s %d v%d", c.Event, c.Kind, c.RecordID, c.Version)
	if c.Group != "" {
		what += fmt.Sprintf(" (%s, fence %d)", c.Group, c.Fence)
	}
	return fmt.Sprintf("%s by %s at %s", what, c.Actor, c.At.UTC().Format(time.RFC3339Nano))
}

// InScope reports whether kind is one of the kinds the copy holds.
func (s *CopyState) InScope(kind Kind) bool { return slices.Contains(s.Kinds, kind) }

// OutboxEntry is one local change waiting to be pushed to the source. Before and After hold
// the editor and shared fields of the record just before and just after the local write,
// so a push knows what changed (counters as deltas, the rest as values) and what the edit
// was made on (the base of a three-way merge).
type OutboxEntry struct {
	Seq         int64 // the order of the local writes
	Op          CopyOp
	Kind        Kind
	ID          int64 // the local id (for a create, a local id the source will replace)
	BaseVersion int64 // the source version the edit was made on (0 for a create)
	Before      Values
	After       Values
	Key         string    // idempotency key, made when the local write happened
	Actor       string    // who made the local write
	At          time.Time // when
}

// Changed returns the fields whose value differs between Before and After, sorted.
func (e *OutboxEntry) Changed() []string {
	var out []string
	for name, v := range e.After {
		if b, ok := e.Before[name]; !ok || !Equal(b, v) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// CopyConflict is a local change the source did not take as it was: fields both sides
// changed differently, a move that would form a cycle, a create whose sku exists, an edit of
// a record gone from the source. The local value stays until it is resolved.
type CopyConflict struct {
	Op     CopyOp
	Kind   Kind
	ID     int64
	Reason string   // why, in words
	Fields []string // the fields that collide (empty when the reason is not a field)
	// Base is what the local edit was made on, Mine the local values, Theirs the source's
	// values at TheirsVersion (nil when the record is not on the source).
	Base, Mine, Theirs Values
	BaseVersion        int64 // the source version the local edit was made on
	TheirsVersion      int64
	Actor              string // who made the local edit
	At                 time.Time
	// LocalVersion is the version the record has in the copy now, which a local write of it
	// (tandem delete --expect-version) names; 0 when the copy does not hold it. Conflicts
	// fills it; QueueConflict ignores it.
	LocalVersion int64
}

// WorkingCopy is a store that is a working copy of another. Every method runs in one local
// transaction, so the outbox, the conflict queue, the base versions and the feed position
// change only together with the records they describe.
type WorkingCopy interface {
	Store
	// CopyState returns the copy's state. ENOTFOUND when the store is not a working copy.
	CopyState(ctx context.Context) (*CopyState, error)
	// StartCopy makes an empty store a working copy of the source s describes (SourceID,
	// Source, Kinds, Subtree, Position, Mark): from then on every local save is also written to
	// the outbox. EINVALID when the store holds records or is a working copy already.
	StartCopy(ctx context.Context, s CopyState) error
	// ApplySource writes records as the source has them (values, version, updated_at,
	// updated_by) and makes them the records' base, without adding to the outbox; records
	// with outbox entries or an open conflict keep their local values (their base is not
	// moved either); a conflict that found its record gone from the source (Theirs nil)
	// takes the record's values as theirs when the source has it again (a restore).
	// Documents outside the copy's subtree are skipped; the subtree's root is written
	// without its parent, which is not in the copy; a document whose parent is not in the
	// copy yet waits (Stale). When at.ID is above the stored position, at becomes the
	// copy's feed position and mark; at the stored position, its mark is kept when the
	// copy has none.
	ApplySource(ctx context.Context, recs []*Record, at FeedPoint) error
	// ApplyGone removes records of kind the source no longer has (deleted there), with
	// their base, without adding to the outbox, and says how many it removed. A record
	// with outbox entries or an open conflict stays: its push meets the delete and becomes
	// a conflict a person settles.
	// A document that still has children in the copy stays too, marked Stale, so that a
	// later sync removes it once they are gone. at moves the copy's feed position as in
	// ApplySource.
	ApplyGone(ctx context.Context, kind Kind, ids []int64, at FeedPoint) (removed int, err error)
	// DropRecord removes a record together with its outbox entries and its conflict: the
	// person accepted that the source deleted it. EINVALID when it has children in the copy.
	DropRecord(ctx context.Context, kind Kind, id int64) error
	// Stale returns the source's records ApplySource could not write yet, because a local
	// record (a create not yet pushed) holds their sku, or a document's parent is not in
	// the copy yet (or a local move would make it a cycle); a sync reads them again.
	Stale(ctx context.Context) (map[Kind][]int64, error)
	// Outbox returns up to limit (0: all) outbox entries, oldest first.
	Outbox(ctx context.Context, limit int) ([]OutboxEntry, error)
	// AckEntry removes entry seq, which is now on the source, where rec is the record as the
	// source's write left it (for a create, the source's new record, which replaces the
	// local one). When the record has no other entries and no conflict, rec becomes its local
	// value and base. rebase, when set, says the entry was applied on exactly its base
	// version: the record's remaining entries made on that version move onto rec's version.
	// For a delete (CopyDelete) rec is nil: the record is gone on both sides, and the copy
	// forgets its base, its stale mark and any conflict an earlier entry met.
	AckEntry(ctx context.Context, seq int64, rec *Record, rebase bool) error
	// AckEntries is AckEntry for several entries, in their order, in one transaction, or
	// in several when a store lets a write that waits go first between two of them (each
	// whole; after a failure the ones before it stay acknowledged).
	AckEntries(ctx context.Context, acks []Ack) error
	// QueueConflict replaces entry seq by conflict c. A record has at most one open
	// conflict: a second one joins it (its fields are added, the first base of each field
	// is kept, mine and theirs are the newest). A save's or a move's conflict that joins a
	// create's leaves it a create's (the source has no such record), with its values
	// added to mine.
	QueueConflict(ctx context.Context, seq int64, c CopyConflict) error
	// Conflicts returns the open conflicts, by kind and id.
	Conflicts(ctx context.Context) ([]CopyConflict, error)
	// ResolveConflict closes the conflict of a record with the values a person chose
	// (every editor and shared field): they become the local values, the source's values at
	// the conflict become the base, and the difference is queued in the outbox, to be
	// pushed version-checked against TheirsVersion. ENOTFOUND when the record has no
	// conflict; EINVALID (GoneFromSource) when the conflict found the record deleted on
	// the source and the source has not restored it since: there is nothing to push the
	// values to (DropRecord accepts the delete); EINVALID for the conflict of a local delete
	// (ResolveDelete answers it).
	ResolveConflict(ctx context.Context, kind Kind, id int64, vals Values) error
	// ResolveDelete closes the conflict of a local delete (Op CopyDelete) the source met
	// with a changed record. del keeps the delete: it is queued again, to be pushed
	// version-checked against TheirsVersion. Otherwise the source's record wins: the
	// delete is dropped and the next sync brings the record back from the source (the copy
	// keeps no system fields of the version the conflict saw). ENOTFOUND when the record
	// has no conflict, EINVALID when its conflict is not a delete's.
	ResolveDelete(ctx context.Context, kind Kind, id int64, del bool) error
	// Repush takes the copy onto its source as the source is now, after the source went
	// back in time (put back from an older backup): recs are every record of the copy's
	// kinds as the source has it, read after at, the source's newest feed point. In one
	// local transaction, every record the copy took from the source, and every local
	// delete, is set against the source's record of its id:
	//   - its outbox entries and conflict are dropped (their versions are the lost
	//     history's), and the source's record becomes its base;
	//   - where the local values differ from the source's, RepushFields decides: fields
	//     whose source value is still the one the copy last took (local edits) are queued
	//     in the outbox, to be pushed as usual; when any other field differs, the record
	//     keeps its local values and becomes a conflict (Reason RepushReason);
	//   - a record the source does not have is a conflict of a create (answering mine
	//     creates it there anew); a local delete of a record the source does not have is
	//     dropped, and one of a record the source changed is a conflict (DeletedHere);
	// then the source's other records come in as ApplySource writes them, and at becomes
	// the copy's position and mark, below the old position too. Records created in the
	// copy keep their entries. It returns how many records were queued and how many became
	// conflicts. ENOTFOUND when the store is not a working copy.
	Repush(ctx context.Context, recs []*Record, at FeedPoint) (queued, conflicts int, err error)
	// SetSource records where the source is found now (a path or a DSN without its
	// password), after a sync found the same store there.
	SetSource(ctx context.Context, source string) error
	// MarkSynced records that a sync reached the source and finished its pull and push at
	// at, whether or not conflicts or lease waits were left.
	MarkSynced(ctx context.Context, at time.Time) error
	// TakeSchema makes next, the source's schema at its version (next.Version()), the
	// copy's own (see workcopy_schema.go): the copy's records change as the source's apply
	// changed the source's (renamed fields keep their values, dropped ones lose them, new
	// ones get their defaults), the outbox and the conflict queue keep their values, a
	// renamed field's under its new name, and a copy of every kind takes the new kinds. It
	// returns the changes from the copy's schema, or nil when the copy's version is next's
	// or newer (nothing changes then). EINVALID for a change no store applies; ENOTFOUND
	// when the store is not a working copy.
	TakeSchema(ctx context.Context, next *Registry) (*SchemaDiff, error)
	// DropEntry removes outbox entry seq, a local change a person gives up (one that no
	// longer fits the schema: Registry.Unfit). When the record has no other local change
	// and its kind is in the schema, the next sync reads it from the source again (Stale),
	// so the copy holds the source's values. ENOTFOUND when there is no such entry.
	DropEntry(ctx context.Context, seq int64) error
}

// Ack is one outbox entry that is now on the source (see WorkingCopy.AckEntry).
type Ack struct {
	Seq    int64
	Record *Record
	Rebase bool
}

// CopyFields returns the fields of kind a working copy writes to its source: the editor and
// shared fields an editor may save. System fields always come from the source, and fields
// written only by a dedicated operation (parent_id) travel as that operation.
func (r *Registry) CopyFields(kind Kind) []*Field {
	var out []*Field
	for _, f := range r.Fields(kind) {
		if f.Writable(RoleEditor) && !f.ReadOnly {
			out = append(out, f)
		}
	}
	return out
}

// ErrSourceBehind is wrapped by the error of a working copy's write of a source's record at a
// version below the one the copy took from it: versions on a source only grow, so the source
// lost writes the copy has seen (it was put back from an older backup).
var ErrSourceBehind = errors.New("the source has a record at a version below the one this copy took from it")

// RepushReason is the reason of a conflict Repush queues for a record whose values differ
// from the source's where the source no longer has what the copy last took from it.
const RepushReason = "the source went back in time (put back from an older backup); the copy's value and the source's differ"

// RepushLostReason is the reason of the create conflict Repush queues for a record the copy
// holds and the source lost when it went back in time (whoever created it).
const RepushLostReason = "not on the source, which went back in time (put back from an older backup)"

// Lost reports whether conflict c is about a record the source lost when it went back in
// time: its create is the way to bring it back there, though the copy may not have made it.
func (c *CopyConflict) Lost() bool {
	return c.Op == CopyCreate && c.Reason == RepushLostReason
}

// RepushFields compares a record of a working copy with the source's record of its id
// after the source went back in time: base is what the copy last took from the source (its
// values before its local edits), mine its values now, theirs the source's. It returns the
// fields (editor and shared fields, and parent_id for a document) where mine differs from
// theirs, split in two: changed, where theirs is still base, so the difference is a local
// edit, to be pushed as usual; and conflict, where theirs is not base. Since the source's
// history was cut, a value that differs there may be a write the source lost (the copy's
// is right) or one made after the restore (the source's is): a person decides, nothing
// is taken silently.
func (r *Registry) RepushFields(kind Kind, base, mine, theirs Values) (changed, conflict []string) {
	names := []string{}
	for _, f := range r.CopyFields(kind) {
		names = append(names, f.Name)
	}
	if r.Tree(kind) {
		names = append(names, ParentField)
	}
	for _, name := range names {
		if Equal(mine[name], theirs[name]) {
			continue
		}
		if b, ok := base[name]; ok && Equal(b, theirs[name]) {
			changed = append(changed, name)
		} else {
			conflict = append(conflict, name)
		}
	}
	return changed, conflict
}

// ParentField is the field that holds a tree kind's parent (a ref to the same kind): the
// field a move writes.
const ParentField = "parent_id"

// OriginKey is the prefix of the idempotency keys of writes a sync makes on the source, so
// that the source's key table tells which writes came from a working copy.
const OriginKey = "wc:"

// ResolveKey is the prefix of the idempotency keys of the outbox entries a conflict's
// resolution queues (it starts with OriginKey): their push names them in the source's
// history as resolved, at the time of the resolution, rather than as the offline edit.
const ResolveKey = OriginKey + "resolve:"

// Gone reports whether conflict c is about a record the source deleted (and has not
// restored since): there is no version of the source to resolve against.
func (c *CopyConflict) Gone() bool {
	return c.Theirs == nil && c.Op != CopyCreate && c.Op != CopyDelete
}

// GoneFromSource is the refusal to resolve a conflict whose record the source deleted: the
// local edit stays in the copy until the person restores the record on the source or
// accepts the delete.
func GoneFromSource(kind Kind, id int64) error {
	return Errorf(EINVALID, "%s %d was deleted on the source; your edit stays in the copy. To keep it, restore "+
		"the record on the source (tandem restore %s %d there) and sync: the conflict then resolves against the restored "+
		"record. To accept the delete, resolve every field with theirs: the local record and its edit go", kind, id, kind, id)
}

// CopyLoader is what a working copy may offer, besides ApplySource, to take a whole clone
// fast; sync's Clone uses it when the copy has it (a type assertion). WorkingCopy does not
// require it.
type CopyLoader interface {
	// LoadCopy writes the records of kind read hands over into a working copy that StartCopy
	// has just made and that holds none of them, exactly as ApplySource would write them
	// (values, version, updated_at, updated_by, and each as its record's base), all in one
	// local transaction: the copy holds every record of kind or none. read calls put with each
	// record, then returns; put is done with the record when it returns, so read may reuse
	// it (and its Fields) for the next one, as StreamRecords does. When put returns an
	// error, read must stop and return it (wrapped or not). The copy's indexes are built
	// once, after the rows are in; its search index may be left to be built later,
	// provided that searches find the same records meanwhile. An error of read ends the
	// load, nothing written, and is returned as it is.
	// EINVALID when kind is a tree (each record needs its parent first: ApplySource writes
	// them), when the copy does not copy kind, or when it holds records of kind, outbox
	// entries or conflicts.
	LoadCopy(ctx context.Context, kind Kind, read func(put func(*Record) error) error) error
}

// CheckCopyCreate decides whether a working copy in state s may create a record of kind,
// with the explicit id given (0: the copy picks a local id). A kind the copy did not clone is
// refused: its records live on the source, which the copy does not show, so a create here
// would duplicate one there at the next sync. An explicit id is refused too: ids below the
// copy's local range are the source's, and a record the copy does not hold under such an id
// may well exist there (a create would make a second one). EINVALID, saying what to do.
func CheckCopyCreate(s *CopyState, kind Kind, id int64) error {
	if !s.InScope(kind) {
		return Errorf(EINVALID, "this working copy holds no %ss (it was cloned with only %s): create or change %ss on the source, "+
			"or clone the kind too", kind, joinKinds(s.Kinds), kind).With(WayCloneKind)
	}
	if id != 0 {
		return Errorf(EINVALID, "%s %d is not in this working copy, and its ids are the source's: a create under that id "+
			"would become a second record on the source. Leave the id out to create a new record, or change %s %d on the source", kind, id, kind, id)
	}
	return nil
}

// CopyOf returns the state of st when st is a working copy, nil when it is not one (a store
// that cannot be one, or could be and is not).
func CopyOf(ctx context.Context, st Store) (*CopyState, error) {
	wc, ok := st.(WorkingCopy)
	if !ok {
		return nil, nil
	}
	s, err := wc.CopyState(ctx)
	if ErrorCode(err) == ENOTFOUND {
		return nil, nil
	}
	return s, err
}

// CheckCopyWriter decides whether a working copy in state s takes writes from actor: an
// editor's, never a system's. A copy's outbox keeps values, not roles, and a sync pushes each
// entry as its author's editor save, with a person's conflict queue behind it: a system
// write made here would reach the source as an editor's history version rather than the
// system's operation-log entry, and a system-owned field would not reach it at all (system
// fields come from the source). Workers and other system writers also work under a lease on
// the record's system group, which a copy cannot take. So the way out is the source.
// EFORBIDDEN, naming it; nil for an editor.
func CheckCopyWriter(s *CopyState, actor Actor) error {
	if actor.Role == RoleEditor {
		return nil
	}
	return Errorf(EFORBIDDEN, "a working copy takes no %s writes: they would reach the source as an editor's edit, "+
		"not as the system's operation-log entry, and system fields come from the source. Run it against the source, %s",
		actor.Role, s.Source).With(WayOnSource)
}

// CheckCopySave is CheckCopyWriter for the save u of kind, in the store's save path: its
// refusal names what u writes. A field no editor may write (a system field such as
// checksum) is one a copy never writes; a shared field (stock) written as system is
// refused because of its writer. EFORBIDDEN; nil for an editor, whose ownership
// CheckUpdate decides.
func (r *Registry) CheckCopySave(s *CopyState, kind Kind, actor Actor, u Update) error {
	if actor.Role == RoleEditor {
		return nil
	}
	var owned, shared []string
	for _, name := range u.FieldNames() {
		if f, err := r.Field(kind, name); err == nil && !f.Writable(RoleEditor) {
			owned = append(owned, string(kind)+"."+name)
		} else {
			shared = append(shared, string(kind)+"."+name)
		}
	}
	if len(owned) > 0 {
		return Errorf(EFORBIDDEN, "%s: a working copy writes only editor and shared fields; system fields come from the "+
			"source, and a sync never sends them there. Run it against the source, %s; nothing was written",
			strings.Join(owned, ", "), s.Source).With(WayOnSource)
	}
	return Errorf(EFORBIDDEN, "%s written as %s: a working copy takes no %s writes, since a sync would push this as an "+
		"editor's edit (a history version on the source), not as the system's operation-log entry. Run it against the "+
		"source, %s, or here as an editor to have it pushed as your edit; nothing was written",
		strings.Join(shared, ", "), actor.Role, actor.Role, s.Source).With(WayOnSource, WayAsEditor)
}

func joinKinds(ks []Kind) string {
	out := ""
	for i, k := range ks {
		if i > 0 {
			out += ","
		}
		out += string(k)
	}
	return out
}
