package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxDepth is the deepest a document may sit in the tree: a root document has depth 1.
const MaxDepth = 8

// The tree rules below are decided here, once, for every store: each store reads the paths
// with its own recursive query (on the locked tree) and hands them over, so a move is refused
// with the same words whichever database runs it.

// CheckMoveCycle decides whether moving document id under parent would make a cycle. up is
// parent and its ancestors, nearest first (parent, its parent, ..., a root); empty when the
// parent does not exist (ENOTFOUND). A cycle is EINVALID naming the path.
func CheckMoveCycle(id, parent int64, up []int64) error {
	if len(up) == 0 {
		return Errorf(ENOTFOUND, "parent %d not found", parent)
	}
	if i := slices.Index(up, id); i >= 0 {
		path := up[:i+1]
		if parent == id {
			path = []int64{id, id}
		}
		return Errorf(EINVALID, "moving %d under %d would create a cycle: %s", id, parent, treePath(path))
	}
	return nil
}

// CheckMoveDepth decides whether moving document id under parent keeps every document within
// MaxDepth. up is as for CheckMoveCycle; down is the longest path from id down to a leaf,
// starting with id. Too deep is EINVALID naming the path.
func CheckMoveDepth(id, parent int64, up, down []int64) error {
	if depth := len(up) + len(down); depth > MaxDepth {
		path := slices.Clone(up)
		slices.Reverse(path)
		path = append(path, down...)
		return Errorf(EINVALID, "moving %d under %d would be %d levels deep (max %d): %s",
			id, parent, depth, MaxDepth, treePath(path))
	}
	return nil
}

// CheckNewChild decides whether a new record of a tree kind may be created under parent; up is as for
// CheckMoveCycle.
func CheckNewChild(parent int64, up []int64) error {
	if len(up) == 0 {
		return Errorf(ENOTFOUND, "parent %d not found", parent)
	}
	if depth := len(up) + 1; depth > MaxDepth {
		path := slices.Clone(up)
		slices.Reverse(path)
		return Errorf(EINVALID, "a record under %d would be %d levels deep (max %d): %s → new",
			parent, depth, MaxDepth, treePath(path))
	}
	return nil
}

// MoveChangesNothing reports whether moving doc under parent (nil: the root) leaves it where
// it is: such a move writes nothing.
func MoveChangesNothing(doc *Record, parent *int64) bool {
	cur, ok := doc.Fields["parent_id"].(int64)
	if parent == nil {
		return !ok
	}
	return ok && cur == *parent
}

// CheckMove validates a move before any store touches it.
func (m Move) Check() error {
	if m.Parent == nil && m.ParentLeaseToken != "" {
		return Errorf(EINVALID, "a move to the root has no parent whose lease could be presented")
	}
	if m.Parent != nil && *m.Parent <= 0 {
		return Errorf(EINVALID, "%d is not a document id", *m.Parent)
	}
	return nil
}

func treePath(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, " → ")
}

// MovePlan is what a move needs before its transaction, decided by Registry.PlanMove.
type MovePlan struct {
	Actor Actor
	Kind  Kind   // the tree kind of the record moved
	Field string // the field a move writes (parent_id)
	Group string // the tree group whose leases a move checks
	Keep  bool   // the move keeps history (KeepsHistory)
}

