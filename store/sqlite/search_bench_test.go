package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// BenchmarkListSearch lists a page (200, the TUI's page size) of 100,000 products found by a
// search, against the same page found by an id range. Run:
//
//	go test ./store/sqlite -run '^$' -bench ListSearch -benchtime 200x
func BenchmarkListSearch(b *testing.B) {
	const n = 100_000
	path := filepath.Join(b.TempDir(), "search.db")
	db, err := sqlite.Open(b.Context(), path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	db.Close()
	seedSearchProducts(b, path, storetest.SearchProducts(n))
	db, err = sqlite.Open(b.Context(), path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	storetest.BenchListSearch(b, db, n)
}

// seedSearchProducts inserts products in one transaction with the columns a store's create
// writes (sku key, folded columns); the search index follows through its triggers.
func seedSearchProducts(b *testing.B, path string, vals []store.Values) {
	b.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO products (sku, sku_key, name, description, categories,
		sku_fold, name_fold, description_fold, categories_fold, updated_at, updated_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '2026-12-01T10:00:00.000Z', 'bench')`)
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range vals {
		cats, _ := json.Marshal(v["categories"])
		f := store.Folds(store.KindProduct, v)
		if _, err := stmt.Exec(v["sku"], store.SKUKey(v["sku"].(string)), v["name"], v["description"], string(cats),
			f["sku_fold"], f["name_fold"], f["description_fold"], f["categories_fold"]); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
