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

// seedSearchProducts inserts products in one transaction with what a store's create
// writes: the row with its sku key, and each searched field's fold in the kind's side
// table under the field's slot; the search index follows through its triggers.
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
	stmt, err := tx.Prepare(`INSERT INTO products (sku, sku_key, name, description, categories, updated_at, updated_by)
		VALUES (?, ?, ?, ?, ?, '2026-12-01T10:00:00.000Z', 'bench') RETURNING id`)
	if err != nil {
		b.Fatal(err)
	}
	folded := store.DefaultRegistry().FoldedFields(store.KindProduct)
	slots := make([]int64, len(folded))
	for i, name := range folded {
		if err := tx.QueryRow("SELECT slot FROM search_slots WHERE tbl = 'products' AND field = ?", name).Scan(&slots[i]); err != nil {
			b.Fatal(err)
		}
	}
	side, err := tx.Prepare("INSERT INTO products_search (key, fold) VALUES (? << 10 | ?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range vals {
		cats, _ := json.Marshal(v["categories"])
		var id int64
		if err := stmt.QueryRow(v["sku"], store.SKUKey(v["sku"].(string)), v["name"], v["description"], string(cats)).Scan(&id); err != nil {
			b.Fatal(err)
		}
		f := store.DefaultRegistry().Folds(store.KindProduct, v)
		for i, name := range folded {
			if _, err := side.Exec(id, slots[i], f[store.FoldColumn(name)]); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
