package cli

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestCLI_BenchImport: bench import loads a file with the database's own tool and with tandem
// import, and updates one in ten of its rows; it runs its exports as processes of the binary
// and with the database's own tool, and both export the same rows: every product (those the
// store held before and the run's), and the run's alone by search.
func TestCLI_BenchImport(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			tool := map[string]string{"sqlite": "sqlite3", "postgres": "psql"}[b.name]
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s is not on $PATH", tool)
			}
			dsn := b.dsn(t)
			mustTandem(t, dsn, "import", writeFile(t, "base.csv", importBase(3)))
			var got struct {
				Before int `json:"products_before"`
				Kind   struct {
					Lines  int     `json:"lines"`
					Tandem int64   `json:"tandem_ns"`
					Native int64   `json:"native_ns"`
					Ratio  float64 `json:"ratio"`
				} `json:"export_kind"`
				Search struct {
					Lines int `json:"lines"`
				} `json:"export_search"`
				Load struct {
					Native  int64 `json:"native_ns"`
					Create  int64 `json:"create_ns"`
					Update  int64 `json:"update_ns"`
					Changed int   `json:"changed"`
					RSS     int64 `json:"create_rss_bytes"`
				} `json:"load"`
			}
			out := mustTandem(t, dsn, "bench", "import", "--rows", "10", "--json")
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("bench import --json: %v\n%s", err, out)
			}
			// Before the export part: the 3 and the load's 10.
			if got.Before != 3+10 || got.Kind.Lines != 1+13+10 || got.Search.Lines != 1+10 {
				t.Errorf("before %d, lines of every product %d, of the search %d; want 13, 24, 11\n%s",
					got.Before, got.Kind.Lines, got.Search.Lines, out)
			}
			// The load: the native tool's and tandem's of the same 10 rows, then an update of
			// one in ten of them.
			if l := got.Load; l.Native <= 0 || l.Create <= 0 || l.Update <= 0 || l.Changed != 1 || l.RSS <= 0 {
				t.Errorf("load figures %+v: want times and memory above 0, one row changed\n%s", l, out)
			}
			if got.Kind.Tandem <= 0 || got.Kind.Native <= 0 || got.Kind.Ratio <= 0 {
				t.Errorf("export times %d, %d, ratio %g: want all above 0", got.Kind.Tandem, got.Kind.Native, got.Kind.Ratio)
			}
		})
	}
}

// TestCLI_BenchImportBothStores: bench import with --postgres runs the load comparison on
// the SQLite store and then on the PostgreSQL one, in one run, and prints both: sqlite3
// .import and psql \copy against tandem import, with the imports' memory and processor time.
func TestCLI_BenchImportBothStores(t *testing.T) {
	bs := backends(t)
	if len(bs) < 2 {
		t.Skip("needs PostgreSQL (TANDEM_TEST_POSTGRES)")
	}
	for _, tool := range []string{"sqlite3", "psql"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on $PATH", tool)
		}
	}
	out := mustTandem(t, bs[0].dsn(t), "bench", "import", "--rows", "10", "--load-only", "--postgres", bs[1].dsn(t))
	for _, want := range []string{"(sqlite3 .import)", `(psql \copy)`} {
		if !strings.Contains(out, "import of 10 products against the database's own load "+want) {
			t.Errorf("no load comparison %s in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "MB resident; "); n != 4 {
		t.Errorf("%d imports with their memory and processor time, want 4 (new and update on each store)\n%s", n, out)
	}
}
