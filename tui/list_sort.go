package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Sorting a paged kind's list and folding a tree kind's.

// listSorts are the list's orders that s cycles through: id, then each field the store can
// sort by (Registry.SortFields) that the list may show (its title and short fields; a
// product's sku has no column).
func (l *listModel) listSorts() []string {
	out := []string{""}
	shown := columnCandidates(l.c.reg, l.kind)
	for _, f := range l.c.reg.SortFields(l.kind) {
		if f.Name == l.c.reg.TitleField(l.kind) || slices.Contains(shown, f) {
			out = append(out, f.Name)
		}
	}
	return out
}

// cycleSort moves to the next sort column (ascending), or with reverse turns the order of
// the current one around, and loads the first page in the new order.
func (l *listModel) cycleSort(reverse bool) tea.Cmd {
	if l.tree() {
		l.status.info(safe.Line(tabName(l.c.reg, l.kind)) + " are listed as a tree: " + keyName(l.c.keys.Fold) + " folds and unfolds the selected one")
		return nil
	}
	switch {
	case reverse && l.sort == "":
		l.status.info("the id order has no other direction; " + keyName(l.c.keys.SortNext) + " sorts by a column")
		return nil
	case reverse:
		l.desc = !l.desc
	default:
		sorts := l.listSorts()
		i := slices.Index(sorts, l.sort)
		l.sort, l.desc = sorts[(i+1)%len(sorts)], false
	}
	l.status.info("sorted by " + l.sortName())
	l.cursor, l.offset, l.loaded = 0, 0, false
	return l.load()
}

// sortName says the order: "id", "price ▲", "name ▼".
func (l *listModel) sortName() string {
	if l.sort == "" {
		return "id"
	}
	return fieldLabel(l.c.reg, l.kind, l.sort) + " " + l.sortMark()
}

func (l *listModel) sortMark() string {
	if l.desc {
		return "▼"
	}
	return "▲"
}

// sortedHeader marks the column header of the sort field: "price▲".
func (l *listModel) sortedHeader(name, header string) string {
	if !l.tree() && l.sort == name {
		return header + l.sortMark()
	}
	return header
}

// unfoldedRows makes rows the records of the tree that no folded record hides, and counts
// each record's children.
func (l *listModel) unfoldedRows() {
	l.kids = map[int64]int{}
	for _, r := range l.all {
		if p, ok := r.Fields[store.ParentField].(int64); ok {
			l.kids[p]++
		}
	}
	if l.search != "" || len(l.folded) == 0 {
		l.rows = l.all
		return
	}
	rows := make([]*store.Record, 0, len(l.all))
	hideBelow := -1 // the depth of the folded document whose subtree is being skipped
	for _, r := range l.all {
		d := l.depth[r.ID]
		if hideBelow >= 0 && d > hideBelow {
			continue
		}
		hideBelow = -1
		rows = append(rows, r)
		if l.folded[r.ID] && l.kids[r.ID] > 0 {
			hideBelow = d
		}
	}
	l.rows = rows
}

// toggleFold folds or unfolds the selected record's subtree, keeping the cursor on it.
func (l *listModel) toggleFold() {
	r := l.selected()
	table := safe.Line(tabName(l.c.reg, l.kind))
	switch {
	case !l.tree():
		l.status.info(l.foldsWhat() + table + " sort with " + keyName(l.c.keys.SortNext) + " (" + keyName(l.c.keys.SortReverse) + " reverses)")
		return
	case l.search != "":
		l.status.info("a filtered list is flat: " + keyName(l.c.keys.Back) + " clears the filter")
		return
	case r == nil || l.kids[r.ID] == 0:
		l.status.info("nothing to fold: no " + table + " under this one")
		return
	}
	l.folded[r.ID] = !l.folded[r.ID]
	if !l.folded[r.ID] {
		delete(l.folded, r.ID)
	}
	l.unfoldedRows()
	l.cursor = max(l.indexOf(r.ID), 0)
	l.clampOffset()
	if l.folded[r.ID] {
		l.status.info(fmt.Sprintf("folded %d · %s", r.ID, safe.Line(l.c.reg.TitleOf(r))))
	} else {
		l.status.info(fmt.Sprintf("unfolded %d · %s", r.ID, safe.Line(l.c.reg.TitleOf(r))))
	}
}

// foldsWhat says which tabs the fold key folds: "f folds documents; " ("" for a schema without a tree).
func (l *listModel) foldsWhat() string {
	var trees []string
	for _, k := range l.c.reg.Kinds() {
		if l.c.reg.Tree(k) {
			trees = append(trees, safe.Line(tabName(l.c.reg, k)))
		}
	}
	if len(trees) == 0 {
		return ""
	}
	return keyName(l.c.keys.Fold) + " folds " + strings.Join(trees, ", ") + "; "
}

// foldMark is the mark before a record of a tree with children: [+] folded, [-] open.
func (l *listModel) foldMark(r *store.Record) string {
	switch {
	case !l.tree() || l.search != "" || l.kids[r.ID] == 0:
		return ""
	case l.folded[r.ID]:
		return fmt.Sprintf("[+%d] ", l.kids[r.ID])
	}
	return "[-] "
}
