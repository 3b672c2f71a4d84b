package cli

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2E_ServeOverOpenSSH: tandem serve, and OpenSSH's ssh in two real terminals with keys
// made by ssh-keygen. Each person gets the TUI under the name their key proves; bob's list
// says alice is editing the record she opened; her save appears in bob's list, and the
// record and its history name alice. Two sessions' saves of one record meet the conflict
// dialog and merge; a lease taken in one session makes the record read-only in the other.
// A viewer's TUI says read only before anyone types.
func TestE2E_ServeOverOpenSSH(t *testing.T) {
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; the OpenSSH end-to-end test needs it", tool)
		}
	}
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "team.db")
	madeStoreAt(t, dsn, "seed")
	keys := map[string]string{}
	var lines [][3]string
	for _, who := range []string{"alice", "bob", "vic"} {
		key := filepath.Join(dir, who)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", who, "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
		keys[who] = key
		role := "editor"
		if who == "vic" {
			role = "viewer"
		}
		lines = append(lines, [3]string{who, role, strings.TrimSpace(readFile(t, key+".pub"))})
	}
	users := writeFile(t, "users.yaml", usersYAML(lines...))
	srv := startServe(t, dsn, users)
	_, port, _ := strings.Cut(srv.addr, ":")
	login := func(who string) string {
		return fmt.Sprintf("exec ssh -t -p %s -i %s -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no "+
			"-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o SendEnv=TERM %s@127.0.0.1", port, keys[who], who)
	}
	tm.start("alice", login("alice"))
	tm.start("bob", login("bob"))
	tm.waitFor("alice", "[ products ]", "alice ·", "1 of 60")
	tm.waitFor("bob", "[ products ]", "bob ·", "1 of 60")

	row1 := func() string {
		for _, l := range strings.Split(tm.screen("bob"), "\n") {
			if strings.Contains(l, "     1 ") {
				return l
			}
		}
		return ""
	}
	waitRow := func(what string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !strings.Contains(row1(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("bob's row 1 never said %q: %q", what, row1())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "product 1 · v1")
	waitRow("alice editing")

	tm.keys("alice", "Tab", "Tab", "Tab", "Tab")
	tm.waitFor("alice", "▸ price")
	tm.keys("alice", "C-u")
	tm.text("alice", "77.00")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "saved v2")
	waitRow("v2 alice")

	got := mustGet(t, dsn, "product", 1)
	if got.UpdatedBy != "alice" || got.Fields["price"] != "77.00" {
		t.Fatalf("product 1 after alice's save over ssh: by %q, price %v", got.UpdatedBy, got.Fields["price"])
	}
	if h := mustTandem(t, dsn, "history", "product", "1", "--json"); !strings.Contains(h, `"actor": "alice"`) {
		t.Fatalf("history does not name alice:\n%s", h)
	}

	// Two sessions on one record collide and merge as two terminals do: alice saves
	// product 2's price first; bob, still on v1, meets the dialog and the merge view.
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ products ]")
	tm.keys("alice", "Down", "Enter")
	tm.waitFor("alice", "product 2 · v1")
	tm.keys("bob", "Down", "Enter")
	tm.waitFor("bob", "product 2 · v1")
	editPrice := func(who, price string) {
		t.Helper()
		tm.keys(who, "Tab", "Tab", "Tab", "Tab")
		tm.waitFor(who, "▸ price")
		tm.keys(who, "C-u")
		tm.text(who, price)
		tm.keys(who, "C-s")
	}
	editPrice("alice", "55.00")
	tm.waitFor("alice", "saved v2")
	editPrice("bob", "66.00")
	tm.waitFor("bob", "alice saved v2; you edited v1", "m  merge field by field")
	tm.keys("bob", "m")
	tm.waitFor("bob", "1 of 1 conflict left")
	tm.keys("bob", "1")
	tm.waitFor("bob", "0 of 1 conflict left")
	tm.keys("bob", "C-s")
	tm.waitFor("bob", "merged with alice's v2; saved v3")
	if got := mustGet(t, dsn, "product", 2); got.Version != 3 || got.UpdatedBy != "bob" || got.Fields["price"] != "66.00" {
		t.Fatalf("product 2 after the merge over ssh: v%d by %q, price %v; want v3 by bob, 66.00", got.Version, got.UpdatedBy, got.Fields["price"])
	}

	// A lease alice takes in her session makes the record read-only in bob's, within a
	// second or so: the lock column names her, and his editor says she holds it.
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ products ]")
	tm.keys("alice", "Down", "e")
	tm.waitFor("alice", "product 3 · v1")
	tm.keys("bob", "Escape")
	tm.waitFor("bob", "[ products ]")
	tm.keys("bob", "Down", "Enter")
	tm.waitFor("bob", "product 3 · v1", "held by alice")

	// vic, a viewer, sees read only in the list and the editor before typing anything.
	tm.start("vic", login("vic"))
	tm.waitFor("vic", "vic (read only)", "1 of 60")
	tm.keys("vic", "Enter")
	tm.waitFor("vic", "product 1 · v2", "vic · read only")
}
