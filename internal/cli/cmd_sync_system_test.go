package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_WorkingCopyRefusesSystemWrites: on a working copy every write --as system is
// refused with exit 6 (the exit of an ownership refusal), a message that says to run it
// against the source, and nothing written or queued: set of a system field, adjust of a
// shared counter, import, and the worker, which does not start. Run against the source,
// the same writes land, and the next sync brings them into the copy; an editor's adjust on
// the copy still works and is pushed.
func TestCLI_WorkingCopyRefusesSystemWrites(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			team := b.seeded(t)
			dir := t.TempDir()
			train := filepath.Join(dir, "train.db")
			mustTandem(t, team, "clone", team, train)
			csv := filepath.Join(dir, "sums.csv")
			if err := os.WriteFile(csv, []byte("kind,id,checksum\nproduct,10,abc\n"), 0o600); err != nil {
				t.Fatal(err)
			}

			refused := []struct {
				args []string
				want string
			}{
				{[]string{"--as", "system", "set", "product", "10", "checksum=abc", "--expect-version", "1"}, "product.checksum: a working copy writes only editor and shared fields"},
				{[]string{"--as", "system", "adjust", "product", "10", "stock", "-3"}, "product.stock written as system: a working copy takes no system writes"},
				{[]string{"--as", "system", "adjust", "product", "10", "stock", "5", "--key", "k-1"}, "product.stock written as system"},
				{[]string{"--as", "system", "import", csv}, "import: a working copy takes no system writes"},
				{[]string{"--as", "system", "import", "--dry-run", csv}, "import: a working copy takes no system writes"},
				{[]string{"worker", "checksum", "--once"}, "worker checksum: a working copy takes no system writes"},
				{[]string{"worker", "wordcount", "--interval", "10ms"}, "worker wordcount: a working copy takes no system writes"},
			}
			for _, c := range refused {
				r := tandem(t, train, c.args...)
				if r.code != 6 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "Run it against the source, ") || !strings.Contains(r.stderr, "(--db SOURCE") {
					t.Errorf("tandem %s on a working copy: exit %d\nstdout: %s\nstderr: %s\nwant exit 6 and %q, naming the source",
						strings.Join(c.args, " "), r.code, r.stdout, r.stderr, c.want)
				}
				if r.stdout != "" {
					t.Errorf("tandem %s on a working copy printed %q", strings.Join(c.args, " "), r.stdout)
				}
			}
			got := mustGet(t, train, "product", 10)
			if got.Version != 1 || got.Fields["checksum"] != "" || got.Fields["stock"] != mustGet(t, team, "product", 10).Fields["stock"] {
				t.Errorf("refused writes changed the copy: %+v", got)
			}
			if out := mustTandem(t, train, "status"); !strings.Contains(out, "0 pending") {
				t.Errorf("refused writes queued changes:\n%s", out)
			}

			// The way out: the same writes on the source, which the next sync brings in.
			mustTandem(t, team, "--as", "system", "set", "product", "10", "checksum=abc", "--expect-version", "1")
			mustTandem(t, team, "--as", "system", "adjust", "product", "10", "stock", "-3")
			// An editor's adjust on the copy lands there and is pushed as the editor's.
			mustTandem(t, train, "--user", "alice", "adjust", "product", "10", "stock", "1")
			if out := mustTandem(t, train, "sync"); !strings.Contains(out, "in sync") {
				t.Fatalf("sync:\n%s", out)
			}
			src, cp := mustGet(t, team, "product", 10), mustGet(t, train, "product", 10)
			if src.Fields["checksum"] != "abc" || cp.Fields["checksum"] != "abc" || src.Fields["stock"] != cp.Fields["stock"] || src.Version != cp.Version {
				t.Errorf("after sync: source %+v, copy %+v; want checksum abc in both, one stock, one version", src, cp)
			}
			if out := mustTandem(t, team, "history", "product", "10"); !strings.Contains(out, "alice (offline copy") {
				t.Errorf("the editor's adjust from the copy is not in the source's history:\n%s", out)
			}
		})
	}
}
