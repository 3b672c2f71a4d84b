package sqlite_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// BenchmarkFindRecords_Sorted reads one page of 40 products in price order (descending), from
// the start and from a keyset position in the middle, on 100 and 100,000 products, beside the
// same page in id order: with the index on (price, id) a sorted page costs the same on both,
// and about what an id page costs. The products are written with one
// INSERT ... SELECT (the store's own CreateRecord would take minutes for 100,000).
// Run: go test -run '^$' -bench FindRecords_Sorted ./store/sqlite/
func BenchmarkFindRecords_Sorted(b *testing.B) {
	for _, n := range []int{100, 100000} {
		b.Run(fmt.Sprintf("products=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "sort.db")
			db, err := sqlite.Open(b.Context(), path, store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
			if err != nil {
				b.Fatal(err)
			}
			_, err = raw.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
				INSERT INTO products (sku, sku_key, name, price, stock, updated_at, updated_by)
				SELECT 'S-' || i, 's-' || i, 'Product ' || i, (i * 7919) % 100000, i % 50, '2026-12-01T10:00:00Z', 'seed' FROM n`, n)
			raw.Close()
			if err != nil {
				b.Fatal(err)
			}
			ctx := b.Context()
			first := store.Filter{Kind: store.KindProduct, Sort: "price", Desc: true, Limit: 40}
			mid := first
			mid.AfterValue, mid.AfterID = int64(50000), int64(n/2)
			byID := store.Filter{Kind: store.KindProduct, AfterID: int64(n / 2), Limit: 40}
			for name, f := range map[string]store.Filter{"first": first, "middle": mid, "id": byID} {
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						recs, err := db.FindRecords(ctx, f)
						if err != nil || len(recs) != f.Limit {
							b.Fatalf("%d records, %v", len(recs), err)
						}
					}
				})
			}
		})
	}
}
