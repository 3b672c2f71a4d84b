package postgres

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/storetest"
)

// BenchmarkListSearch lists a page (200, the TUI's page size) of 100,000 products found by a
// search, against the same page found by an id range, on the pg_trgm indexes. Run:
//
//	TANDEM_TEST_POSTGRES=... go test ./store/postgres -run '^$' -bench ListSearch -benchtime 200x
func BenchmarkListSearch(b *testing.B) {
	const n = 100_000
	dsn := pgtest.DSN(b)
	db, err := Open(b.Context(), dsn, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	seedSearchProducts(b, dsn, storetest.SearchProducts(n))
	storetest.BenchListSearch(b, db, n)
}

// seedSearchProducts inserts products with the columns a store's create writes (sku key,
// folded columns) in one COPY, on a connection of its own without the store's statement
// timeout, then vacuums and analyzes the tables (the search tables too) as autovacuum would (which also moves the GIN
// indexes' pending entries into the index).
func seedSearchProducts(b *testing.B, dsn string, vals []store.Values) {
	b.Helper()
	cols := []string{"sku", "sku_key", "name", "description", "categories",
		"sku_fold", "name_fold", "description_fold", "categories_fold", "updated_at", "updated_by"}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rows := make([][]any, len(vals))
	for i, v := range vals {
		f := migratedSchema.Folds(store.KindProduct, v)
		rows[i] = []any{v["sku"], store.SKUKey(v["sku"].(string)), v["name"], v["description"], v["categories"],
			f["sku_fold"], f["name_fold"], f["description_fold"], f["categories_fold"], at, "bench"}
	}
	ctx := b.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"products"}, cols, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	tables := []string{"products"}
	for _, name := range migratedSchema.FoldedFields(store.KindProduct) {
		tables = append(tables, searchTable("products", name))
	}
	for _, t := range tables {
		if _, err := conn.Exec(ctx, "VACUUM ANALYZE "+t); err != nil {
			b.Fatal(err)
		}
	}
}
