package exchange

import (
	"context"

	"github.com/tandem-editor/tandem/store"
)

// PageSize is how many records Export reads per query: memory holds one page.
const PageSize = 500

// Export writes every record of f.Kind matching f.Search to x, in id order, reading PageSize
// records at a time (keyset paging on the id, so a page costs the same wherever it starts);
// f.AfterID and f.Limit are ignored. progress, when not nil, is called after each page with
// the number of records written so far. A record created during the export appears in it
// when its id is above the page being read; each record is written as one read found it.
func Export(ctx context.Context, st store.Records, x *Writer, f store.Filter, progress func(int)) error {
	f.AfterID, f.Limit = 0, PageSize
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
