package exchange

import (
	"context"
	"fmt"
	"slices"

	"github.com/tandem-editor/tandem/store"
)

// The checks an import makes of a row against the rows before it, before it writes: a
// document's move by the store's own tree rules (store.CheckMoveCycle, CheckMoveDepth,
// CheckNewChild), and, in a dry run (and --all-or-nothing's check), a sku that an earlier row
// of the same file gives to another product. A dry run writes nothing, so it keeps what the
// earlier rows would have written (moves, documents created with an id, skus) in memory:
// ids and sku keys only, never a row.

// treeView is the document tree as an import sees it: the store's, read at the first move,
// with the import's own moves and creates laid over it.
type treeView struct {
	loaded   bool
	children map[int64][]int64 // document id (0: the root) → its children
	parent   map[int64]int64   // document id → its parent (0: at the root)
	// laid holds the documents the import moved or created (a dry run's: nothing was
	// written), whose parent is parent's and not the store's.
	laid map[int64]bool
}

// importView is what a pass over the rows knows of the rows before the current one.
type importView struct {
	tree treeView
	// skus maps the sku key of each sku the rows so far wrote (or would write) to the
	// product's id (-row for a product created without an id) and row position (1-based).
	skus map[string]skuHolder
	// skuOf maps a product id to the sku key the rows so far gave it.
	skuOf map[int64]string
	// searched counts the store look-ups of skus; past storeSKUSearches the store's sku
	// keys are read once (stored) and looked up in memory.
	searched int
	stored   map[string][]storeSKU // sku key → the store's products that have it, once read
}

// storeSKUSearches is how many skus a dry run looks up through the store's search before it
// reads every product's sku key once instead: a search per row costs more than the one
// reading when the file has many rows that write skus, and less when it has few.
const storeSKUSearches = 64

// skuHolder is the product an earlier row of the file gave a sku key to.
type skuHolder struct {
	id  int64
	row int
}

// loadTree reads every document's parent from the store, a page at a time.
func (im *Importer) loadTree(ctx context.Context) error {
	t := &im.view.tree
	if t.loaded {
		return nil
	}
	t.children, t.parent, t.laid = map[int64][]int64{}, map[int64]int64{}, map[int64]bool{}
	var after int64
	for {
		recs, err := im.st.FindRecords(ctx, store.Filter{Kind: store.KindDocument, AfterID: after, Limit: 1000})
		if err != nil {
			return fmt.Errorf("read the document tree: %w", err)
		}
		for _, r := range recs {
			p, _ := r.Fields["parent_id"].(int64)
			t.parent[r.ID] = p
			t.children[p] = append(t.children[p], r.ID)
			after = r.ID
		}
		if len(recs) < 1000 {
			t.loaded = true
			return nil
		}
	}
}

// place records that document id now sits under parent (0: the root), as the import
// moved or created it.
func (t *treeView) place(id, parent int64) {
	if !t.loaded {
		return
	}
	if old, ok := t.parent[id]; ok {
		t.children[old] = slices.DeleteFunc(t.children[old], func(c int64) bool { return c == id })
	}
	t.parent[id] = parent
	t.children[parent] = append(t.children[parent], id)
	t.laid[id] = true
}

// up returns parent and its ancestors, nearest first, as for store.CheckMoveCycle (empty
// when parent does not exist). A document the import moved or created in a dry run has the
// parent the import gave it; any other is read from the store, so a real run sees the tree
// as it is now. The walk stops at a repeated id (a cycle the caller reports) and at
// 2*MaxDepth+2 ids.
func (im *Importer) up(ctx context.Context, parent int64) ([]int64, error) {
	var path []int64
	for id := parent; id != 0 && len(path) <= 2*store.MaxDepth+1; {
		if slices.Contains(path, id) {
			return append(path, id), nil
		}
		t := &im.view.tree
		if im.opt.DryRun && t.laid[id] {
			path = append(path, id)
			id = t.parent[id]
			continue
		}
		r, err := im.st.FindRecord(ctx, store.KindDocument, id)
		if store.ErrorCode(err) == store.ENOTFOUND {
			if len(path) == 0 {
				return nil, nil
			}
			return path, nil // a parent deleted under the walk: the store's move decides
		}
		if err != nil {
			return nil, err
		}
		path = append(path, id)
		id, _ = r.Fields["parent_id"].(int64)
	}
	return path, nil
}

// down returns the longest path from id down to a leaf, starting with id, from the view.
func (t *treeView) down(id int64) []int64 {
	var walk func(id int64, seen int) []int64
	walk = func(id int64, seen int) []int64 {
		var best []int64
		if seen <= 2*store.MaxDepth {
			for _, c := range t.children[id] {
				if p := walk(c, seen+1); len(p) > len(best) {
					best = p
				}
			}
		}
		return append([]int64{id}, best...)
	}
	return walk(id, 0)
}

// checkMove decides a document's move as the store would, before anything of its row is
// written: the writer's right to move (Registry.PlanMove), a live lease on the tree group of
// the document or of the new parent (an import presents no token), the parent's existence, a
// cycle, the depth. A real run reads the parent's ancestors from the store as it is now, a dry run
// as the rows before would have left it; the depth below the document comes from the tree
// read at the first move with the import's own moves laid over it. Another writer may change
// the tree between this check and the move: the move's own check (on the locked tree) then
// refuses it, and the caller reports that.
func (im *Importer) checkMove(ctx context.Context, id int64, m store.Move) error {
	if _, err := im.reg.PlanMove(ctx, store.KindDocument, m); err != nil {
		return err
	}
	for _, c := range m.LeaseChecks(id) {
		if err := im.treeLeased(ctx, c.RecordID); err != nil {
			return err
		}
	}
	if m.Parent == nil {
		return nil
	}
	up, err := im.up(ctx, *m.Parent)
	if err != nil {
		return err
	}
	if err := store.CheckMoveCycle(id, *m.Parent, up); err != nil {
		return err
	}
	if err := im.loadTree(ctx); err != nil {
		return err
	}
	return store.CheckMoveDepth(id, *m.Parent, up, im.view.tree.down(id))
}

