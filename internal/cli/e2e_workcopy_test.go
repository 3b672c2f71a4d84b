package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// TestE2E_WorkingCopy drives the TUI on a working copy in a real terminal: alice edits the
// price offline, bob changes the same price on the server, alice presses S, the conflict
// opens in the merge view with the server's value as theirs, she keeps hers, presses S
// again, and `tandem get` on the server shows her price. Then she deletes the product with
// d: the header counts the pending delete, and the next S deletes it on the server.
func TestE2E_WorkingCopy(t *testing.T) {
	waitsBeside(t)
	tm := newTmuxServer(t)
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	madeStoreAt(t, team, "seed")
	mustTandem(t, team, "clone", team, train)

	tm.start("alice", fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db %s --user alice",
		filepath.Join(dir, "cache"), binary, train))
	tm.waitFor("alice", "offline copy of", "0 pending · 0 conflicts · synced never", "[ products ]")

	// Offline: the price of product 42 (the fifth field). A lease cannot be had here.
	tm.keys("alice", "/")
	tm.text("alice", "LGT-1042")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "1 of 1 matching")
	tm.keys("alice", "e")
	t.Logf("e on a working copy:\n%s", tm.waitFor("alice", "leases cannot be taken on a working copy"))
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ products ]")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "product 42 · v1")
	tm.keys("alice", "Tab", "Tab", "Tab", "Tab")
	tm.waitFor("alice", "▸ price")
	tm.keys("alice", "C-u")
	tm.text("alice", "92.00")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "saved v2")
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ products ]", "1 pending")

	// Meanwhile on the server.
	mustTandem(t, team, "--user", "bob", "set", "product", "42", "price=95.00", "--expect-version", "1")

	tm.keys("alice", "S")
	merge := tm.waitFor("alice", "merge product 42", "the source's v2", "1 mine   92.00", "2 theirs 95.00")
	t.Logf("merge view on the working copy:\n%s", merge)
	tm.keys("alice", "1")
	tm.waitFor("alice", "0 of 1 conflict left")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "resolved product 42; S sends it to the source")
	tm.keys("alice", "S")
	done := tm.waitFor("alice", "in sync:", "0 pending · 0 conflicts · synced just now")
	t.Logf("after the second sync:\n%s", done)

	var got record
	if err := json.Unmarshal([]byte(mustTandem(t, team, "get", "product", "42", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Fields["price"] != "92.00" || got.UpdatedBy != "alice" {
		t.Errorf("server's product 42: price %v by %s, want alice's 92.00", got.Fields["price"], got.UpdatedBy)
	}

	// A delete on the train: done in the copy, counted in the header, gone from the server
	// at the next S.
	tm.keys("alice", "d")
	tm.waitFor("alice", "delete product 42")
	tm.keys("alice", "y")
	tm.waitFor("alice", "deleted product 42", "1 pending (1 delete)")
	if r := tandem(t, team, "get", "product", "42"); r.code != 0 {
		t.Fatalf("the server lost product 42 before the sync: exit %d %s", r.code, r.stderr)
	}
	tm.keys("alice", "S")
	tm.waitFor("alice", "in sync:", "0 pending · 0 conflicts")
	wantExit(t, "get the product deleted offline", tandem(t, team, "get", "product", "42"), exitNotFound)
	tm.keys("alice", "q")
}
