package cli

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestE2E_LocalLeases runs the TUI with --local on a PostgreSQL source behind the test's
// proxy, in a real terminal: a record bob leased on the source is read-only in the copy; a
// lease alice takes with e is taken on the source (bob cannot take the record there), her
// save under it goes to the copy and the syncer puts it on the source, presenting her
// lease; the connection cut shows her lease lost; offline, e says a lease needs the server.
func TestE2E_LocalLeases(t *testing.T) {
	waitsBeside(t)
	tm := newTmuxServer(t)
	e := newLocalEnv(t, 12)
	wantExit(t, "the first --local run clones", e.run(t, "list", "products"), 0)
	mustTandem(t, e.direct, "--user", "bob", "lease", "acquire", "product", "7", "--ttl", "5m")
	dir := t.TempDir()
	tm.start("alice", fmt.Sprintf("exec env XDG_CACHE_HOME=%s XDG_DATA_HOME=%s XDG_CONFIG_HOME=%s TERM=xterm-256color %s --db '%s' --local --user alice",
		filepath.Join(dir, "cache"), e.data, e.config, binary, e.proxied))
	tm.waitFor("alice", "online · synced", "[ products ]")
	open := func(id int64, key string) {
		t.Helper()
		tm.keys("alice", "/", "C-u")
		tm.text("alice", mustGet(t, e.direct, "product", id).Fields["sku"].(string))
		tm.keys("alice", "Enter")
		tm.waitFor("alice", "1 of 1 matching")
		tm.keys("alice", key)
		tm.waitFor("alice", fmt.Sprintf("product %d · v", id))
	}

	open(7, "Enter")
	tm.waitFor("alice", "read-only: held by bob")
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ products ]") // else the next key follows ESC as alt+/

	open(8, "e")
	tm.waitFor("alice", "lease taken", "lease: you")
	wantExit(t, "bob's lease on the source while alice holds it",
		tandem(t, e.direct, "--user", "bob", "lease", "acquire", "product", "8"), 4, "alice")
	tm.keys("alice", "Tab", "Tab", "Tab", "Tab")
	tm.waitFor("alice", "▸ price")
	tm.keys("alice", "C-u")
	tm.text("alice", "81.00")
	tm.keys("alice", "C-s")
	// Her own lease on the source does not hold her push back: the syncer presents it.
	tm.waitFor("alice", "saved on the server (v2)")
	if got := field(t, e.direct, 8, "price"); got != "81.00" {
		t.Fatalf("price on the source %v, want 81.00", got)
	}

	e.proxy.Cut()
	t.Logf("cut:\n%s", tm.waitFor("alice", "lease lost: the connection to the server was lost", "offline since"))
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ products ]")
	tm.keys("alice", "/", "C-u")
	tm.text("alice", mustGet(t, e.direct, "product", 9).Fields["sku"].(string))
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "1 of 1 matching")
	tm.keys("alice", "e")
	tm.waitFor("alice", "no lease: leases are taken on the server, which does not answer")
	e.proxy.Restore()
	tm.waitFor("alice", "online · synced")
}
