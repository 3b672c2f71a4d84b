package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2E_DeleteRestore deletes a product from one real terminal's TUI, sees it vanish from
// the other terminal's list live (no key pressed there), restores it with the CLI, and sees
// it come back in both lists, on SQLite and PostgreSQL. The times it took are logged.
func TestE2E_DeleteRestore(t *testing.T) {
	waitsBeside(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			e2eDeleteRestore(t, b.seeded(t))
		})
	}
}

func e2eDeleteRestore(t *testing.T, dsn string) {
	tm := newTmuxServer(t)
	dir := t.TempDir()
	tui := func(user string) string {
		return fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db '%s' --user %s",
			filepath.Join(dir, "cache-"+user), binary, dsn, user)
	}
	tm.start("alice", tui("alice"))
	tm.start("bob", tui("bob"))
	const name = "Brass desk lamp with linen shade"
	for _, who := range []string{"alice", "bob"} {
		tm.waitFor(who, "[ products ]", "1 of 60")
	}
	// Bob pages down until product 42 is on his screen (no filter).
	bobScreen := func() string { return tm.screen("bob") }
	tm.keys("bob", "PageDown", "PageDown")
	tm.waitFor("bob", name)

	tm.keys("alice", "/")
	tm.text("alice", "LGT-1042")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "1 of 1 matching", "Brass desk lamp") // the row also shows the matched sku
	tm.keys("alice", "d")
	tm.waitFor("alice", `delete product 42 "`+name+`" (v1)? y yes`)
	tm.keys("alice", "y")
	start := time.Now()
	tm.waitFor("alice", "deleted product 42")

	deadline := time.Now().Add(15 * time.Second)
	for strings.Contains(bobScreen(), name) {
		if time.Now().After(deadline) {
			t.Fatalf("product 42 is still in bob's list:\n%s", bobScreen())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("product 42 left bob's list %v after alice pressed y (polled every 100ms)", time.Since(start).Round(10*time.Millisecond))
	wantExit(t, "get the deleted product", tandem(t, dsn, "get", "product", "42"), exitNotFound)

	start = time.Now()
	out := mustTandem(t, dsn, "--user", "carol", "restore", "product", "42")
	if !strings.Contains(out, "restored product 42: version 3") {
		t.Errorf("restore said %q", out)
	}
	tm.waitFor("bob", name)
	t.Logf("product 42 was back in bob's list %v after tandem restore started", time.Since(start).Round(10*time.Millisecond))
	tm.waitFor("alice", name)
	got := mustGet(t, dsn, "product", 42)
	if got.Version != 3 || got.Fields["name"] != name || got.UpdatedBy != "carol" {
		t.Errorf("restored product = v%d %v by %s, want v3 %q by carol", got.Version, got.Fields["name"], got.UpdatedBy, name)
	}
}
