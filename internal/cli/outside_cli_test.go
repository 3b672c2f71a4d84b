package cli

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
