package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite the CLI goldens in the top-level testdata/cli from the current output")

// goldenDir holds the CLI goldens: the repository's top-level testdata (DESIGN.md). Made
// absolute when the package loads: a test that changes its directory (t.Chdir) must still
// read and write the repository's goldens, not a testdata/cli relative to a temporary dir.
var goldenDir = mustAbs("../../testdata/cli")

func mustAbs(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		panic(err)
	}
	return abs
}

// varying matches what differs from run to run in the output: times, store ids, lease tokens,
// the temporary store path.
var varying = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`), "<time>"},
	{regexp.MustCompile(`random seed \(default \d+\)`), "random seed (default <seed>)"},
	{regexp.MustCompile(`(--user string[^\n]*\(default )"[^"]*"\)`), `${1}"<user>")`},
	{regexp.MustCompile(`\b[0-9a-f]{32}\b`), "<store-id>"},
	{regexp.MustCompile(`\b[0-9a-f]{64}\b`), "<token>"},
	{regexp.MustCompile(`\b\d\d:\d\d(:\d\d)?Z?\b`), "<clock>"},
	{regexp.MustCompile(`in \d+(\.\d+)?(ms|s|µs|m\d+s)\b`), "in <duration>"},
	{regexp.MustCompile(`\(\d+ rows/s\)`), "(<rate>)"},
	{regexp.MustCompile(`\b\d+m\d+s\b|\b\d+(\.\d+)?s left\b`), "<duration>"},
}

// checkGolden compares got, normalised, with testdata/cli/name (or writes it with -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	for _, v := range varying {
		got = v.re.ReplaceAllString(got, v.with)
	}
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -run Golden -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden (go test ./internal/cli -run Golden -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// runIn runs tandem in-process as user tester against dsn and returns its exit code and
// output, as one text: what a golden holds.
func runIn(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"--db", dsn, "--user", "tester"}, args...)
	code := Run(context.Background(), full, strings.NewReader(""), &out, &errb)
	s := fmt.Sprintf("$ tandem %s\nexit %d\n", strings.Join(args, " "), code)
	if out.Len() > 0 {
		s += "--- stdout\n" + out.String()
	}
	if errb.Len() > 0 {
		s += "--- stderr\n" + errb.String()
	}
	s = strings.ReplaceAll(s, dsn, "<db>")
	return strings.ReplaceAll(s, filepath.Clean(os.TempDir()), "<tmp>")
}

// TestGolden_Help: the help of every command.
func TestGolden_Help(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		name := strings.Join(append([]string{"tandem"}, args[:len(args)-1]...), "_")
		checkGolden(t, filepath.Join("help", name+".txt"), runIn(t, "unused.db", args...))
		for _, sub := range c.Commands() {
			if sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub)
			}
		}
	}
	walk(newRootCmd(&app{}))
}

// goldenStore is a fixed sample store: seed's first 5 products and 4 documents, then two
// saves of product 2 (one by bob), a lease of bob on product 3.
func goldenStore(t *testing.T) string {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "golden.db")
	mustRun := func(args ...string) {
		t.Helper()
		if out := runIn(t, dsn, args...); !strings.Contains(out, "exit 0\n") {
			t.Fatalf("%s", out)
		}
	}
	mustRun("--create", "seed", "--products", "5", "--documents", "4")
	mustRun("set", "product", "2", "price=12.50", "--expect-version", "1")
	mustRun("--user", "bob", "set", "product", "2", "name=Bob's name", "stock=3", "--expect-version", "2")
	mustRun("--user", "bob", "lease", "acquire", "product", "3", "--ttl", "1h")
	return dsn
}

// TestGolden_Outputs: the table and JSON outputs of list, get, history and import, and the
// message of every exit code.
func TestGolden_Outputs(t *testing.T) {
	dsn := goldenStore(t)
	t.Chdir(t.TempDir()) // the file's path in the goldens is the same in every run
	imp := "import.csv"
	if err := os.WriteFile(imp, []byte("kind,id,version,name,price,checksum\n"+
		"product,1,1,Renamed by import,9.99,abc\n"+
		"product,2,1,Mine,1.00,\n"+
		"product,3,1,Leased,1.00,\n"+
		"product,4,1,Bad,cheap,\n"+
		"product,5,1,Seed product 5,,\n"+
		"product,,,New,1.00,\n"+
		"product,77,3,With id,2.00,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// One line holding four rows: money as a JSON number, a whole number outside int64, a
	// field named twice, and a good row; the report tells them apart by ROW.
	if err := os.WriteFile("one-line.json", []byte(`[{"kind":"product","id":1,"fields":{"price":1.5}},`+
		`{"kind":"product","id":1,"fields":{"stock":9223372036854775808}},`+
		`{"kind":"product","id":1,"fields":{"name":"a","name":"b"}},`+
		`{"kind":"product","id":4,"version":1,"fields":{"name":"From JSON"}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"list_products.txt", []string{"list", "products"}},
		{"list_products_json.txt", []string{"list", "products", "--json", "--limit", "2"}},
		{"list_documents.txt", []string{"list", "documents"}},
		{"get_product.txt", []string{"get", "product", "2"}},
		{"get_product_json.txt", []string{"get", "product", "2", "--json"}},
		{"history_product.txt", []string{"history", "product", "2"}},
		{"history_product_json.txt", []string{"history", "product", "2", "--json"}},
		{"history_product_page.txt", []string{"history", "product", "2", "--limit", "2"}},
		{"history_product_page_json.txt", []string{"history", "product", "2", "--before", "3", "--limit", "1", "--json"}},
		{"exit2_history_range.txt", []string{"history", "product", "2", "--since", "3", "--before", "2"}},
		{"import_dry_run.txt", []string{"import", imp, "--dry-run", "--key-prefix", "g"}},
		{"import_dry_run_json.txt", []string{"import", imp, "--dry-run", "--json", "--key-prefix", "g"}},
		{"import_json_one_line.txt", []string{"import", "one-line.json", "--dry-run", "--key-prefix", "g"}},
		{"export_csv.txt", []string{"export", "products", "--fields", "sku,name,categories,price"}},
		{"export_jsonl.txt", []string{"export", "documents", "--format", "jsonl", "--fields", "parent_id,title,tags"}},
		{"exit1_unreachable.txt", []string{"--db", "postgres://nobody@127.0.0.1:1/x?connect_timeout=1", "list", "products"}},
		{"exit2_bad_value.txt", []string{"set", "product", "1", "stock=abc", "--expect-version", "1"}},
		{"exit2_usage.txt", []string{"list"}},
		{"exit3_conflict.txt", []string{"set", "product", "2", "price=1", "--expect-version", "1"}},
		{"exit4_lease.txt", []string{"set", "product", "3", "price=1", "--expect-version", "1"}},
		{"exit5_not_found.txt", []string{"get", "product", "999"}},
		{"exit6_ownership.txt", []string{"set", "product", "1", "checksum=x", "--expect-version", "1"}},
		{"exit_import_rows.txt", []string{"import", imp, "--key-prefix", "g2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkGolden(t, tc.name, runIn(t, dsn, tc.args...))
		})
	}
}
