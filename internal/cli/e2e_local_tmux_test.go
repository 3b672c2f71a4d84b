package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// TestE2E_LocalCutMidEdit runs the TUI with --local on a PostgreSQL source behind the test's
// proxy, in a real terminal: online, the connection cut mid-edit (the save says "saved
// locally" and the header turns offline with the save pending), bob's save of the same
// field on the server meanwhile, the connection restored (the push meets bob's save and the
// conflict is counted), then the merge view keeps alice's price and the syncer sends it.
func TestE2E_LocalCutMidEdit(t *testing.T) {
	waitsBeside(t)
	tm := newTmuxServer(t)
	e := newLocalEnv(t, 45)
	wantExit(t, "the first --local run clones", e.run(t, "list", "products"), 0)
	dir := t.TempDir()
	tm.start("alice", fmt.Sprintf("exec env XDG_CACHE_HOME=%s XDG_DATA_HOME=%s XDG_CONFIG_HOME=%s TERM=xterm-256color %s --db '%s' --local --user alice",
		filepath.Join(dir, "cache"), e.data, e.config, binary, e.proxied))
	tm.waitFor("alice", "online · synced", "0 conflicts", "[ products ]")

	tm.keys("alice", "/")
	tm.text("alice", "LGT-1042")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "1 of 1 matching")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "product 42 · v1")
	e.proxy.Cut()
	tm.keys("alice", "Tab", "Tab", "Tab", "Tab")
	tm.waitFor("alice", "▸ price")
	tm.keys("alice", "C-u")
	tm.text("alice", "92.00")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "saved locally")
	t.Logf("cut:\n%s", tm.waitFor("alice", "offline since", "1 pending"))

	mustTandem(t, e.direct, "--user", "bob", "set", "product", "42", "price=95.00", "--expect-version", "1")
	e.proxy.Restore()
	tm.keys("alice", "Escape")
	t.Logf("restored:\n%s", tm.waitFor("alice", "online · synced", "1 conflict"))

	tm.keys("alice", "S")
	tm.waitFor("alice", "merge product 42", "1 mine   92.00", "2 theirs 95.00")
	tm.keys("alice", "1")
	tm.waitFor("alice", "0 of 1 conflict left")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "resolved product 42")
	// No S: the syncer sends the resolution by itself.
	waitFor(t, "alice's resolution on the server", func() bool {
		var got record
		if err := json.Unmarshal([]byte(mustTandem(t, e.direct, "get", "product", "42", "--json")), &got); err != nil {
			t.Fatal(err)
		}
		return got.Fields["price"] == "92.00" && got.UpdatedBy == "alice"
	})
	tm.waitFor("alice", "online · synced", "0 conflicts")
}
