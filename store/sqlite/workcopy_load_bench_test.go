package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// BenchmarkLoadCopy loads 100,000 products, shaped as tandem bench sync makes them, into a
// fresh working copy opened as tandem clone opens its temporary file (Scratch), one by one
// in a reused record as sync's clone hands them over from a streaming source: the clone's
// SQLite side (encoding, rows, side tables of folded text, indexes, commit) without the
// source's reading. Run:
// go test ./store/sqlite -run '^$' -bench LoadCopy -benchtime 3x
func BenchmarkLoadCopy(b *testing.B) {
	const n = 100_000
	at := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	recs := make([]*store.Record, n)
	for i := range recs {
		recs[i] = &store.Record{Kind: store.KindProduct, ID: int64(i + 1), Version: 1, UpdatedBy: "bench",
			UpdatedAt: at.Add(time.Duration(i) * time.Millisecond), Fields: store.Values{
				"sku": fmt.Sprintf("bench-sync-%07d", i), "name": fmt.Sprintf("bench product %d", i),
				"description": "A product made by tandem bench sync.", "categories": []string{"bench"},
				"price": int64(1000 + i%5000), "stock": int64(i % 100), "availability": "in_stock",
				"thumbnail": "", "search_index": "", "checksum": "", "last_sync_at": nil}}
	}
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), fmt.Sprintf("load%d.db", i))
		db, err := sqlite.OpenWith(b.Context(), path, store.Options{}, sqlite.OpenConfig{Create: true, Scratch: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := db.StartCopy(b.Context(), store.CopyState{SourceID: "src", Source: "bench", Kinds: []store.Kind{store.KindProduct}}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := db.LoadCopy(b.Context(), store.KindProduct, records(recs)); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
