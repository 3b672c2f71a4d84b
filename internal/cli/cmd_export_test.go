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

// TestCLI_ExportOutput: -o errors name the path asked for (never the temporary file written
// first), and a name whose extension says no format is refused unless --format says one.
func TestCLI_ExportOutput(t *testing.T) {
	dsn := newSQLiteStore(t)
	mustTandem(t, dsn, "import", writeFile(t, "base.csv", importBase(2)))
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexist", "x.csv")
	r := tandem(t, dsn, "export", "products", "-o", missing)
	if r.code != 2 || !strings.Contains(r.stderr, "-o "+missing+": cannot write the file: no such file or directory") || strings.Contains(r.stderr, ".tandem-export") {
		t.Errorf("export -o into a missing directory: exit %d, stderr %q; want 2 naming %s and not the temporary file", r.code, r.stderr, missing)
	}
	txt := filepath.Join(dir, "out.txt")
	r = tandem(t, dsn, "export", "products", "-o", txt)
	if r.code != 2 || !strings.Contains(r.stderr, "does not say the format") || !strings.Contains(r.stderr, "--format") {
		t.Errorf("export -o out.txt: exit %d, stderr %q; want 2 asking for --format", r.code, r.stderr)
	}
	if _, err := os.Stat(txt); !os.IsNotExist(err) {
		t.Errorf("a refused export left %s (%v)", txt, err)
	}
	mustTandem(t, dsn, "export", "products", "-o", txt, "--format", "jsonl")
	if data, _ := os.ReadFile(txt); !strings.HasPrefix(string(data), `{"kind":"product","id":1,`) {
		t.Errorf("export -o out.txt --format jsonl wrote:\n%s", data)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tandem-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}
