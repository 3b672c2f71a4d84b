package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Deleting and restoring records, decided here, once, for every store. A store removes the
// record's row (so its sku and its place in the tree are free again, and no query needs to
// learn about deleted rows) and keeps what restore needs in history: a tombstone, a history
// version of event EventDeleted whose snapshot holds every field as the delete found it. A
// restore reads the record's newest history version, which must be that tombstone, and
// inserts the record again, under the same id, as the next version.
//
// Who may delete: a delete removes every field, the editors' ones included, and nothing a
// worker does needs it, so deleting and restoring are an editor's acts; a system actor is
// refused (EFORBIDDEN) with a message saying so. A delete writes every lease group of the
// record: a live lease on any of them blocks it unless its token is presented (ELEASE), as
// for a save. A delete and a restore always keep their history versions, also inside
// WithoutHistory: without the tombstone there would be nothing to restore from.

// Delete asks for a record to be deleted.
type Delete struct {
	// ExpectVersion is the version the deleter saw: the delete happens only while the record
	// is still at it (else a *ConflictError, like a save). Required.
	ExpectVersion int64
	// LeaseToken presents a lease on the record (of any of its groups).
	LeaseToken string
	// Subtree deletes a document together with every document below it. Without it a
	// document with children is refused (EINVALID), so nothing is deleted by surprise.
	Subtree bool
	// IdempotencyKey, when set, makes the delete apply at most once: a second delete with
	// the same key and request is answered with the first result (Replayed).
	IdempotencyKey string
}

// Tombstone names one deleted record and the version its delete wrote.
type Tombstone struct {
	Kind    Kind
	ID      int64
	Version int64 // the tombstone's version: the deleted record's version + 1
	Title   string
}

// DeleteResult is what a delete did.
type DeleteResult struct {
	// Deleted lists the records deleted: the one asked for first, then (Subtree) the
	// documents below it, deepest first, the order the rows were removed in.
	Deleted []Tombstone
	// Replayed is set when the idempotency key had already been applied: nothing was
	// deleted this time, and Deleted names only the record asked for, with the first
	// delete's version.
	Replayed bool
	// AppliedBy and AppliedAt, set on a replay, say who applied the key and when (the
	// key's owner, the actor's name, and its time): keys are shared by everyone writing
	// to the store, so the key may be someone else's.
	AppliedBy string
	AppliedAt time.Time
}

// Restore asks for a deleted record to be brought back.
type Restore struct {
	// ParentLeaseToken presents the lease on the parent document's tree group, needed to
	// restore a document under a leased one (as for a create).
	ParentLeaseToken string
}

// RestoreResult is what a restore did.
type RestoreResult struct {
	Record *Record // the record as restored, at its new version
	// Note says what the restore could not bring back as it was (a parent that is gone),
	// "" when nothing.
	Note string
}

// Events of deletes and restores, in the change log and in history (Version.Event).
const (
	EventDeleted  Event = "deleted"
	EventRestored Event = "restored"
)

// IsRecordEvent reports whether e is a write of a record (as opposed to a lease event).
func IsRecordEvent(e Event) bool {
	switch e {
	case EventCreated, EventSaved, EventMoved, EventDeleted, EventRestored, EventPulled:
		return true
	}
	return false
}

// RecordEvents lists the events IsRecordEvent accepts, for the stores' SQL.
var RecordEvents = []Event{EventCreated, EventSaved, EventMoved, EventDeleted, EventRestored}

// deleteWhat names a delete of a kind in messages.
func deleteWhat(kind Kind) string { return fmt.Sprintf("the delete of a %s", kind) }

// CheckDelete validates a delete before any SQL runs: a known kind, an editor who may write
// it, the version it was made from, a well-formed key.
func (r *Registry) CheckDelete(kind Kind, actor Actor, d Delete) error {
	if _, ok := r.kinds[kind]; !ok {
		return r.unknownKind(kind)
	}
	if err := CheckDeleter(kind, actor); err != nil {
		return err
	}
	if err := actor.CheckKind(deleteWhat(kind), kind); err != nil {
		return err
	}
	if d.ExpectVersion <= 0 {
		return Errorf(EINVALID, "a delete needs the version it was decided on")
	}
	if d.Subtree && !r.Tree(kind) {
		return Errorf(EINVALID, "%s records are not a tree: there is no subtree to delete", kind)
	}
	if d.IdempotencyKey != "" {
		return CheckKey(ScopeAPI, d.IdempotencyKey)
	}
	return nil
}

