package store

import (
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
		return Errorf(ENOTFOUND, "parent document %d not found", parent)
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

// CheckNewChild decides whether a new document may be created under parent; up is as for
// CheckMoveCycle.
func CheckNewChild(parent int64, up []int64) error {
	if len(up) == 0 {
		return Errorf(ENOTFOUND, "parent document %d not found", parent)
	}
	if depth := len(up) + 1; depth > MaxDepth {
		path := slices.Clone(up)
		slices.Reverse(path)
		return Errorf(EINVALID, "a document under %d would be %d levels deep (max %d): %s → new",
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
