package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// CloneOptions say what a clone copies.
type CloneOptions struct {
	Kinds   []store.Kind // the kinds to copy (empty: all)
	Subtree int64        // documents: only this one and its descendants (0: all)
	Source  string       // where the source was found, without a password (kept for sync)
	// Progress, when set, is called after each batch with records copied and the total
	// (one call at a time, but not always from the goroutine that called Clone). The
	// records are counted on the source first only when it is set.
	Progress func(done, total int)
}

// CopyOf returns the state of st when it is a working copy, and nil when it is not.
func CopyOf(ctx context.Context, st store.Store) (*store.CopyState, error) {
	wc, ok := st.(store.WorkingCopy)
	if !ok {
		return nil, nil
	}
	cs, err := wc.CopyState(ctx)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return nil, nil
	}
	return cs, err
}

// Clone makes dst, an empty store, a working copy of src, which must not be a working copy
// itself (EINVALID). dst runs src's schema, which it must have been made with (EINVALID
// otherwise), and takes its version (store.WorkingCopy.TakeSchema), so a later sync knows
// which of the source's schema changes it has. It reads the source's change-feed
// position before the records: a record that changes during the clone may be copied at a
// newer version than the position says, and the first sync reads it again, which is
// harmless because a pull always takes a record's current state. When dst can take a
// kind's records in one go (store.CopyLoader: SQLite, for kinds that are not trees), they
// are written in
// one local transaction while the source is read; otherwise each batch is written in one
// local transaction.
func Clone(ctx context.Context, src store.Store, dst store.WorkingCopy, o CloneOptions) (*store.CopyState, error) {
	switch st, err := CopyOf(ctx, src); {
	case err != nil:
		return nil, fmt.Errorf("clone: %w", err)
	case st != nil:
		// A copy of a copy would never see the changes the middle copy pulls from the
		// source: its feed holds only the middle copy's own writes.
		return nil, store.Errorf(store.EINVALID, "the source is itself a working copy (of %s); clone the store it was cloned from instead", st.Source)
	}
	reg := src.Registry()
	// A registry of the form before schemas, given when the source was opened, is an
	// overlay of the schema the copy was made with.
	if !dst.Registry().Same(reg) && (!reg.Legacy() || reg.CheckOverlay(dst.Registry()) != nil) {
		return nil, store.Errorf(store.EINVALID, "clone: the copy was made with another schema than the source's (version %d, kinds %s)",
			reg.Version(), joinKinds(reg.Kinds()))
	}
	kinds := o.Kinds
	if len(kinds) == 0 {
		kinds = reg.Kinds()
	}
	for _, k := range kinds {
		if !reg.Has(k) {
			return nil, store.Errorf(store.EINVALID, "clone: the source has no kind %s (its kinds: %s)", k, joinKinds(reg.Kinds()))
		}
		// A copy holds what its records refer to: a ref to a record it does not hold
		// could be neither checked nor kept.
		for _, f := range reg.Fields(k) {
			if f.Type == store.TypeRef && f.To != "" && f.To != k && !slices.Contains(kinds, f.To) {
				return nil, store.Errorf(store.EINVALID, "clone: %ss refer to %ss (field %s); a copy of %ss holds %ss too",
					k, f.To, f.Name, k, f.To)
			}
		}
	}
	if o.Subtree != 0 {
		if _, err := src.FindRecord(ctx, store.KindDocument, o.Subtree); err != nil {
			return nil, fmt.Errorf("clone: subtree: %w", err)
		}
	}
	pos, err := lastPoint(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("clone: %w", err)
	}
	st := store.CopyState{SourceID: src.StoreID(), Source: o.Source, Kinds: kinds, Subtree: o.Subtree, Position: pos.ID, Mark: pos.Mark}
	if err := dst.StartCopy(ctx, st); err != nil {
		return nil, fmt.Errorf("clone: %w", err)
	}
	if !reg.Legacy() {
		if _, err := dst.TakeSchema(ctx, reg); err != nil {
			return nil, fmt.Errorf("clone: %w", err)
		}
	}
	// The total is for the progress only: counting a large table is a scan of its own
	// (a tenth of a second for 100,000 PostgreSQL rows), not spent when nobody watches.
	total := 0
	for _, k := range kinds {
		if o.Progress == nil {
			break
		}
		n, err := src.CountRecords(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("clone: count %ss: %w", k, err)
		}
		total += n
	}
	done := 0
	for _, k := range cloneOrder(reg) {
		if !slices.Contains(kinds, k) {
			continue
		}
		if k == store.KindDocument && o.Subtree != 0 {
			n, err := cloneSubtree(ctx, src, dst, o.Subtree)
			if err != nil {
				return nil, err
			}
			done += n
			continue
		}
		if l, ok := dst.(store.CopyLoader); ok && !reg.Tree(k) && quiet(ctx, dst) {
			err := loadKind(ctx, src, l, k, func(n int) {
				done += n
				if o.Progress != nil {
					o.Progress(done, total)
				}
			})
			if err != nil {
				return nil, fmt.Errorf("clone: %w", err)
			}
			continue
		}
		rctx, stop := context.WithCancel(ctx)
		pages := readPages(rctx, src, k)
		for p := range pages {
			if p.err != nil {
				stop()
				return nil, fmt.Errorf("clone: read %ss: %w", k, p.err)
			}
			if err := dst.ApplySource(ctx, p.recs, store.FeedPoint{}); err != nil {
				stop()
				drain(pages)
				return nil, fmt.Errorf("clone: %w", err)
			}
			done += len(p.recs)
			if o.Progress != nil {
				o.Progress(done, total)
			}
		}
		stop()
	}
	if err := cloneStale(ctx, src, dst); err != nil {
		return nil, err
	}
	return dst.CopyState(ctx)
}