// PlanMove checks a move for the actor in ctx before any store touches it: the move itself
// (Move.Check) and the actor's right to write parent_id (EFORBIDDEN otherwise).
func (r *Registry) PlanMove(ctx context.Context, kind Kind, m Move) (*MovePlan, error) {
	actor, err := WriterFrom(ctx, fmt.Sprintf("the move of a %s", kind))
	if err != nil {
		return nil, err
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	if !r.Has(kind) {
		return nil, r.unknownKind(kind)
	}
	if !r.Tree(kind) {
		return nil, Errorf(EINVALID, "%s records are not a tree: there is no parent to move them under", kind)
	}
	f, err := r.Field(kind, ParentField)
	if err != nil {
		return nil, err
	}
	if !f.Writable(actor.Role) {
		return nil, &OwnershipError{Kind: kind, Field: f.Name, Owner: f.Owner, Role: actor.Role}
	}
	if err := actor.CheckKind(fmt.Sprintf("the move of a %s", kind), kind); err != nil {
		return nil, err
	}
	return &MovePlan{Actor: actor, Kind: kind, Field: f.Name, Group: r.TreeGroup(kind), Keep: KeepsHistory(ctx, actor)}, nil
}

// LeaseCheck is one lease check of a write: the document whose tree-group lease is checked
// and the token presented for it.
type LeaseCheck struct {
	RecordID int64
	Token    string
}

// LeaseChecks returns the lease checks a move of document id makes, in order: the moved
// document's tree group with m.LeaseToken, then the new parent's with m.ParentLeaseToken.
func (m Move) LeaseChecks(id int64) []LeaseCheck {
	out := []LeaseCheck{{RecordID: id, Token: m.LeaseToken}}
	if m.Parent != nil {
		out = append(out, LeaseCheck{RecordID: *m.Parent, Token: m.ParentLeaseToken})
	}
	return out
}

// NewParent returns the parent_id a move writes: the new parent, or nil for the root.
func (m Move) NewParent() any {
	if m.Parent == nil {
		return nil
	}
	return *m.Parent
}

// ParentSteps are the checks of a write that puts a new document under a parent (a create,
// a restore), inside the write's transaction.
type ParentSteps interface {
	// LockTree takes the store's tree lock until the transaction ends, so that no move or
	// create changes the tree between the checks and the insert; nothing where the store's
	// writer lock already serializes every write.
	LockTree() error
	// CheckNewChild refuses a new document under parent: ENOTFOUND for a missing parent,
	// EINVALID when it is at the deepest level already (CheckNewChild).
	CheckNewChild(parent int64) error
	// CheckLeases refuses (ELEASE) a write of groups of document id while a live lease on
	// one of them is held by another token than token.
	CheckLeases(id int64, groups []string, token string) error
	// Ancestors reads where the parent sits, for the actor's permissions.
	PathReader
}

// CheckParent checks that a new document may go under parent, token being the lease token
// presented for it: it takes the tree lock, checks the parent exists and is not at the
// deepest level, that actor may write below it (CheckPlace), then checks the lease on the
// parent's tree group (under the lock, so no move puts the parent deeper in between; a
// depth that refuses the write is said before a lease whose end would not let it through).
// Creates and restores call it.
func (r *Registry) CheckParent(s ParentSteps, actor Actor, kind Kind, parent int64, token string) error {
	if err := s.LockTree(); err != nil {
		return err
	}
	if err := s.CheckNewChild(parent); err != nil {
		return err
	}
	if err := actor.CheckPlace(fmt.Sprintf("a new %s under %s %d", kind, kind, parent), kind, parent, s); err != nil {
		return err
	}
	return s.CheckLeases(parent, []string{r.TreeGroup(kind)}, token)
}

// MoveSteps are the reads and writes a store's move offers RunMove, each inside the move's
// one transaction (or under the in-memory store's lock), on documents.
type MoveSteps interface {
	// LockTree takes the store's tree lock until the transaction ends (see
	// ParentSteps.LockTree).
	LockTree() error
	// Find reads document id (ENOTFOUND when there is none), locked against other writers
	// where the store needs it.
	Find(id int64) (*Record, error)
	// CheckLeases refuses (ELEASE) a write of groups of document id while a live lease on
	// one of them is held by another token than token.
	CheckLeases(id int64, groups []string, token string) error
	// Ancestors reads where the moved record and its new parent sit, for the actor's
	// permissions.
	PathReader
	// CheckMove refuses moving id under parent: ENOTFOUND for a missing parent, EINVALID
	// for a cycle or a tree deeper than MaxDepth (CheckMoveCycle, CheckMoveDepth).
	CheckMove(id, parent int64) error
	// Write sets document id's parent_id to parent (nil: the root) at the next version,
	// with its history version (p.Keep) and its EventMoved change, and returns it.
	Write(p *MovePlan, id int64, parent any) (*Record, error)
}

// checkMovePlaces refuses (EFORBIDDEN) a move of cur as m asks unless p's actor may write
// both where it is (below its old parent) and where it goes (below the new parent).
func checkMovePlaces(p *MovePlan, cur *Record, m Move, s PathReader) error {
	what := fmt.Sprintf("the move of %s %d", p.Kind, cur.ID)
	if !p.Actor.LimitsPlace(p.Kind) {
		return p.Actor.CheckKind(what, p.Kind)
	}
	old, _ := cur.Fields[ParentField].(int64)
	if err := p.Actor.CheckPlace(what+" out of where it is", p.Kind, old, s); err != nil {
		return err
	}
	var to int64
	if m.Parent != nil {
		to = *m.Parent
	}
	return p.Actor.CheckPlace(what+" to where it would go", p.Kind, to, s)
}

// RunMove moves document id as m asks, p being the plan PlanMove made: under the tree lock,
// it reads the document, checks the actor may write where it is and where it goes
// (checkMovePlaces), checks the leases (m.LeaseChecks), writes nothing when the document is
// there already (Unchanged), else checks for a cycle and the depth and writes the move.
// Every store calls it, so they check and refuse in the same order.
func (r *Registry) RunMove(id int64, m Move, p *MovePlan, s MoveSteps) (*UpdateResult, error) {
	if err := s.LockTree(); err != nil {
		return nil, err
	}
	cur, err := s.Find(id)
	if err != nil {
		return nil, err
	}
	if err := r.checkFresh(p.Kind, id, s, nil); err != nil {
		return nil, err
	}
	if err := checkMovePlaces(p, cur, m, s); err != nil {
		return nil, err
	}
	for _, c := range m.LeaseChecks(id) {
		if err := s.CheckLeases(c.RecordID, []string{p.Group}, c.Token); err != nil {
			return nil, err
		}
	}
	if MoveChangesNothing(cur, m.Parent) {
		return Unchanged(cur), nil
	}
	if m.Parent != nil {
		if err := s.CheckMove(id, *m.Parent); err != nil {
			return nil, err
		}
	}
	rec, err := s.Write(p, id, m.NewParent())
	if err != nil {
		return nil, err
	}
	return &UpdateResult{Record: rec, Version: rec.Version}, nil
}
