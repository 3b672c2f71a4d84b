package cli

import (
	"encoding/csv"
	"fmt"
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

// TestCLI_ExportSpreadsheetSafe: a CSV export writes text cells a spreadsheet would run as
// formulas with a quote in front (OWASP), never numbers; tandem's import reads them back
// unchanged (into a fresh store, and as "unchanged" into the same one); --raw-cells writes
// and reads the cells as they are.
func TestCLI_ExportSpreadsheetSafe(t *testing.T) {
	besideOthers(t)
	names := []string{`=HYPERLINK("http://x","y")`, `+cmd|' /C calc'!A0`, "-5", "@SUM(A1)", "'", "''=", "'=x", "plain"}
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.dsn(t)
			var ids []int64
			for i, n := range names {
				ids = append(ids, mustCreate(t, dsn, "product", fmt.Sprintf("sku=XL-%d", i), "name="+n, "description=\t"+n,
					fmt.Sprintf("stock=%d", -5-i), "categories=-x,@y").ID)
			}
			out := mustTandem(t, dsn, "export", "products", "--fields", "sku,name,description,stock,categories")
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatalf("export: %v\n%s", err, out)
			}
			for i, row := range rows[1:] {
				// kind,id,version,sku,name,description,stock,categories,updated_by,updated_at
				name, desc, stock, cats := row[4], row[5], row[6], row[7]
				if name == "" || strings.ContainsRune("=+-@\t\r", rune(name[0])) || desc[0] != '\'' || cats != "'-x,@y" {
					t.Errorf("row %d: name %q, description %q, categories %q: a spreadsheet would run one", i+1, name, desc, cats)
				}
				if want := fmt.Sprint(-5 - i); stock != want {
					t.Errorf("row %d: stock %q, want %q (numbers are never touched)", i+1, stock, want)
				}
			}
			file := writeFile(t, "export.csv", out)
			r := mustTandem(t, dsn, "import", file, "--json")
			if !strings.Contains(r, fmt.Sprintf(`"unchanged": %d`, len(names))) {
				t.Errorf("the export imported into its own store changed something:\n%s", r)
			}
			fresh := be.dsn(t)
			mustTandem(t, fresh, "import", file)
			for i, id := range ids {
				got := mustGet(t, fresh, "product", id)
				if got.Fields["name"] != names[i] || got.Fields["description"] != "\t"+names[i] || fmt.Sprint(got.Fields["categories"]) != "[-x @y]" {
					t.Errorf("product %d imported as name %q, description %q, categories %v; want %q, %q, [-x @y]",
						id, got.Fields["name"], got.Fields["description"], got.Fields["categories"], names[i], "\t"+names[i])
				}
			}

			raw := mustTandem(t, dsn, "export", "products", "--fields", "sku,name", "--raw-cells")
			if !strings.Contains(raw, "\n"+`product,1,1,XL-0,"=HYPERLINK(""http://x"",""y"")",`) || !strings.Contains(raw, ",'=x,") {
				t.Errorf("export --raw-cells did not write the cells as they are:\n%s", raw)
			}
			rawFresh := be.dsn(t)
			mustTandem(t, rawFresh, "import", writeFile(t, "raw.csv", raw), "--raw-cells")
			for i, id := range ids {
				if got := mustGet(t, rawFresh, "product", id).Fields["name"]; got != names[i] {
					t.Errorf("--raw-cells both ways: product %d named %q, want %q", id, got, names[i])
				}
			}
		})
	}
}