// cloneStale writes the records a clone could not write when they came: documents whose
// parent came later (ids do not follow the tree). Each pass brings at least one more level
// of the tree, so the passes end within the tree's depth; a record the source has deleted
// meanwhile is dropped.
func cloneStale(ctx context.Context, src store.Store, dst store.WorkingCopy) error {
	for range store.MaxDepth + 2 {
		stale, err := dst.Stale(ctx)
		if err != nil || len(stale) == 0 {
			return err
		}
		for kind, ids := range stale {
			recs, err := src.FindRecords(ctx, store.Filter{Kind: kind, IDs: ids})
			if err != nil {
				return fmt.Errorf("clone: read %ss: %w", kind, err)
			}
			if gone := missing(ids, recs); len(gone) > 0 {
				if _, err := dst.ApplyGone(ctx, kind, gone, store.FeedPoint{}); err != nil {
					return fmt.Errorf("clone: %w", err)
				}
			}
			if err := dst.ApplySource(ctx, recs, store.FeedPoint{}); err != nil {
				return fmt.Errorf("clone: %w", err)
			}
		}
	}
	return nil // what still waits is read again at the first sync
}

// missing returns the ids that recs does not hold.
func missing(ids []int64, recs []*store.Record) []int64 {
	found := make(map[int64]bool, len(recs))
	for _, r := range recs {
		found[r.ID] = true
	}
	var out []int64
	for _, id := range ids {
		if !found[id] {
			out = append(out, id)
		}
	}
	return out
}

// page is one page of records read from a source, or the error that ended the reading.
type page struct {
	recs []*store.Record
	err  error
}

// readPages reads every record of kind from src, page by page, ahead of the caller: the
// next page is read from the source while the copy writes the last one. The channel is
// closed after the last page or an error; a caller that stops early must drain it.
func readPages(ctx context.Context, src store.Store, kind store.Kind) <-chan page {
	ch := make(chan page, 2)
	go func() {
		defer close(ch)
		var after int64
		for {
			recs, err := src.FindRecords(ctx, store.Filter{Kind: kind, AfterID: after, Limit: pageSize})
			if err != nil {
				ch <- page{err: err}
				return
			}
			if len(recs) == 0 {
				return
			}
			ch <- page{recs: recs}
			after = recs[len(recs)-1].ID
		}
	}()
	return ch
}

// loadKind copies every record of kind from src into a fresh copy in one go
// (store.CopyLoader): the source is read in one stream when it can (store.RecordStreamer,
// whose records the copy encodes as they come, so none is copied) and page by page, read
// ahead, otherwise. progress is called with the number of records put since its last call,
// every pageSize records and at the end.
func loadKind(ctx context.Context, src store.Store, l store.CopyLoader, kind store.Kind, progress func(int)) error {
	return l.LoadCopy(ctx, kind, func(put func(*store.Record) error) error {
		n := 0
		var putErr error // put's own error, returned as it is
		each := func(r *store.Record) error {
			if putErr = put(r); putErr != nil {
				return putErr
			}
			if n++; n == pageSize {
				progress(n)
				n = 0
			}
			return nil
		}
		var err error
		if rs, ok := src.(store.RecordStreamer); ok {
			err = rs.StreamRecords(ctx, store.Filter{Kind: kind}, nil, each)
		} else {
			err = eachRecord(ctx, src, kind, each)
		}
		switch {
		case putErr != nil:
			return putErr
		case err != nil:
			return fmt.Errorf("read %ss: %w", kind, err)
		}
		if n > 0 {
			progress(n)
		}
		return nil
	})
}