// treeLeased returns the store's lease refusal (*store.LeaseError) when a live lease holds
// the tree group of document id.
func (im *Importer) treeLeased(ctx context.Context, id int64) error {
	leases, now, err := im.st.FindLeases(ctx, store.LeaseFilter{Kind: store.KindDocument, RecordID: id})
	if err != nil {
		return err
	}
	for _, l := range leases {
		if l.Live(now) && l.Group == im.reg.TreeGroup(store.KindDocument) {
			return &store.LeaseError{Lease: l, Now: now}
		}
	}
	return nil
}

// checkNewChild decides, in a dry run, whether a document may be created under parent once
// the rows before have landed (a real run's create checks that in its own transaction).
func (im *Importer) checkNewChild(ctx context.Context, parent int64) error {
	up, err := im.up(ctx, parent)
	if err != nil {
		return err
	}
	return store.CheckNewChild(parent, up)
}

// placed records a document the import moved or created under parent (nil or 0: the root).
func (im *Importer) placed(ctx context.Context, id int64, parent any) error {
	p, _ := parent.(int64)
	if im.opt.DryRun {
		// A dry run's later rows must see this one, though nothing was written.
		if err := im.loadTree(ctx); err != nil {
			return err
		}
	}
	im.view.tree.place(id, p)
	return nil
}

// checkSKU decides, in a dry run, whether the product id (-pos-1 for one created without an
// id) may take sku given the rows before, as the store would decide it (skus are compared by
// store.SKUKey): an earlier row of the file that gives the same key to another product, or a
// product of the store that has it and that no earlier row gave another sku, makes the row
// fail. Products holding the key are found through the search (SearchFold of the key is a
// substring of theirs); a sku whose search folding and key differ (a non-breaking space
// inside it) may be missed, and the write refuses it then.
func (im *Importer) checkSKU(ctx context.Context, id int64, pos int, sku any) error {
	s, ok := sku.(string)
	if !ok {
		return nil
	}
	k := store.SKUKey(s)
	if h, ok := im.view.skus[k]; ok && h.id != id && im.view.skuOf[h.id] == k {
		other := fmt.Sprintf("product %d", h.id)
		if h.id < 0 {
			other = "a new product"
		}
		return store.Errorf(store.EINVALID, "sku %s: row %d of this file gives the same sku to %s (skus are compared by their key: %s)",
			store.Quote(s), h.row, other, store.Quote(k))
	}
	holders, err := im.skuHolders(ctx, k)
	if err != nil {
		return fmt.Errorf("look for sku %s: %w", store.Quote(s), err)
	}
	for _, h := range holders {
		if h.id == id {
			continue
		}
		if now, ok := im.view.skuOf[h.id]; ok && now != k {
			continue // an earlier row gave it another sku
		}
		return store.Errorf(store.EINVALID, "sku %s already exists (product %d has %s)", store.Quote(s), h.id, store.Quote(h.sku))
	}
	return nil
}

// storeSKU is a product of the store that has a sku.
type storeSKU struct {
	id  int64
	sku string
}

// skuHolders returns the store's products whose sku has key k: through the search for the
// first storeSKUSearches look-ups, then from every product's sku key, read once.
func (im *Importer) skuHolders(ctx context.Context, k string) ([]storeSKU, error) {
	v := &im.view
	if v.searched < storeSKUSearches {
		v.searched++
		return im.findSKU(ctx, store.Filter{Kind: store.KindProduct, Search: k}, k)
	}
	if v.stored == nil {
		all, err := im.findSKU(ctx, store.Filter{Kind: store.KindProduct}, "")
		if err != nil {
			return nil, err
		}
		v.stored = map[string][]storeSKU{}
		for _, h := range all {
			key := store.SKUKey(h.sku)
			v.stored[key] = append(v.stored[key], h)
		}
	}
	return v.stored[k], nil
}

// findSKU returns the products f finds (a page at a time) whose sku has key k; every one
// when k is "".
func (im *Importer) findSKU(ctx context.Context, f store.Filter, k string) ([]storeSKU, error) {
	const page = 500
	var out []storeSKU
	for f.Limit = page; ; {
		recs, err := im.st.FindRecords(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			f.AfterID = r.ID
			sku, _ := r.Fields["sku"].(string)
			if k == "" || store.SKUKey(sku) == k {
				out = append(out, storeSKU{id: r.ID, sku: sku})
			}
		}
		if len(recs) < page {
			return out, nil
		}
	}
}

// tookSKU records that the product id (-pos for a new one) took sku, as the row at pos.
func (im *Importer) tookSKU(id int64, pos int, sku any) {
	s, ok := sku.(string)
	if !ok {
		return
	}
	if im.view.skus == nil {
		im.view.skus, im.view.skuOf = map[string]skuHolder{}, map[int64]string{}
	}
	k := store.SKUKey(s)
	im.view.skus[k] = skuHolder{id: id, row: pos + 1}
	im.view.skuOf[id] = k
}
