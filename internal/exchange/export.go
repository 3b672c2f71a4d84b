package exchange

import (
	"context"

	"github.com/tandem-editor/tandem/store"
)

// PageSize is how many records Export reads per query from a store that does not stream
// (store.RecordStreamer): memory holds one page. It is also how often progress is called.
const PageSize = 500

// Export writes every record of f.Kind matching f.Search to x, in id order; f.AfterID and
// f.Limit are ignored. A store that implements store.RecordStreamer hands the records over
// one at a time, with only the fields x writes (constant memory, no page of records built);
// any other is read PageSize records at a time through FindRecords (keyset paging on the id,
// so a page costs the same wherever it starts). progress, when not nil, is called every
// PageSize records and at the end with the number of records written so far. A record
// created during the export appears in it when its id is above the page being read (a
// streamed search is one read); each record is written as one read found it.
func Export(ctx context.Context, st store.Records, x *Writer, f store.Filter, progress func(int)) error {
	f.AfterID, f.Limit = 0, 0
	if s, ok := st.(store.RecordStreamer); ok {
		names := make([]string, len(x.fields))
		for i, fd := range x.fields {
			names[i] = fd.Name
		}
		err := s.StreamRecords(ctx, f, names, func(r *store.Record) error {
			if err := x.Write(r); err != nil {
				return err
			}
			if progress != nil && x.Count()%PageSize == 0 {
				progress(x.Count())
			}
			return nil
		})
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
			if err := x.Write(r); err != nil {
				return err
			}
		}
		if progress != nil {
			progress(x.Count())
		}
		if len(page) < PageSize {
			return nil
		}
		f.AfterID = page[len(page)-1].ID
	}
}
