package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_Seed checks the sample data and that seed refuses a store that is not empty.
func TestCLI_Seed(t *testing.T) {
	besideOthers(t)
	dsn := filepath.Join(t.TempDir(), "tandem.db")
	mustTandem(t, dsn, "seed")
	var products []record
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "products", "--json")), &products); err != nil {
		t.Fatal(err)
	}
	if len(products) != defaultSeedProducts {
		t.Fatalf("seeded %d products, want %d", len(products), defaultSeedProducts)
	}
	demo := mustGet(t, dsn, "product", 42)
	if price, _ := demo.Fields["price"].(string); price == "" || price == "0.00" {
		t.Errorf("product 42 price = %v, want a price", demo.Fields["price"])
	}
	if desc, _ := demo.Fields["description"].(string); strings.Count(desc, "\n") < 2 {
		t.Errorf("product 42 description has fewer than three lines: %q", desc)
	}
	var docs []record
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "documents", "--json")), &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != defaultSeedDocuments {
		t.Fatalf("seeded %d documents, want %d", len(docs), defaultSeedDocuments)
	}
	depth := map[int64]int{}
	deepest := 0
	for _, d := range docs { // parents come before children
		depth[d.ID] = 1
		if parent, ok := d.Fields["parent_id"].(float64); ok {
			depth[d.ID] = depth[int64(parent)] + 1
		}
		deepest = max(deepest, depth[d.ID])
	}
	if deepest != 3 {
		t.Errorf("document tree is %d levels deep, want 3", deepest)
	}

	r := tandem(t, dsn, "seed")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--force") {
		t.Errorf("seed on a filled store: exit %d %q, want %d and a hint at --force", r.code, r.stderr, exitUsage)
	}
	if got := countRecords(t, dsn, "product"); got != defaultSeedProducts {
		t.Errorf("refused seed added products: %d", got)
	}
	mustTandem(t, dsn, "seed", "--force", "--products", "5", "--documents", "2")
	if got := countRecords(t, dsn, "product"); got != defaultSeedProducts+5 {
		t.Errorf("seed --force: %d products, want %d", got, defaultSeedProducts+5)
	}
	if got := countRecords(t, dsn, "document"); got != defaultSeedDocuments+2 {
		t.Errorf("seed --force: %d documents, want %d", got, defaultSeedDocuments+2)
	}
}