// eachRecord calls fn with every record of kind on src, in id order, reading the next
// page while fn goes through the last one (readPages).
func eachRecord(ctx context.Context, src store.Store, kind store.Kind, fn func(*store.Record) error) error {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	pages := readPages(rctx, src, kind)
	defer drain(pages)
	for p := range pages {
		if p.err != nil {
			return p.err
		}
		for _, r := range p.recs {
			if err := fn(r); err != nil {
				stop()
				return err
			}
		}
	}
	return nil
}

// drain empties pages so that its reader ends.
func drain(pages <-chan page) {
	for range pages {
	}
}

// cloneSubtree copies document root and its descendants, parents before children.
func cloneSubtree(ctx context.Context, src store.Store, dst store.WorkingCopy, root int64) (int, error) {
	var all []*store.Record
	var after int64
	for {
		recs, err := src.FindRecords(ctx, store.Filter{Kind: store.KindDocument, AfterID: after, Limit: pageSize})
		if err != nil {
			return 0, fmt.Errorf("clone: read documents: %w", err)
		}
		if len(recs) == 0 {
			break
		}
		all = append(all, recs...)
		after = recs[len(recs)-1].ID
	}
	children := map[int64][]*store.Record{}
	var top *store.Record
	for _, r := range all {
		if r.ID == root {
			top = r
		}
		if p, ok := r.Fields[store.ParentField].(int64); ok {
			children[p] = append(children[p], r)
		}
	}
	if top == nil {
		return 0, store.Errorf(store.ENOTFOUND, "clone: document %d is not on the source", root)
	}
	level := []*store.Record{top}
	n := 0
	for len(level) > 0 {
		if err := dst.ApplySource(ctx, level, store.FeedPoint{}); err != nil {
			return n, fmt.Errorf("clone: %w", err)
		}
		n += len(level)
		var next []*store.Record
		for _, r := range level {
			next = append(next, children[r.ID]...)
		}
		level = next
	}
	return n, nil
}

// lastPoint returns the newest point of src's change feed (the zero point for an empty log).
func lastPoint(ctx context.Context, src store.Store) (store.FeedPoint, error) {
	last, err := src.LastChangeID(ctx)
	if err != nil || last == 0 {
		return store.FeedPoint{}, wrapFeed(err)
	}
	chs, err := src.Changes(ctx, last-1, 1)
	if err != nil {
		return store.FeedPoint{}, wrapFeed(err)
	}
	if len(chs) == 0 || chs[0].ID != last {
		return store.FeedPoint{}, store.Errorf(store.EINTERNAL, "read the source's change feed: its newest change %d is not there", last)
	}
	return store.PointOf(chs[0]), nil
}

func wrapFeed(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("read the source's change feed: %w", err)
}

// joinKinds lists kinds for a message: "supplier, part, area".
func joinKinds(ks []store.Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// cloneOrder returns the kinds of reg in the order a clone copies them: first the kinds that
// are not trees and refer to no tree (a copy can load them in one go, each after what it
// refers to), then the others, tree kinds first (store.Registry.WriteOrder): a record
// whose parent or target comes later waits (Stale) and cloneStale writes it.
func cloneOrder(reg *store.Registry) []store.Kind {
	late := map[store.Kind]bool{}
	for _, k := range reg.Kinds() {
		late[k] = reg.Tree(k)
	}
	for changed := true; changed; {
		changed = false
		for _, k := range reg.Kinds() {
			for _, f := range reg.Fields(k) {
				if f.Type == store.TypeRef && late[f.To] && !late[k] {
					late[k], changed = true, true
				}
			}
		}
	}
	var first, trees, rest []store.Kind
	for _, k := range reg.WriteOrder() {
		switch {
		case !late[k]:
			first = append(first, k)
		case reg.Tree(k):
			trees = append(trees, k)
		default:
			rest = append(rest, k)
		}
	}
	return append(append(first, trees...), rest...)
}

// quiet reports whether the copy holds no records waiting (Stale), as a load needs.
func quiet(ctx context.Context, wc store.WorkingCopy) bool {
	stale, err := wc.Stale(ctx)
	return err == nil && len(stale) == 0
}