// CheckRestore validates a restore of kind before any SQL runs: a known kind, and the actor
// in ctx, returned, an editor who may write it.
func (r *Registry) CheckRestore(ctx context.Context, kind Kind) (Actor, error) {
	actor, err := WriterFrom(ctx, fmt.Sprintf("the restore of a %s", kind))
	if err != nil {
		return Actor{}, err
	}
	if _, ok := r.kinds[kind]; !ok {
		return Actor{}, r.unknownKind(kind)
	}
	if err := actor.CheckKind(fmt.Sprintf("the restore of a %s", kind), kind); err != nil {
		return Actor{}, err
	}
	return actor, CheckDeleter(kind, actor)
}

// CheckDeleter refuses a delete or restore by anyone but an editor (see the rule above).
func CheckDeleter(kind Kind, actor Actor) error {
	if actor.Role != RoleEditor {
		return Errorf(EFORBIDDEN, "deleting or restoring a %s is an editor's act, not %s's (role %s): run it as an editor",
			kind, actor.Name, actor.Role).With(WayAsEditor)
	}
	return nil
}

// DeleteGroups returns the lease groups a delete of a kind writes: all of them.
func (r *Registry) DeleteGroups(kind Kind) []string { return r.Groups(kind) }

// PlanDelete decides a delete of cur, the record as the delete's transaction read it, with
// children the ids of the records directly below it (none for a kind that is not a tree).
// stale reports a version other than the expected one: the store answers with a
// *ConflictError. EINVALID for a record with children when d.Subtree is not set; the
// message names the children by the record's kind ("area 1 has 2 child area(s)").
func PlanDelete(cur *Record, d Delete, children []int64) (stale bool, err error) {
	if cur.Version != d.ExpectVersion {
		return true, nil
	}
	if len(children) > 0 && !d.Subtree {
		ids := make([]string, 0, 3)
		for _, c := range children[:min(3, len(children))] {
			ids = append(ids, fmt.Sprint(c))
		}
		if len(children) > 3 {
			ids = append(ids, "…")
		}
		return false, Errorf(EINVALID, "%s %d has %d child %s(s) (%s): delete them first, or delete the subtree with it",
			cur.Kind, cur.ID, len(children), cur.Kind, strings.Join(ids, ", ")).With(WaySubtree)
	}
	return false, nil
}

