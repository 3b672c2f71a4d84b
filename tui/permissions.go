package tui

import (
	"context"

	"github.com/tandem-editor/tandem/store"
)

// What the user may write, shown before anyone types: the store refuses the rest anyway
// (store.Permissions); the TUI only says so early, in the list's lock column and as
// read-only fields.

// writeDenied says why the user may not write a record of kind whose path is up (the
// record and its ancestors, nearest first; nil for a new record or one whose path is not
// known), "" when they may.
func (c *common) writeDenied(kind store.Kind, up []int64) string {
	if why := c.opts.ReadOnly; why != "" {
		return "you may read only (" + why + ")"
	}
	p := c.opts.Perms
	if p.AllowsKind(kind) && (up == nil || p.AllowsPath(kind, up)) {
		return ""
	}
	return "you may not write this record (" + p.Allows(c.user) + ")"
}

// limitsPlace reports whether where a record of kind sits decides if the user may write
// it (subtree limits).
func (c *common) limitsPlace(kind store.Kind) bool {
	_, ok := c.opts.Perms.Roots(kind)
	return ok
}

// recordPath reads rec's path (rec and its ancestors, nearest first) when the user's
// permissions limit its kind to subtrees; nil otherwise. It reads the store: call it
// inside a tea.Cmd.
func recordPath(ctx context.Context, c *common, rec *store.Record) ([]int64, error) {
	if rec == nil || !c.limitsPlace(rec.Kind) {
		return nil, nil
	}
	up := []int64{rec.ID}
	for cur := rec; len(up) <= store.MaxDepth; {
		parent, ok := cur.Fields[store.ParentField].(int64)
		if !ok {
			return up, nil
		}
		next, err := c.st.FindRecord(ctx, rec.Kind, parent)
		if err != nil {
			return nil, err
		}
		up, cur = append(up, parent), next
	}
	return up, nil
}

// rowPath is a list row's path as far as the list's rows tell (a tree kind's list holds
// them all, unless filtered): r and the ancestors found among byID.
func rowPath(r *store.Record, byID map[int64]*store.Record) []int64 {
	up := []int64{r.ID}
	for cur := r; len(up) <= store.MaxDepth; {
		parent, ok := cur.Fields[store.ParentField].(int64)
		if !ok {
			break
		}
		up = append(up, parent)
		if cur = byID[parent]; cur == nil {
			break
		}
	}
	return up
}

// rowsByID indexes rows by id when where a row sits decides whether it may be written.
func (l *listModel) rowsByID() map[int64]*store.Record {
	if !l.c.limitsPlace(l.kind) {
		return nil
	}
	m := make(map[int64]*store.Record, len(l.rows))
	for _, r := range l.rows {
		m[r.ID] = r
	}
	return m
}

// rowDenied says why the user may not write list row r ("" when they may), byID being
// rowsByID.
func (l *listModel) rowDenied(r *store.Record, byID map[int64]*store.Record) string {
	var up []int64
	if byID != nil {
		up = rowPath(r, byID)
	}
	return l.c.writeDenied(l.kind, up)
}
