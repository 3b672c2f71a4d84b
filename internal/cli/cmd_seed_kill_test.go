package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCLI_SeedKilledLeavesNothing kills a seed (a real process, SIGKILL) while it fills the
// temporary database it links into place at the end, then seeds again: the second seed
// creates the store and removes what the killed one left (.NAME.new-HEX with its -wal and
// -shm, the create lock), so nothing but the store stays beside it.
func TestCLI_SeedKilledLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "big.db")
	cmd := tandemCmd(dsn, "seed", "--products", "100000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed once its temporary database has a -wal, i.e. the fill is under way.
	deadline := time.Now().Add(time.Minute)
	for !hasNewWAL(t, dir) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("seed made no temporary database in a minute; the directory holds %v", dirNames(t, dir))
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := os.Stat(dsn); err == nil {
		t.Fatal("the killed seed linked its store into place; kill it earlier")
	}
	if !hasNewWAL(t, dir) {
		t.Fatalf("the killed seed left nothing to clean up: %v", dirNames(t, dir))
	}

	out := mustTandem(t, dsn, "seed", "--products", "5", "--documents", "2")
	if !strings.Contains(out, "seeded 5 products and 2 documents") {
		t.Errorf("seed after the kill said %q", out)
	}
	if got := dirNames(t, dir); len(got) != 1 || got[0] != "big.db" {
		t.Errorf("after the second seed the directory holds %v; want only big.db", got)
	}
}

// hasNewWAL reports whether dir holds the -wal of a temporary database of SQLite's create.
func hasNewWAL(t *testing.T, dir string) bool {
	for _, n := range dirNames(t, dir) {
		if strings.Contains(n, ".new-") && strings.HasSuffix(n, "-wal") {
			return true
		}
	}
	return false
}