// DeleteRequestHash is the digest stored with a delete's idempotency key.
func DeleteRequestHash(kind Kind, id int64, d Delete) string {
	b, _ := json.Marshal(struct {
		Op      string `json:"op"`
		Kind    Kind   `json:"k"`
		ID      int64  `json:"i"`
		Base    int64  `json:"b"`
		Subtree bool   `json:"t"`
	}{"delete", kind, id, d.ExpectVersion, d.Subtree})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// DeleteKeyResult is what a keyed delete stores with its key.
func DeleteKeyResult(res *DeleteResult) KeyResult {
	t := res.Deleted[0]
	return KeyResult{Kind: t.Kind, ID: t.ID, Version: t.Version}
}

// ReplayDelete answers a retried delete whose key k completed.
func (k KeyResult) ReplayDelete() *DeleteResult {
	return &DeleteResult{Replayed: true, Deleted: []Tombstone{{Kind: k.Kind, ID: k.ID, Version: k.Version}},
		AppliedBy: k.By, AppliedAt: k.At}
}

// NewTombstone returns the history row a delete of cur writes: a snapshot of every field as
// the delete found it, at the next version, with event EventDeleted. Tombstones are always
// snapshots, so a restore reads one row.
func (r *Registry) NewTombstone(cur *Record, actor string, at time.Time) (HistoryRow, error) {
	snap, err := r.EncodeSnapshot(cur.Kind, cur.Fields)
	if err != nil {
		return HistoryRow{}, err
	}
	return HistoryRow{Version: cur.Version + 1, Actor: actor, At: at, Fields: []string{}, Snapshot: snap, Event: EventDeleted}, nil
}

// NewRestoredRow returns the history row of a restored record rec: a snapshot (the chain
// before it ended with the tombstone), event EventRestored.
func (r *Registry) NewRestoredRow(rec *Record, actor string, at time.Time) (HistoryRow, error) {
	snap, err := r.EncodeSnapshot(rec.Kind, rec.Fields)
	if err != nil {
		return HistoryRow{}, err
	}
	return HistoryRow{Version: rec.Version, Actor: actor, At: at, Fields: r.FieldNames(rec.Kind), Snapshot: snap, Event: EventRestored}, nil
}

// FieldNames returns the names of a kind's fields, in registry order.
func (r *Registry) FieldNames(kind Kind) []string {
	out := make([]string, 0, len(r.kinds[kind]))
	for _, f := range r.kinds[kind] {
		out = append(out, f.Name)
	}
	return out
}

// RestorePlan is what a restore writes.
type RestorePlan struct {
	Version int64             // the restored record's version: the tombstone's + 1
	Values  Values            // every field, as the tombstone kept them (parent_id cleared when gone)
	Parent  int64             // the parent document it goes under, 0 for none (or the root)
	Unique  map[string]string // the values of the unique fields to check, by field
	Note    string            // see RestoreResult.Note
	// Extra holds the columns a store writes beside the fields (ExtraColumns), as for a create.
	Extra []Column
}

// PlanRestore decides a restore of kind id by actor from newest, the record's newest history
// row (nil when it has none), given whether the record exists now and, for a document,
// whether the parent the tombstone names still does (parentExists is asked only then).
// ENOTFOUND when there is nothing to restore from; EINVALID when the record exists or its
// newest history version is not a tombstone (it was restored and saved since); EFORBIDDEN
// when actor's permissions do not let them restore another's delete (CheckRestorer), or a
// record at the root of a kind they may write only in subtrees. A restore under a parent
// is checked by CheckParent.
func (r *Registry) PlanRestore(kind Kind, id int64, actor Actor, exists bool, newest *HistoryRow, parentExists func(int64) (bool, error)) (*RestorePlan, error) {
	if _, ok := r.kinds[kind]; !ok {
		return nil, r.unknownKind(kind)
	}
	if exists {
		return nil, Errorf(EINVALID, "%s %d is not deleted: there is nothing to restore", kind, id)
	}
	if newest == nil || newest.Event != EventDeleted || !newest.IsSnapshot() {
		return nil, Errorf(ENOTFOUND, "%s %d not found, and history keeps no delete of it to restore", kind, id)
	}
	if err := CheckRestorer(kind, id, actor, newest.Actor); err != nil {
		return nil, err
	}
	vals, err := r.DecodeSnapshot(kind, newest.Snapshot)
	if err != nil {
		return nil, Errorf(EINTERNAL, "tombstone of %s %d: %v", kind, id, err)
	}
	p := &RestorePlan{Version: newest.Version + 1, Values: vals}
	if p.Unique, err = r.uniqueValues(kind, vals); err != nil {
		return nil, err
	}
	if parent, ok := vals[ParentField].(int64); ok && r.Tree(kind) {
		ok, err := parentExists(parent)
		if err != nil {
			return nil, err
		}
		if ok {
			p.Parent = parent
		} else {
			p.Values[ParentField] = nil
			p.Note = fmt.Sprintf("its parent, %s %d, no longer exists: restored at the root (restore %s %d first to put it back under it, then move it)", kind, parent, kind, parent)
		}
	}
	if p.Parent == 0 && actor.LimitsPlace(kind) && !actor.Perms.AllowsPath(kind, []int64{id}) {
		return nil, actor.forbidden(fmt.Sprintf("the restore of %s %d at the root", kind, id))
	}
	p.Extra = r.ExtraColumns(kind, p.Values)
	return p, nil
}

// CheckRestorer refuses (EFORBIDDEN) a restore of kind id by actor of a delete made by
// deletedBy (its tombstone's history name) unless actor made it or is an admin.
func CheckRestorer(kind Kind, id int64, actor Actor, deletedBy string) error {
	if deletedBy == actor.Name || strings.HasPrefix(deletedBy, actor.Name+" (") {
		return nil
	}
	return actor.CheckAdmin(fmt.Sprintf("the restore of %s %d, deleted by %s", kind, id, Quote(deletedBy)))
}

// RestoredRecord returns the record a restore plan inserts.
func (p *RestorePlan) RestoredRecord(kind Kind, id int64, actor string, at time.Time) *Record {
	return &Record{Kind: kind, ID: id, Version: p.Version, UpdatedBy: actor, UpdatedAt: at, Fields: p.Values.Clone()}
}

// DeleteOrder returns the ids a delete removes, in the order it removes them: for a subtree,
// the descendants deepest first (children before their parents, as the parent_id foreign key
// needs), then id itself. tree maps each document below id to its parent.
func DeleteOrder(id int64, tree map[int64]int64) []int64 {
	depth := func(d int64) int {
		n := 0
		for d != id && n <= len(tree) {
			d = tree[d]
			n++
		}
		return n
	}
	out := make([]int64, 0, len(tree)+1)
	for d := range tree {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b int64) int {
		if da, db := depth(a), depth(b); da != db {
			return db - da
		}
		return int(a - b)
	})
	return append(out, id)
}

