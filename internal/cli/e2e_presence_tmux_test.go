package cli

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// TestE2E_Presence: alice opens product 1 in a real terminal; bob's list says "alice editing"
// before anyone saves, and stops saying it when she leaves; then she opens it again and her
// process is SIGKILLed, and the note goes away by itself once her presence's TTL has passed
// (within TTL + a poll; the time is logged; this half under TANDEM_LONG_TESTS=1 only, as it
// waits out the TTL).
func TestE2E_Presence(t *testing.T) {
	waitsBeside(t)
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "demo.db")
	madeStoreAt(t, dsn, "seed")
	tui := func(user string) string {
		return fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db %s --user %s",
			filepath.Join(dir, "cache-"+user), binary, dsn, user)
	}
	tm.start("alice", tui("alice"))
	tm.start("bob", tui("bob"))
	tm.waitFor("alice", "[ products ]", "1 of 60")
	tm.waitFor("bob", "[ products ]", "1 of 60")
	row1 := func() string {
		for _, l := range strings.Split(tm.screen("bob"), "\n") {
			if strings.Contains(l, "     1 ") {
				return l
			}
		}
		return ""
	}
	waitRow := func(what string, ok func(string) bool, limit time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for !ok(row1()) {
			if time.Since(start) > limit {
				t.Fatalf("bob's row 1 never %s within %v: %q", what, limit, row1())
			}
			time.Sleep(100 * time.Millisecond)
		}
		return time.Since(start)
	}
	editing := func(r string) bool { return strings.Contains(r, "alice editing") }

	tm.keys("alice", "Enter")
	tm.waitFor("alice", "product 1 · v1")
	d := waitRow("said alice editing", editing, 10*time.Second)
	t.Logf("bob's list said alice editing %v after her editor opened", d.Round(10*time.Millisecond))
	tm.keys("alice", "Escape")
	d = waitRow("dropped alice editing after she left", func(r string) bool { return !editing(r) }, 10*time.Second)
	t.Logf("and dropped it %v after she left", d.Round(10*time.Millisecond))

	if !longTests() {
		t.Log("the SIGKILL half waits out the presence TTL; it runs with TANDEM_LONG_TESTS=1")
		return
	}
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "product 1 · v1")
	waitRow("said alice editing again", editing, 10*time.Second)
	pid, err := strconv.Atoi(strings.TrimSpace(tm.run("display-message", "-p", "-t", "alice", "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d = waitRow("dropped alice editing after her process was killed", func(r string) bool { return !editing(r) },
		store.DefaultPresenceTTL+10*time.Second)
	t.Logf("after SIGKILL, alice editing went from bob's list %v later (TTL %v)", d.Round(100*time.Millisecond), store.DefaultPresenceTTL)
}
