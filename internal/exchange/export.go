package exchange

import (
	"cmp"
	"context"
	"slices"

	"github.com/tandem-editor/tandem/store"
)

// PageSize is how many records Export reads per query from a store that does not stream
// (store.RecordStreamer): memory holds one page. It is also how often progress is called.
const PageSize = 500

// Export writes every record of f.Kind matching f.Search to x, in id order, except that a
// tree kind's record whose parent is in the export comes after its parent (parentsFirst),
// so that importing the file into an empty store finds every parent; f.AfterID and
// f.Limit are ignored. A store that implements store.RecordStreamer hands the records over
// one at a time, with only the fields x writes (constant memory, no page of records built);
// any other is read PageSize records at a time through FindRecords (keyset paging on the id,
// so a page costs the same wherever it starts). progress, when not nil, is called every
// PageSize records and at the end with the number of records written so far. A record
// created during the export appears in it when its id is above the page being read (a
// streamed search is one read); each record is written as one read found it.
func Export(ctx context.Context, st store.Records, x *Writer, f store.Filter, progress func(int)) error {
	f.AfterID, f.Limit = 0, 0
	out := newParentsFirst(x)
	if s, ok := st.(store.RecordStreamer); ok {
		names := make([]string, len(x.fields))
		for i, fd := range x.fields {
			names[i] = fd.Name
		}
		err := s.StreamRecords(ctx, f, names, func(r *store.Record) error {
			if err := out.write(r); err != nil {
				return err
			}
			if progress != nil && x.Count()%PageSize == 0 {
				progress(x.Count())
			}
			return nil
		})
		if err == nil {
			err = out.finish()
		}
		if err != nil {
			return err
		}
		if progress != nil && x.Count()%PageSize != 0 {
			progress(x.Count())
		}
		return nil
	}
	f.Limit = PageSize
	for {
		page, err := st.FindRecords(ctx, f)
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := out.write(r); err != nil {
				return err
			}
		}
		if len(page) < PageSize {
			err = out.finish()
		}
		if progress != nil {
			progress(x.Count())
		}
		if len(page) < PageSize || err != nil {
			return err
		}
		f.AfterID = page[len(page)-1].ID
	}
}

// parentsFirst writes a tree kind's records, read in id order, so that each follows its
// parent when the parent is in the export too: a record whose parent is not written yet
// (it was moved under a newer record) waits and goes out right after the parent. Only
// waiting records and the ids written are held. For any other kind, or an export without
// the parent column, it writes each record as it comes.
type parentsFirst struct {
	x       *Writer
	tree    bool
	written map[int64]bool
	waiting map[int64][]*store.Record // by the parent they wait for
}

func newParentsFirst(x *Writer) *parentsFirst {
	p := &parentsFirst{x: x}
	for _, f := range x.fields {
		if f.Name == store.ParentField && f.Type == store.TypeRef && f.To == x.kind {
			p.tree, p.written, p.waiting = true, map[int64]bool{}, map[int64][]*store.Record{}
		}
	}
	return p
}

func (p *parentsFirst) write(r *store.Record) error {
	if !p.tree {
		return p.x.Write(r)
	}
	if parent, ok := r.Fields[store.ParentField].(int64); ok && !p.written[parent] {
		// A streaming store may reuse r for the next record: keep a copy.
		p.waiting[parent] = append(p.waiting[parent], r.Clone())
		return nil
	}
	return p.emit(r)
}

// emit writes r, then the records waiting for it and theirs, depth first.
func (p *parentsFirst) emit(r *store.Record) error {
	stack := []*store.Record{r}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := p.x.Write(r); err != nil {
			return err
		}
		p.written[r.ID] = true
		kids := p.waiting[r.ID]
		delete(p.waiting, r.ID)
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
	return nil
}

// finish writes the records still waiting: their parent is not in the export (a search left
// it out, or it was deleted), or they are in a cycle. Each goes out in id order, after any
// waiting parent.
func (p *parentsFirst) finish() error {
	if !p.tree || len(p.waiting) == 0 {
		return nil
	}
	waitingIDs := map[int64]bool{}
	for _, rs := range p.waiting {
		for _, r := range rs {
			waitingIDs[r.ID] = true
		}
	}
	var tops []*store.Record
	for parent, rs := range p.waiting {
		if !waitingIDs[parent] {
			tops = append(tops, rs...)
			delete(p.waiting, parent)
		}
	}
	slices.SortFunc(tops, func(a, b *store.Record) int { return cmp.Compare(a.ID, b.ID) })
	for _, r := range tops {
		if err := p.emit(r); err != nil {
			return err
		}
	}
	// What still waits is in a cycle (another program's UPDATE of parent_id; no move makes
	// one) or below one: each cycle goes out from its lowest id, so no record is left out.
	for len(p.waiting) > 0 {
		var first *store.Record
		var parent int64
		var at int
		for par, rs := range p.waiting {
			for i, r := range rs {
				if first == nil || r.ID < first.ID {
					first, parent, at = r, par, i
				}
			}
		}
		if rs := slices.Delete(p.waiting[parent], at, at+1); len(rs) > 0 {
			p.waiting[parent] = rs
		} else {
			delete(p.waiting, parent)
		}
		if err := p.emit(first); err != nil {
			return err
		}
	}
	return nil
}
