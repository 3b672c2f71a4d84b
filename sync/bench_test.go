package sync_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

// benchSource returns a SQLite source holding n products.
func benchSource(b *testing.B, n int) *sqlite.DB {
	b.Helper()
	src, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "src.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { src.Close() })
	for i := range n {
		if _, err := src.CreateRecord(as("bench"), store.KindProduct, store.Values{"sku": fmt.Sprintf("B-%06d", i),
			"name": fmt.Sprintf("product %d", i), "description": "a product", "stock": int64(i % 50)}); err != nil {
			b.Fatal(err)
		}
	}
	return src
}

// benchCopy returns a new working copy of src, the i-th of a benchmark.
func benchCopy(b *testing.B, src store.Store, i int) *sqlite.DB {
	b.Helper()
	ctx := context.Background()
	wc, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("wc%d.db", i)), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tsync.Clone(ctx, src, wc, tsync.CloneOptions{}); err != nil {
		b.Fatal(err)
	}
	return wc
}

// BenchmarkClone clones 2,000 products from a SQLite source; ns/op / 2000 is the cost of one.
func BenchmarkClone(b *testing.B) {
	src := benchSource(b, 2000)
	for i := 0; b.Loop(); i++ {
		benchCopy(b, src, i).Close()
	}
}

// BenchmarkPush pushes 200 saves, one per product, in one sync.
func BenchmarkPush(b *testing.B) {
	src := benchSource(b, 200)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		wc := benchCopy(b, src, i)
		recs, _ := wc.FindRecords(ctx, store.Filter{Kind: store.KindProduct})
		for _, r := range recs {
			if _, err := wc.UpdateRecord(as("alice"), store.KindProduct, r.ID, store.Update{BaseVersion: r.Version, Set: store.Values{"name": fmt.Sprint("n", i)}}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if _, err := tsync.Sync(ctx, src, wc); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		wc.Close()
		b.StartTimer()
	}
}

// benchDeletes is how many records BenchmarkPushDeletes and BenchmarkDirectDeletes delete.
const benchDeletes = 200

// BenchmarkPushDeletes pushes 200 deletes made in a working copy, one per product, in one
// sync: each a version-checked, keyed delete on the source and its acknowledgement.
func BenchmarkPushDeletes(b *testing.B) {
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		src := benchSource(b, benchDeletes)
		wc := benchCopy(b, src, i)
		recs, _ := wc.FindRecords(ctx, store.Filter{Kind: store.KindProduct})
		for _, r := range recs {
			if _, err := wc.DeleteRecord(as("alice"), store.KindProduct, r.ID, store.Delete{ExpectVersion: r.Version}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		rep, err := tsync.Sync(ctx, src, wc)
		if err != nil || rep.Pushed != benchDeletes {
			b.Fatalf("sync: %v, pushed %d", err, rep.Pushed)
		}
		b.StopTimer()
		wc.Close()
		src.Close()
		b.StartTimer()
	}
}

// BenchmarkDirectDeletes makes the same 200 version-checked deletes directly on the source:
// BenchmarkPushDeletes' baseline.
func BenchmarkDirectDeletes(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		src := benchSource(b, benchDeletes)
		recs, _ := src.FindRecords(ctx, store.Filter{Kind: store.KindProduct})
		b.StartTimer()
		for _, r := range recs {
			if _, err := src.DeleteRecord(as("alice"), store.KindProduct, r.ID, store.Delete{ExpectVersion: r.Version}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		src.Close()
		b.StartTimer()
	}
}

// BenchmarkPushDocCreates pushes 200 documents created in a working copy in one sync: each
// a create on the source and an acknowledgement that gives the local row the source's id
// (and points what refers to the local id at it).
func BenchmarkPushDocCreates(b *testing.B) {
	src := benchSource(b, 200)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		wc := benchCopy(b, src, i)
		for j := range 200 {
			if _, err := wc.CreateRecord(as("alice"), store.KindDocument, store.Values{"title": fmt.Sprintf("doc %d-%d", i, j)}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if _, err := tsync.Sync(ctx, src, wc); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		wc.Close()
		b.StartTimer()
	}
}
