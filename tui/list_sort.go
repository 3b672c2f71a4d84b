package tui

import (
	"fmt"
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// Sorting the product list and folding the documents' tree.

// listSorts are the product list's orders that s cycles through: id, then each field the
// store can sort by that the list shows.
func (l *listModel) listSorts() []string {
	out := []string{""}
	for _, f := range l.c.reg.SortFields(store.KindProduct) {
		if f.Name != "sku" { // the list shows no sku column
			out = append(out, f.Name)
		}
	}
	return out
}

// cycleSort moves to the next sort column (ascending), or with reverse turns the order of
// the current one around, and loads the first page in the new order.
func (l *listModel) cycleSort(reverse bool) tea.Cmd {
	if l.kind != store.KindProduct {
		l.status.info("documents are listed as a tree: f folds and unfolds the selected one")
		return nil
	}
	switch {
	case reverse && l.sort == "":
		l.status.info("the id order has no other direction; s sorts by a column")
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
	if l.kind == store.KindProduct && l.sort == name {
		return header + l.sortMark()
	}
	return header
}

// unfoldedRows makes rows the documents of the tree that no folded document hides, and
// counts each document's children.
func (l *listModel) unfoldedRows() {
	l.kids = map[int64]int{}
	for _, r := range l.all {
		if p, ok := r.Fields["parent_id"].(int64); ok {
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

// toggleFold folds or unfolds the selected document's subtree, keeping the cursor on it.
func (l *listModel) toggleFold() {
	r := l.selected()
	switch {
	case l.kind != store.KindDocument:
		l.status.info("f folds documents; products sort with s (o reverses)")
		return
	case l.search != "":
		l.status.info("a filtered list is flat: esc clears the filter")
		return
	case r == nil || l.kids[r.ID] == 0:
		l.status.info("nothing to fold: no documents under this one")
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
		l.status.info(fmt.Sprintf("folded %d · %s", r.ID, r.Title()))
	} else {
		l.status.info(fmt.Sprintf("unfolded %d · %s", r.ID, r.Title()))
	}
}

// foldMark is the mark before a document with children: [+] folded, [-] open.
func (l *listModel) foldMark(r *store.Record) string {
	switch {
	case l.kind != store.KindDocument || l.search != "" || l.kids[r.ID] == 0:
		return ""
	case l.folded[r.ID]:
		return fmt.Sprintf("[+%d] ", l.kids[r.ID])
	}
	return "[-] "
}