// DeleteSteps are the reads and writes a store's delete offers RunDelete, each inside the
// delete's one transaction (or under the in-memory store's lock), for records of the kind
// being deleted.
type DeleteSteps interface {
	// Find reads record id (ENOTFOUND when there is none), locked against other writers
	// where the store needs it.
	Find(id int64) (*Record, error)
	// CheckLeases refuses (ELEASE) a write of groups of record id while a live lease on one
	// of them is held by another token than token.
	CheckLeases(id int64, groups []string, token string) error
	// Ancestors reads where the record deleted sits, for the actor's permissions.
	PathReader
	// Descendants maps every document below id to its parent; asked only of documents.
	Descendants(id int64) (map[int64]int64, error)
	// Referrers returns up to limit records (kind and id, ordered by kind then id) whose field
	// ref holds id, leaving out those in skip.
	Referrers(ref FieldOf, id int64, skip []int64, limit int) ([]int64, error)
	// Conflict returns the *ConflictError of a delete of id decided on version base.
	Conflict(id, base int64) error
	// Remove writes rec's tombstone tomb to history, removes rec's row and writes its
	// EventDeleted change.
	Remove(rec *Record, tomb HistoryRow) error
}

// RunDelete deletes kind id as d asks, after the store answered a replayed key: it reads
// the record, checks the leases on every group, decides the delete (PlanDelete; a stale
// version is a *ConflictError), checks the leases of the documents below it, then removes
// the records in DeleteOrder, each with its tombstone (NewTombstone, by actor at at). Every
// store calls it, so they check, refuse and remove in the same order. EFORBIDDEN for a
// record outside the subtrees actor may write.
func (r *Registry) RunDelete(kind Kind, id int64, d Delete, actor Actor, at time.Time, s DeleteSteps) (*DeleteResult, error) {
	cur, err := s.Find(id)
	if err != nil {
		return nil, err
	}
	if err := r.checkFresh(kind, id, s, func(n *Registry) error { return r.checkRefsIn(n, kind) }); err != nil {
		return nil, err
	}
	if err := actor.CheckPlace(fmt.Sprintf("the delete of %s %d", kind, id), kind, id, s); err != nil {
		return nil, err
	}
	groups := r.DeleteGroups(kind)
	if err := s.CheckLeases(id, groups, d.LeaseToken); err != nil {
		return nil, err
	}
	below := map[int64]int64{}
	if r.Tree(kind) {
		if below, err = s.Descendants(id); err != nil {
			return nil, err
		}
	}
	var children []int64
	for c, p := range below {
		if p == id {
			children = append(children, c)
		}
	}
	slices.Sort(children)
	stale, err := PlanDelete(cur, d, children)
	if err != nil {
		return nil, err
	}
	if stale {
		return nil, s.Conflict(id, d.ExpectVersion)
	}
	order := DeleteOrder(id, below)
	for _, c := range order[:len(order)-1] {
		if err := s.CheckLeases(c, groups, ""); err != nil {
			return nil, err
		}
	}
	if err := r.checkReferrers(kind, order, s); err != nil {
		return nil, err
	}
	res := &DeleteResult{Deleted: make([]Tombstone, 1, len(order))}
	for _, did := range order {
		rec := cur
		if did != id {
			if rec, err = s.Find(did); err != nil {
				return nil, err
			}
		}
		tomb, err := r.NewTombstone(rec, actor.HistoryName(), at)
		if err != nil {
			return nil, err
		}
		if err := s.Remove(rec, tomb); err != nil {
			return nil, err
		}
		ts := Tombstone{Kind: kind, ID: did, Version: tomb.Version, Title: r.TitleOf(rec)}
		if did == id {
			res.Deleted[0] = ts // the one asked for first, though it is removed last
		} else {
			res.Deleted = append(res.Deleted, ts)
		}
	}
	return res, nil
}

// maxReferrersNamed bounds the referrers a refused delete names.
const maxReferrersNamed = 5

// checkReferrers refuses (EINVALID) to delete the records ids of kind while a record that is
// not deleted with them refers to one of them, naming the first few referrers.
func (r *Registry) checkReferrers(kind Kind, ids []int64, s DeleteSteps) error {
	refs := r.Refs(kind)
	if len(refs) == 0 {
		return nil
	}
	for _, id := range ids {
		var named []string
		for _, ref := range refs {
			skip := []int64(nil)
			if ref.Kind == kind {
				skip = ids
			}
			got, err := s.Referrers(ref, id, skip, maxReferrersNamed+1-len(named))
			if err != nil {
				return err
			}
			for _, rid := range got {
				named = append(named, fmt.Sprintf("%s %d (%s)", ref.Kind, rid, ref.Field.Name))
			}
			if len(named) > maxReferrersNamed {
				break
			}
		}
		if len(named) == 0 {
			continue
		}
		list := strings.Join(named[:min(len(named), maxReferrersNamed)], ", ")
		if len(named) > maxReferrersNamed {
			list += " and more"
		}
		return Errorf(EINVALID, "%s %d is referred to by %s: delete those first or point them elsewhere", kind, id, list)
	}
	return nil
}
