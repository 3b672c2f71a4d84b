package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_Export: formats, --fields, --search, -o, and bad usage.
func TestCLI_Export(t *testing.T) {
	dsn := newSQLiteStore(t)
	mustTandem(t, dsn, "import", writeFile(t, "base.csv", importBase(3)))
	out := filepath.Join(t.TempDir(), "p.jsonl")
	mustTandem(t, dsn, "export", "products", "--search", "base 2", "--fields", "sku,price", "-o", out)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"product","id":2,"version":1,"fields":{"sku":"B-2","price":"2.50"},"updated_by":"tester","updated_at":`
	if !strings.HasPrefix(string(data), want) || strings.Count(string(data), "\n") != 1 {
		t.Errorf("export -o p.jsonl:\n%s\nwant one line starting %s", data, want)
	}
	csv := mustTandem(t, dsn, "export", "product", "--fields", "categories,price")
	if !strings.HasPrefix(csv, "kind,id,version,categories,price,updated_by,updated_at\nproduct,1,1,\"a,b\",1.50,tester,") {
		t.Errorf("export CSV:\n%s", csv)
	}
	for _, args := range [][]string{{"export", "widgets"}, {"export", "products", "--format", "xml"}, {"export", "products", "--fields", "colour"}} {
		if r := tandem(t, dsn, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
}
