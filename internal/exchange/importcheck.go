package exchange

import (
	"context"
	"fmt"
	"slices"

	"github.com/tandem-editor/tandem/store"
)

// The checks an import makes of a row against the rows before it, before it writes: a move
// of a record of a tree kind by the store's own tree rules (store.CheckMoveCycle,
// CheckMoveDepth, CheckNewChild), and, in a dry run (and --all-or-nothing's check), a value
// of a unique field (a product's sku) that an earlier row of the same file gives to another
// record, and a ref to a record that neither the store nor an earlier row holds. A dry run
// writes nothing, so it keeps what the earlier rows would have written (moves, records
// created with an id, unique values) in memory: ids and keys only, never a row. Which kinds
// are trees, which fields unique and which refs, the registry says.

// treeView is the tree of one tree kind as an import sees it: the store's, read at the
// first move, with the import's own moves and creates laid over it.
type treeView struct {
	loaded   bool
	children map[int64][]int64 // record id (0: the root) → its children
	parent   map[int64]int64   // record id → its parent (0: at the root)
	// laid holds the records the import moved or created (a dry run's: nothing was
	// written), whose parent is parent's and not the store's.
	laid map[int64]bool
}

// importView is what a pass over the rows knows of the rows before the current one.
type importView struct {
	trees map[store.Kind]*treeView
	// unique holds, per kind and unique field, the keys the rows so far gave.
	unique map[fieldOf]*uniqueView
	// created holds, per kind, the ids of the records a dry run's rows would have created
	// with an id: a later row's ref to one of them is good.
	created map[store.Kind]map[int64]bool
}

// fieldOf names a field of a kind.
type fieldOf struct {
	kind  store.Kind
	field string
}

// uniqueView is what the rows so far did with one unique field of one kind.
type uniqueView struct {
	// holders maps the key of each value the rows so far wrote (or would write) to the
	// record's id (-row for a record created without an id) and row position (1-based).
	holders map[string]keyHolder
	// keyOf maps a record id to the key the rows so far gave it.
	keyOf map[int64]string
	// searched counts the store look-ups of keys; past storeSKUSearches the store's keys
	// are read once (stored) and looked up in memory.
	searched int
	stored   map[string][]storeValue // key → the store's records that have it, once read
}

// storeSKUSearches is how many values of a unique field (a sku) a dry run looks up through
// the store's search before it reads every record's key once instead: a search per row costs
// more than the one reading when the file has many rows that write the field, and less
// when it has few. A field that is not searched is read once from the start.
const storeSKUSearches = 64

// keyHolder is the record an earlier row of the file gave a key to.
type keyHolder struct {
	id  int64
	row int
}

// tree returns the view of kind's tree.
func (im *Importer) tree(kind store.Kind) *treeView {
	if im.view.trees == nil {
		im.view.trees = map[store.Kind]*treeView{}
	}
	t := im.view.trees[kind]
	if t == nil {
		t = &treeView{}
		im.view.trees[kind] = t
	}
	return t
}

