package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestCLI_OutsideWrite: a write that another program (a real sqlite3 process) makes to the
// store's file is seen by tandem's commands as a save: history names the writer, a set
// based on the version before it exits 3, and a working copy's sync pulls it.
func TestCLI_OutsideWrite(t *testing.T) {
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to write the store as another program")
	}
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, train)
	before := mustGet(t, team, "product", 42)

	if out, err := exec.Command(sqlite3, "-cmd", ".timeout 10000", team, "UPDATE products SET price = 1 WHERE id = 42").CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}

	out := mustTandem(t, team, "history", "product", "42")
	if want := fmt.Sprintf("v%d", before.Version+1); !strings.Contains(out, want) || !strings.Contains(out, "outside      price") {
		t.Errorf("history after the outside write:\n%s\nwant %s by outside, writing price", out, want)
	}
	wantExit(t, "set on the version before the outside write",
		tandem(t, team, "set", "product", "42", "price=5.00", "--expect-version", fmt.Sprint(before.Version)),
		3, "by outside (price)")

	mustTandem(t, train, "sync")
	if got := mustGet(t, train, "product", 42); got.Version != before.Version+1 || got.Fields["price"] != "0.01" {
		t.Errorf("the copy after sync: version %d, price %v; want %d, 0.01", got.Version, got.Fields["price"], before.Version+1)
	}
}

// TestCLI_OutsideWriteSync: a working copy has pending edits when another program (sqlite3
// or psql) writes the source's rows. Its sync merges an edit of another field, queues an
// edit that collides with the program's and one of a record the program deleted (keeping
// the local values), and pulls the row the program inserted. (Working copies hold the
// sample schema only, so this runs on products.)
func TestCLI_OutsideWriteSync(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.seeded(t)
			var sql func(string) error
			who := store.OutsideActor
			if b.name == "sqlite" {
				sql = sqlite3Writer(t, dsn)
			} else {
				sql, who = psqlWriter(t, dsn)
			}
			train := filepath.Join(t.TempDir(), "train.db")
			mustTandem(t, dsn, "clone", dsn, train)
			mustTandem(t, train, "--user", "alice", "set", "product", "1", "description=from the train", "--expect-version", "1")
			mustTandem(t, train, "--user", "alice", "set", "product", "2", "price=2.00", "--expect-version", "1")
			mustTandem(t, train, "--user", "alice", "set", "product", "3", "name=Train name", "--expect-version", "1")

			for _, q := range []string{
				"UPDATE products SET name = 'Outside name' WHERE id = 1",
				"UPDATE products SET price = 300 WHERE id = 2",
				"DELETE FROM products WHERE id = 3",
				"INSERT INTO products (sku, name, updated_at, updated_by) VALUES ('NEW-1', 'Newcomer', '2026-01-01T00:00:00Z', 'script')",
			} {
				if err := sql(q); err != nil {
					t.Fatal(err)
				}
			}

			r := tandem(t, train, "sync", "--json")
			if r.code != 3 {
				t.Fatalf("sync: exit %d, want 3 (conflicts queued)\n%s%s", r.code, r.stdout, r.stderr)
			}
			var rep struct {
				Conflicts []struct {
					ID int64 `json:"id"`
				} `json:"conflicts"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("sync --json: %v\n%s", err, r.stdout)
			}
			var ids []int64
			for _, c := range rep.Conflicts {
				ids = append(ids, c.ID)
			}
			if slices.Sort(ids); !slices.Equal(ids, []int64{2, 3}) {
				t.Errorf("conflicts of products %v, want 2 (price collides) and 3 (deleted)\n%s", ids, r.stdout)
			}
			if got := mustGet(t, dsn, "product", 1); got.Version != 3 || got.Fields["name"] != "Outside name" || got.Fields["description"] != "from the train" {
				t.Errorf("source's product 1 = v%d %v, want v3 with the outside name and the train's description", got.Version, got.Fields)
			}
			if got := mustGet(t, train, "product", 2); got.Fields["price"] != "2.00" {
				t.Errorf("copy's product 2 = %v, want its own price kept while the conflict waits", got.Fields)
			}
			if !strings.Contains(mustTandem(t, train, "list", "products", "--search", "Newcomer"), "Newcomer") {
				t.Error("the copy did not pull the product the program inserted")
			}
			hist := mustTandem(t, dsn, "history", "product", "2")
			if !regexp.MustCompile(`(?m)^\s+v2\s+\S+ \S+\s+` + regexp.QuoteMeta(who) + `\s+price$`).MatchString(hist) {
				t.Errorf("history does not name %s as the writer of v2:\n%s", who, hist)
			}
		})
	}
}
