package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// End-to-end tests, in real terminals, of what happens to a person's edits and lease: edits
// brought back never revert someone else's work, and a TUI ended by a signal or a closed
// terminal gives its lease back and keeps its draft.

// editsTUI is the command that runs the TUI for user on dsn, its drafts under dir.
func editsTUI(dir, dsn, user string, extra ...string) string {
	return fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db '%s' --user %s %s",
		filepath.Join(dir, "cache-"+user), binary, dsn, user, strings.Join(extra, " "))
}

// liveLocks returns the live leases `tandem locks --json` reports on dsn.
func liveLocks(t *testing.T, dsn string) []jsonLockRow {
	t.Helper()
	r := tandem(t, dsn, "locks", "--json")
	if r.code != 0 {
		t.Fatalf("locks: exit %d: %s", r.code, r.stderr)
	}
	var rows []jsonLockRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("locks --json: %v\n%s", err, r.stdout)
	}
	var live []jsonLockRow
	for _, l := range rows {
		if l.State == "live" {
			live = append(live, l)
		}
	}
	return live
}

// waitExit waits until process pid has ended.
func waitExit(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
			return // ended, not yet reaped
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs 15 s after the signal: %s", pid, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestE2E_SignalReleasesLease: alice holds the lease on product 1 (e, TTL 2 minutes) with an
// unsaved edit; her terminal is closed (tmux kills the session: SIGHUP), or her TUI gets
// SIGTERM. The lease is released at once (tandem locks shows none, long before its TTL)
// and her edit is in the draft, offered when she opens the record again.
func TestE2E_SignalReleasesLease(t *testing.T) {
	for _, b := range backends(t) {
		for _, sig := range []string{"SIGHUP", "SIGTERM"} {
			t.Run(b.name+"/"+sig, func(t *testing.T) {
				tm := newTmuxServer(t)
				dir := t.TempDir()
				dsn := b.seeded(t)
				tm.start("keep", "sleep 600") // keeps the tmux server when alice's session goes
				tm.start("alice", editsTUI(dir, dsn, "alice"))
				tm.waitFor("alice", "[ products ]", "1 of ")
				tm.keys("alice", "e")
				tm.waitFor("alice", "product 1 · v1", "lease: you, ")
				tm.keys("alice", "Tab")
				tm.waitFor("alice", "▸ name")
				tm.text("alice", " hung up")
				tm.waitFor("alice", " hung up")
				if ls := liveLocks(t, dsn); len(ls) != 1 || ls[0].Holder != "alice" || ls[0].LeftSeconds < 60 {
					t.Fatalf("before the signal: live leases %+v, want alice's with about 2 minutes left", ls)
				}
				pid := tm.pid("alice")
				if sig == "SIGHUP" {
					tm.run("kill-session", "-t", "alice")
				} else if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				waitExit(t, pid)
				if ls := liveLocks(t, dsn); len(ls) != 0 {
					t.Fatalf("after %s: live leases %+v, want none (released, not left to expire)", sig, ls)
				}
				drafts, _ := filepath.Glob(filepath.Join(dir, "cache-alice", "tandem", "drafts", "stores", "*", "alice", "product-1.json"))
				if len(drafts) != 1 {
					t.Fatalf("after %s: drafts %v, want product 1's", sig, drafts)
				}
				data, err := os.ReadFile(drafts[0])
				if err != nil || !strings.Contains(string(data), " hung up") {
					t.Fatalf("after %s: draft %s (%v) does not hold the edit", sig, data, err)
				}
				tm.start("again", editsTUI(dir, dsn, "alice"))
				tm.waitFor("again", "[ products ]", "1 of ")
				tm.keys("again", "Enter")
				tm.waitFor("again", "Unsaved edits from")
			})
		}
	}
}