// loadTree reads the parent of every record of kind from the store, a page at a time.
func (im *Importer) loadTree(ctx context.Context, kind store.Kind) error {
	t := im.tree(kind)
	if t.loaded {
		return nil
	}
	t.children, t.parent, t.laid = map[int64][]int64{}, map[int64]int64{}, map[int64]bool{}
	var after int64
	for {
		recs, err := im.st.FindRecords(ctx, store.Filter{Kind: kind, AfterID: after, Limit: 1000})
		if err != nil {
			return fmt.Errorf("read the %s tree: %w", kind, err)
		}
		for _, r := range recs {
			p := parentOf(r)
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

// place records that record id now sits under parent (0: the root), as the import moved
// or created it.
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

// up returns parent and its ancestors in kind's tree, nearest first, as for
// store.CheckMoveCycle (empty when parent does not exist). A record the import moved or
// created in a dry run has the parent the import gave it; any other is read from the store,
// so a real run sees the tree as it is now. The walk stops at a repeated id (a cycle the
// caller reports) and at 2*MaxDepth+2 ids.
func (im *Importer) up(ctx context.Context, kind store.Kind, parent int64) ([]int64, error) {
	var path []int64
	t := im.tree(kind)
	for id := parent; id != 0 && len(path) <= 2*store.MaxDepth+1; {
		if slices.Contains(path, id) {
			return append(path, id), nil
		}
		if im.opt.DryRun && t.laid[id] {
			path = append(path, id)
			id = t.parent[id]
			continue
		}
		r, err := im.st.FindRecord(ctx, kind, id)
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
		id = parentOf(r)
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

// checkMove decides the move of record id of a tree kind as the store would, before
// anything of its row is written: the writer's right to move (Registry.PlanMove), a live
// lease on the tree group of the record or of the new parent (an import presents no token),
// the parent's existence, a cycle, the depth. A real run reads the parent's ancestors from
// the store as it is now, a dry run as the rows before would have left it; the depth below
// the record comes from the tree read at the first move with the import's own moves laid
// over it. Another writer may change the tree between this check and the move: the move's
// own check (on the locked tree) then refuses it, and the caller reports that.
func (im *Importer) checkMove(ctx context.Context, kind store.Kind, id int64, m store.Move) error {
	if _, err := im.reg.PlanMove(ctx, kind, m); err != nil {
		return err
	}
	for _, c := range m.LeaseChecks(id) {
		if err := im.treeLeased(ctx, kind, c.RecordID); err != nil {
			return err
		}
	}
	if m.Parent == nil {
		return nil
	}
	up, err := im.up(ctx, kind, *m.Parent)
	if err != nil {
		return err
	}
	if err := store.CheckMoveCycle(id, *m.Parent, up); err != nil {
		return err
	}
	if err := im.loadTree(ctx, kind); err != nil {
		return err
	}
	return store.CheckMoveDepth(id, *m.Parent, up, im.tree(kind).down(id))
}

// treeLeased returns the store's lease refusal (*store.LeaseError) when a live lease holds
// the tree group of record id of kind.
func (im *Importer) treeLeased(ctx context.Context, kind store.Kind, id int64) error {
	leases, now, err := im.st.FindLeases(ctx, store.LeaseFilter{Kind: kind, RecordID: id})
	if err != nil {
		return err
	}
	for _, l := range leases {
		if l.Live(now) && l.Group == im.reg.TreeGroup(kind) {
			return &store.LeaseError{Lease: l, Now: now}
		}
	}
	return nil
}

// checkNewChild decides, in a dry run, whether a record of tree kind may be created under
// parent once the rows before have landed (a real run's create checks that in its own
// transaction).
func (im *Importer) checkNewChild(ctx context.Context, kind store.Kind, parent int64) error {
	up, err := im.up(ctx, kind, parent)
	if err != nil {
		return err
	}
	return store.CheckNewChild(parent, up)
}

// placed records a record of tree kind the import moved or created under parent (nil or 0:
// the root).
func (im *Importer) placed(ctx context.Context, kind store.Kind, id int64, parent any) error {
	p, _ := parent.(int64)
	if im.opt.DryRun {
		// A dry run's later rows must see this one, though nothing was written.
		if err := im.loadTree(ctx, kind); err != nil {
			return err
		}
	}
	im.tree(kind).place(id, p)
	return nil
}

// uniqueView returns the view of kind's unique field.
func (im *Importer) uniqueView(kind store.Kind, field string) *uniqueView {
	if im.view.unique == nil {
		im.view.unique = map[fieldOf]*uniqueView{}
	}
	k := fieldOf{kind, field}
	u := im.view.unique[k]
	if u == nil {
		u = &uniqueView{holders: map[string]keyHolder{}, keyOf: map[int64]string{}}
		im.view.unique[k] = u
	}
	return u
}

// checkUnique decides, in a dry run, whether the record id of kind (-pos-1 for one created
// without an id) may take the values vals gives its unique fields (a product's sku) given
// the rows before, as the store would decide it (values are compared by store.SKUKey): an
// earlier row of the file that gives the same key to another record, or a record of the
// store that has it and that no earlier row gave another value, makes the row fail. Records
// holding the key are found through the search when the field is searched (SearchFold of
// the key is a substring of theirs); a value whose search folding and key differ (a
// non-breaking space inside it) may be missed, and the write refuses it then.
func (im *Importer) checkUnique(ctx context.Context, kind store.Kind, id int64, vals store.Values) error {
	for _, f := range im.reg.Fields(kind) {
		s, ok := vals[f.Name].(string)
		if !ok || !f.Unique {
			continue
		}
		u := im.uniqueView(kind, f.Name)
		k := store.SKUKey(s)
		if h, ok := u.holders[k]; ok && h.id != id && u.keyOf[h.id] == k {
			other := fmt.Sprintf("%s %d", kind, h.id)
			if h.id < 0 {
				other = "a new " + string(kind)
			}
			return store.Errorf(store.EINVALID, "%s %s: row %d of this file gives the same %s to %s (%ss are compared by their key: %s)",
				f.Name, store.Quote(s), h.row, f.Name, other, f.Name, store.Quote(k))
		}
		holders, err := im.keyHolders(ctx, kind, f, u, k)
		if err != nil {
			return fmt.Errorf("look for %s %s: %w", f.Name, store.Quote(s), err)
		}
		for _, h := range holders {
			if h.id == id {
				continue
			}
			if now, ok := u.keyOf[h.id]; ok && now != k {
				continue // an earlier row gave it another value
			}
			return store.Errorf(store.EINVALID, "%s %s already exists (%s %d has %s)", f.Name, store.Quote(s), kind, h.id, store.Quote(h.value))
		}
	}
	return nil
}

// storeValue is a record of the store that has a value of a unique field.
type storeValue struct {
	id    int64
	value string
}

// keyHolders returns the store's records of kind whose field f has key k: through the
// search for the first storeSKUSearches look-ups of a searched field, then from every
// record's key, read once.
func (im *Importer) keyHolders(ctx context.Context, kind store.Kind, f *store.Field, u *uniqueView, k string) ([]storeValue, error) {
	if f.Search && u.searched < storeSKUSearches {
		u.searched++
		return im.findValues(ctx, store.Filter{Kind: kind, Search: k}, f.Name, k)
	}
	if u.stored == nil {
		all, err := im.findValues(ctx, store.Filter{Kind: kind}, f.Name, "")
		if err != nil {
			return nil, err
		}
		u.stored = map[string][]storeValue{}
		for _, h := range all {
			key := store.SKUKey(h.value)
			u.stored[key] = append(u.stored[key], h)
		}
	}
	return u.stored[k], nil
}

// findValues returns the records f finds (a page at a time) whose field has key k; every
// one when k is "".
func (im *Importer) findValues(ctx context.Context, f store.Filter, field, k string) ([]storeValue, error) {
	const page = 500
	var out []storeValue
	for f.Limit = page; ; {
		recs, err := im.st.FindRecords(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			f.AfterID = r.ID
			v, _ := r.Fields[field].(string)
			if k == "" || store.SKUKey(v) == k {
				out = append(out, storeValue{id: r.ID, value: v})
			}
		}
		if len(recs) < page {
			return out, nil
		}
	}
}

// tookUnique records that the record id of kind (-pos-1 for a new one) took the values of
// its unique fields in vals, as the row at pos.
func (im *Importer) tookUnique(kind store.Kind, id int64, pos int, vals store.Values) {
	for _, f := range im.reg.Fields(kind) {
		s, ok := vals[f.Name].(string)
		if !ok || !f.Unique {
			continue
		}
		u := im.uniqueView(kind, f.Name)
		k := store.SKUKey(s)
		u.holders[k] = keyHolder{id: id, row: pos + 1}
		u.keyOf[id] = k
	}
}

// checkRefs decides, in a dry run, whether the refs vals gives a record of kind name
// records that exist, in the store or created with their id by an earlier row, as the
// store decides it (Registry.CheckRefs, with its message).
func (im *Importer) checkRefs(ctx context.Context, kind store.Kind, vals store.Values) error {
	tree := im.reg.Tree(kind)
	if !slices.ContainsFunc(im.reg.Fields(kind), func(f *store.Field) bool {
		return f.Type == store.TypeRef && !(tree && f.Name == store.ParentField)
	}) {
		return nil // no refs but a tree's parent, which the tree checks cover
	}
	return im.reg.CheckRefs(kind, vals, func(k store.Kind, id int64) (bool, error) {
		if im.view.created[k][id] {
			return true, nil
		}
		_, err := im.st.FindRecord(ctx, k, id)
		switch store.ErrorCode(err) {
		case "":
			return true, nil
		case store.ENOTFOUND:
			return false, nil
		}
		return false, err
	})
}

// createdWith records that a dry run's row would have created the record id of kind.
func (im *Importer) createdWith(kind store.Kind, id int64) {
	if im.view.created == nil {
		im.view.created = map[store.Kind]map[int64]bool{}
	}
	if im.view.created[kind] == nil {
		im.view.created[kind] = map[int64]bool{}
	}
	im.view.created[kind][id] = true
}
