package exchange

import (
	"bytes"
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

// sinkStore answers an import as a store would and keeps nothing: no key was used before,
// odd ids are new (created with that id), even ids are products at version 1 (updated), so
// that a benchmark of import measures the import and not a database's memory.
type sinkStore struct {
	store.Store
	reg *store.Registry
}

func (s sinkStore) Registry() *store.Registry { return s.reg }

func (s sinkStore) FindKey(context.Context, string, string) (*store.KeyRecord, error) {
	return nil, store.Errorf(store.ENOTFOUND, "no key")
}

func (s sinkStore) FindRecord(_ context.Context, kind store.Kind, id int64) (*store.Record, error) {
	if id%2 == 1 {
		return nil, store.Errorf(store.ENOTFOUND, "%s %d not found", kind, id)
	}
	return &store.Record{Kind: kind, ID: id, Version: 1, UpdatedBy: "bob", Fields: store.Values{
		"sku": fmt.Sprintf("SKU-%06d", id), "name": "Old name", "price": int64(100), "stock": int64(1),
		"categories": []string{"lighting"}, "availability": "in_stock"}}, nil
}

// FindRecords finds nothing: the dry run's look-up of each sku (--all-or-nothing's check)
// meets no other product holding it.
func (s sinkStore) FindRecords(context.Context, store.Filter) ([]*store.Record, error) {
	return nil, nil
}

func (s sinkStore) CreateRecord(_ context.Context, kind store.Kind, vals store.Values, opts ...store.CreateOptions) (*store.Record, error) {
	return &store.Record{Kind: kind, ID: opts[0].ID, Version: 1, Fields: vals}, nil
}

func (s sinkStore) FindLeases(context.Context, store.LeaseFilter) ([]store.Lease, time.Time, error) {
	return nil, time.Now(), nil
}

func (s sinkStore) UpdateRecord(_ context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	return &store.UpdateResult{Version: u.BaseVersion + 1}, nil
}

// genFile is an import file of n products made as it is read (a pipe: import copies it to a
// temporary file for its later passes), calling sample every 64 reads.
type genFile struct {
	f      Format
	n, i   int64
	buf    bytes.Buffer
	reads  int
	sample func()
}

func (g *genFile) Read(p []byte) (int, error) {
	if g.reads++; g.reads%64 == 0 {
		g.sample()
	}
	for g.buf.Len() < len(p) && g.i <= g.n {
		switch {
		case g.i == 0 && g.f == CSV:
			g.buf.WriteString("kind,id,version,sku,name,description,categories,price,stock,availability\n")
		case g.i == 0:
		case g.f == CSV:
			fmt.Fprintf(&g.buf, "product,%d,1,SKU-%06d,Halden oak lamp %d,\"Gives a warm, even light.\nMade in Lithuania.\",\"lighting,office\",%d.50,%d,in_stock\n",
				g.i, g.i, g.i, g.i%500, g.i%120)
		default:
			fmt.Fprintf(&g.buf, `{"kind":"product","id":%d,"version":1,"fields":{"sku":"SKU-%06d","name":"Halden oak lamp %d","description":"Gives a warm, even light.\nMade in Lithuania.","categories":["lighting","office"],"price":"%d.50","stock":%d,"availability":"in_stock"}}`+"\n",
				g.i, g.i, g.i, g.i%500, g.i%120)
		}
		g.i++
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// BenchmarkImport imports 10,000 and 100,000 generated products (half created with their
// id, half updated) from a pipe into a store that keeps nothing, and reads the report back:
// peak-heap-MB (the live heap, sampled while the file is read, every 1,000 rows applied and
// every 1,000 rows of the report) does not grow with the number of rows: the file is read
// three times (the file check, --all-or-nothing's check, the writes), a row at a time, and
// the report is kept in a temporary file.
func BenchmarkImport(b *testing.B) {
	st := sinkStore{reg: store.DefaultRegistry()}
	ctx := store.WithActor(context.Background(), alice)
	for _, f := range []Format{CSV, JSONL} {
		for _, n := range []int64{10000, 100000} {
			b.Run(fmt.Sprintf("%s/n=%d", f, n), func(b *testing.B) {
				var peak uint64
				sample := func() {
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
				}
				every := func(i int) {
					if i%1000 == 0 {
						sample()
					}
				}
				b.ReportAllocs()
				for b.Loop() {
					src, err := NewSource(&genFile{f: f, n: n, sample: sample}, f, st.reg)
					if err != nil {
						b.Fatal(err)
					}
					rep, err := NewReport()
					if err != nil {
						b.Fatal(err)
					}
					if err := NewImporter(st, ImportOptions{KeyPrefix: "bench"}).ApplyAll(ctx, src, true, every, rep); err != nil {
						b.Fatal(err)
					}
					if s := rep.Summary(); rep.Len() != int(n) || s[Created] != int(n+1)/2 || s[Updated] != int(n)/2 {
						b.Fatalf("%d rows reported, %v", rep.Len(), s)
					}
					i := 0
					if err := rep.Each(func(Result) error { i++; every(i); return nil }); err != nil {
						b.Fatal(err)
					}
					rep.Close()
					src.Close()
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*n), "ns/row")
			})
		}
	}
}
