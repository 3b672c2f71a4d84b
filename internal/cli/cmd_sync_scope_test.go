package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_PartialCopyRefusesOtherKinds: a copy cloned with --kind document refuses to create
// products (create and import), and import refuses a row that would create a record under
// an id the copy does not hold (the source's id space): otherwise the next sync makes
// duplicates on the source. Rows of the cloned kind without an id still create.
func TestCLI_PartialCopyRefusesOtherKinds(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	team, docs := filepath.Join(dir, "team.db"), filepath.Join(dir, "docs.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, docs, "--kind", "document")

	wantExit(t, "create a product in a document copy", tandem(t, docs, "create", "product", "sku=NEW-9", "name=x"), 2, "holds no products")

	file := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(file, []byte("kind,id,sku,name,price\nproduct,2,NEW-2,x,1.00\nproduct,,NEW-3,y,1.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := tandem(t, docs, "import", file)
	wantExit(t, "import products into a document copy", r, 2, "2 invalid", "holds no products")

	file = filepath.Join(dir, "docs.csv")
	if err := os.WriteFile(file, []byte("kind,id,title\ndocument,9999,Elsewhere\ndocument,,Local\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = tandem(t, docs, "import", file)
	wantExit(t, "import a document under an id the copy does not hold", r, 2, "document 9999 is not in this working copy", "1 created")

	mustTandem(t, docs, "sync")
	out := mustTandem(t, team, "list", "product")
	if strings.Contains(out, "NEW-") {
		t.Errorf("the source got products from a document copy:\n%s", out)
	}
	if r := tandem(t, team, "get", "document", "9999"); r.code != 5 {
		t.Errorf("the source has document 9999: exit %d", r.code)
	}
}
