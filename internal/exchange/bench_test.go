package exchange

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// genRecords is a store.Records that makes n products on the fly, page by page, so that a
// benchmark of Export measures the export and not a database's memory.
type genRecords struct {
	store.Records
	n int64
}

func (g genRecords) FindRecords(_ context.Context, f store.Filter) ([]*store.Record, error) {
	var out []*store.Record
	for id := f.AfterID + 1; id <= g.n && (f.Limit == 0 || len(out) < f.Limit); id++ {
		out = append(out, &store.Record{Kind: store.KindProduct, ID: id, Version: 3, UpdatedBy: "alice",
			UpdatedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Fields: store.Values{
				"sku": fmt.Sprintf("SKU-%06d", id), "name": fmt.Sprintf("Halden oak lamp %d, oiled", id),
				"description": "Gives a warm, even light.\nMade in Lithuania.\n\n- Care: dust with a dry cloth",
				"categories":  []string{"lighting", "office"}, "price": id * 7, "stock": id % 120,
				"availability": "in_stock", "thumbnail": "", "search_index": "", "checksum": "", "last_sync_at": nil,
			}})
	}
	return out, nil
}

// BenchmarkExport exports 10,000 and 100,000 products: bytes and allocations per record stay
// the same, and peak-heap-MB (the live heap, sampled after every page) does not grow with
// the number of records: memory holds one page.
func BenchmarkExport(b *testing.B) {
	reg := store.DefaultRegistry()
	for _, f := range []Format{CSV, JSONL} {
		for _, n := range []int64{10000, 100000} {
			b.Run(fmt.Sprintf("%s/n=%d", f, n), func(b *testing.B) {
				var peak uint64
				sample := func(int) {
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
				}
				b.ReportAllocs()
				for b.Loop() {
					x, err := NewWriter(io.Discard, f, reg, store.KindProduct, WriterOptions{})
					if err != nil {
						b.Fatal(err)
					}
					if err := Export(context.Background(), genRecords{n: n}, x, store.Filter{Kind: store.KindProduct}, sample); err != nil {
						b.Fatal(err)
					}
					if err := x.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*n), "ns/record")
			})
		}
	}
}
