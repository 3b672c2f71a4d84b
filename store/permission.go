package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Who may write what, decided here, once, for every store: each write sequence (RunUpdate,
// RunCreate, RunMove, RunDelete, a restore's plan and parent check, a lease, a schema
// change) asks the actor's permissions before it writes, reading a tree kind's paths
// through the store's PathReader inside the write's transaction, so a record moved out of a
// subtree between a check and a write cannot be written.

// Access is how much a person may write: read only (viewer), records (editor), or also the
// schema and others' deletes (admin).
type Access string

// The accesses a permission may give.
const (
	AccessViewer Access = "viewer"
	AccessEditor Access = "editor"
	AccessAdmin  Access = "admin"
)

// ParseAccess returns the access named s; EINVALID naming the three otherwise.
func ParseAccess(s string) (Access, error) {
	switch a := Access(s); a {
	case AccessViewer, AccessEditor, AccessAdmin:
		return a, nil
	}
	return "", Errorf(EINVALID, "unknown role %s (want viewer, editor or admin)", Quote(s))
}

// Permissions are what an actor may write. An actor without them (Actor.Perms nil: a
// local user, a program) may write everything its Role allows, as always.
type Permissions struct {
	Access Access
	// Kinds, when not empty, are the only kinds the actor may write (with those Subtrees
	// names).
	Kinds []Kind
	// Subtrees limit tree kinds to the records below roots: a kind named here may be
	// written only at its root records given and the records below them (when Kinds and
	// Subtrees are both empty, every kind may be written anywhere).
	Subtrees map[Kind][]int64
}

// Limited reports whether p limits which kinds may be written.
func (p *Permissions) Limited() bool {
	return p != nil && (len(p.Kinds) > 0 || len(p.Subtrees) > 0)
}

// AllowsKind reports whether p lets records of kind be written somewhere.
func (p *Permissions) AllowsKind(kind Kind) bool {
	if p == nil {
		return true
	}
	if p.Access == AccessViewer {
		return false
	}
	if !p.Limited() {
		return true
	}
	_, sub := p.Subtrees[kind]
	return sub || slices.Contains(p.Kinds, kind)
}

// Roots returns the roots of the subtrees p limits kind to, and whether it limits it.
func (p *Permissions) Roots(kind Kind) ([]int64, bool) {
	if p == nil {
		return nil, false
	}
	roots, ok := p.Subtrees[kind]
	return roots, ok
}

// AllowsPath reports whether p lets a record of kind whose path is up (the record and its
// ancestors, nearest first) be written: kind is allowed, and when p limits it to subtrees,
// one of up is a root of them.
func (p *Permissions) AllowsPath(kind Kind, up []int64) bool {
	if !p.AllowsKind(kind) {
		return false
	}
	roots, ok := p.Roots(kind)
	if !ok {
		return true
	}
	for _, id := range up {
		if slices.Contains(roots, id) {
			return true
		}
	}
	return false
}

// Allows says in words what p lets name write ("editor alice may write part and area
// records, area only at area 12 or 40 and below"), for the message of a refused write.
func (p *Permissions) Allows(name string) string {
	who := string(p.Access) + " " + Quote(name)
	switch {
	case p.Access == AccessViewer:
		return who + " may read but not write"
	case !p.Limited():
		return who + " may write records of every kind"
	}
	kinds := slices.Clone(p.Kinds)
	var subs []string
	for _, k := range slices.Sorted(maps.Keys(p.Subtrees)) {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
		ids := make([]string, len(p.Subtrees[k]))
		for i, id := range p.Subtrees[k] {
			ids[i] = strconv.FormatInt(id, 10)
		}
		subs = append(subs, fmt.Sprintf("%s only at %s %s and below", k, k, strings.Join(ids, " or ")))
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	out := who + " may write " + strings.Join(names, ", ") + " records"
	if len(subs) > 0 {
		out += ": " + strings.Join(subs, "; ")
	}
	return out
}

// PathReader reads a tree kind's paths inside a write's transaction (or under the
// in-memory store's lock).
type PathReader interface {
	// Ancestors returns record id of the kind written and its ancestors, nearest first
	// (id, its parent, ..., a root); empty when there is no such record.
	Ancestors(id int64) ([]int64, error)
}

// AncestorsFunc is a PathReader made of a function.
type AncestorsFunc func(id int64) ([]int64, error)

// Ancestors calls f.
func (f AncestorsFunc) Ancestors(id int64) ([]int64, error) { return f(id) }

// forbidden is the error of a write of what that a may not make: one who may only read
// (ReadOnly) is told why, anyone else what their permissions allow.
func (a Actor) forbidden(what string) error {
	if a.ReadOnly != "" {
		return Errorf(EFORBIDDEN, "%s: %s may read but not write (%s); nothing was written", what, Quote(a.Name), a.ReadOnly)
	}
	return Errorf(EFORBIDDEN, "%s: %s; nothing was written", what, a.Perms.Allows(a.Name))
}

// CheckKind refuses (EFORBIDDEN, saying what a may write) a write of what to a record of
// kind that a's permissions do not allow anywhere.
func (a Actor) CheckKind(what string, kind Kind) error {
	if a.Perms.AllowsKind(kind) {
		return nil
	}
	return a.forbidden(what)
}

// LimitsPlace reports whether a's permissions limit kind to subtrees, so that a write of
// kind must check where it is (CheckPlace).
func (a Actor) LimitsPlace(kind Kind) bool {
	_, ok := a.Perms.Roots(kind)
	return ok
}

// CheckPlace refuses (EFORBIDDEN) a write of what at record at of kind (the record written,
// or the parent a record goes or stays under; 0 for the root) outside the subtrees a's
// permissions limit kind to, reading at's path with path only when they do. It refuses a
// kind a may not write at all too.
func (a Actor) CheckPlace(what string, kind Kind, at int64, path PathReader) error {
	if err := a.CheckKind(what, kind); err != nil {
		return err
	}
	if !a.LimitsPlace(kind) {
		return nil
	}
	var up []int64
	if at != 0 {
		var err error
		if up, err = path.Ancestors(at); err != nil {
			return err
		}
	}
	if a.Perms.AllowsPath(kind, up) {
		return nil
	}
	return a.forbidden(what)
}

// CheckAdmin refuses (EFORBIDDEN) what only an admin may do (a schema change, a restore of
// another's delete) by an actor whose permissions give less.
func (a Actor) CheckAdmin(what string) error {
	if a.Perms == nil || a.Perms.Access == AccessAdmin {
		return nil
	}
	return Errorf(EFORBIDDEN, "%s: only an admin may do that, and %s; nothing was written", what, a.Perms.Allows(a.Name))
}

// RoleStore is a store whose database knows who is connected: a PostgreSQL server proves
// the role (session_user) by its own authentication, so history written under it is not a
// name anyone may type.
type RoleStore interface {
	// SessionUser returns the database role the store is connected as. EUNAVAILABLE when
	// the database cannot be reached.
	SessionUser(ctx context.Context) (string, error)
}
