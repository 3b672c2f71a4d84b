package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// servedTUI is an editor session of tandem serve, opened by a test.
type servedTUI struct {
	out, stderr *syncBuf
	stdin       io.WriteCloser
	done        chan error
}

// openServedTUI opens the editor over SSH on addr with key, in a 100x30 terminal, and waits
// for its list. With stuck the client never reads the session's output after that.
func openServedTUI(t *testing.T, addr string, key gossh.Signer, stuck bool) servedTUI {
	t.Helper()
	c, err := sshClient(addr, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	ts := servedTUI{out: new(syncBuf), stderr: new(syncBuf), done: make(chan error, 1)}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sess.Stderr = ts.stderr
	stdin, _ := sess.StdinPipe()
	t.Cleanup(func() { stdin.Close() })
	ts.stdin = stdin
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() { ts.done <- sess.Wait() }()
	reading := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := stdout.Read(buf)
			ts.out.Write(buf[:n])
			if err != nil || (stuck && strings.Contains(ts.out.String(), "products")) {
				close(reading)
				return
			}
		}
	}()
	waitOutput(t, ts.out, "products")
	if stuck {
		<-reading
	}
	return ts
}

// waitOutput waits up to 15 seconds for want in out.
func waitOutput(t *testing.T, out *syncBuf, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			s := out.String()
			t.Fatalf("the session never showed %q; its last output: %q", want, s[max(0, len(s)-600):])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServe_StopKeepsDraftsAndLeases: SIGTERM to the real tandem serve with two editor
// sessions open, alice's holding a lease with an unsaved edit and bob's client reading
// nothing and keeping its connection open: alice is told the server is stopping, her lease
// is released in the store, her edit is in her draft on the server, and serve exits 0
// although the clients never close their connections (the wait is bounded by --stop-wait).
func TestServe_StopKeepsDraftsAndLeases(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "team.db")
	madeStoreAt(t, dsn, "seed")
	alice, bob := newKey(t), newKey(t)
	users := writeFile(t, "users.yaml", usersYAML(
		[3]string{"alice", "editor", authorized(alice.PublicKey())},
		[3]string{"bob", "editor", authorized(bob.PublicKey())}))
	drafts := filepath.Join(dir, "drafts")
	const stopWait = 2 * time.Second
	srv := startServe(t, dsn, users, "--draft-dir", drafts, "--stop-wait", stopWait.String())

	as := openServedTUI(t, srv.addr, alice, false)
	openServedTUI(t, srv.addr, bob, true)

	fmt.Fprint(as.stdin, "e")
	deadline := time.Now().Add(15 * time.Second)
	for ls := mustLocks(t, dsn); len(ls) == 0 || ls[0].State == "released"; ls = mustLocks(t, dsn) {
		if time.Now().After(deadline) {
			t.Fatal("alice's e took no lease")
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Fprint(as.stdin, "\t")
	waitOutput(t, as.out, "▸ name")
	// A frame may draw the typed text in pieces; its last character, once shown, says the
	// editor has all of it.
	fmt.Fprint(as.stdin, " left at the stop§")
	waitOutput(t, as.out, "§")

	start := time.Now()
	if code := srv.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exited %d on SIGTERM; stderr: %s", code, srv.stderr)
	}
	took := time.Since(start)
	select {
	case <-as.done:
	case <-time.After(15 * time.Second):
		t.Fatal("alice's session went on after the server stopped")
	}
	if !strings.Contains(as.stderr.String(), "the server is stopping") {
		t.Fatalf("alice's session ended without saying why: %q", as.stderr.String())
	}
	for _, l := range mustLocks(t, dsn) {
		if l.State != "released" {
			t.Fatalf("a lease left %s after SIGTERM, not released: %+v", l.State, l)
		}
	}
	found, _ := filepath.Glob(filepath.Join(drafts, "stores", "*", "alice", "product-1.json"))
	if len(found) != 1 {
		t.Fatalf("alice's drafts after SIGTERM: %v; want product 1's", found)
	}
	if data, err := os.ReadFile(found[0]); err != nil || !strings.Contains(string(data), " left at the stop§") {
		t.Fatalf("alice's draft %s (%v) does not hold her edit", data, err)
	}
	if took > stopWait+10*time.Second {
		t.Fatalf("serve took %s to exit after SIGTERM; its wait is bounded by %s", took, stopWait)
	}
	t.Logf("serve exited %s after SIGTERM (stop wait %s); stderr:\n%s", took, stopWait, srv.stderr)
}
