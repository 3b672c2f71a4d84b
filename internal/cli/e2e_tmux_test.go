package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmuxServer is one private tmux server (its own socket) running tandem TUIs in real
// terminals.
type tmuxServer struct {
	t      *testing.T
	socket string
}

func newTmuxServer(t *testing.T) *tmuxServer {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the end-to-end terminal test needs it")
	}
	s := &tmuxServer{t: t, socket: fmt.Sprintf("tandem-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// start runs command in a new 100x30 session called name.
func (s *tmuxServer) start(name, command string) {
	s.t.Helper()
	s.run("new-session", "-d", "-x", "100", "-y", "30", "-s", name, command)
}

// keys sends tmux key names (Enter, Tab, C-s, Escape) to a session.
func (s *tmuxServer) keys(name string, keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		s.run("send-keys", "-t", name, k)
	}
}

// text types literal text into a session.
func (s *tmuxServer) text(name, text string) {
	s.t.Helper()
	s.run("send-keys", "-t", name, "-l", text)
}

// screen is what the session's terminal shows now.
func (s *tmuxServer) screen(name string) string {
	s.t.Helper()
	return s.run("capture-pane", "-p", "-t", name)
}

// waitFor polls the session's screen until it contains every one of wants, or fails after a
// deadline with the screen it saw last.
func (s *tmuxServer) waitFor(name string, wants ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		scr := s.screen(name)
		ok := true
		for _, w := range wants {
			if !strings.Contains(scr, w) {
				ok = false
				break
			}
		}
		if ok {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s's terminal never showed %q; it shows:\n%s", name, wants, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2E_TwoTerminalDemo drives the two-terminal demo (docs/demo.md) in real terminals: alice and
// bob open product 42; bob saves a new price; alice, still on version 1, changes the
// description and the price, saves, sees the conflict dialog, merges (keeping her price)
// and saves. The record in the store is then checked with `tandem get --json`.
func TestE2E_TwoTerminalDemo(t *testing.T) {
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "demo.db")
	madeStoreAt(t, dsn, "seed")
	tui := func(user string) string {
		// exec keeps the pane's process the TUI; drafts go to the test's directory.
		return fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db %s --user %s",
			filepath.Join(dir, "cache-"+user), binary, dsn, user)
	}
	tm.start("alice", tui("alice"))
	tm.start("bob", tui("bob"))

	open42 := func(who string) {
		tm.waitFor(who, "[ products ]", "1 of 60")
		tm.keys(who, "/")
		tm.text(who, "LGT-1042")
		tm.keys(who, "Enter")
		tm.waitFor(who, "1 of 1 matching")
		tm.keys(who, "Enter")
		tm.waitFor(who, "product 42 · v1", "Brass desk lamp with linen shade")
	}
	open42("alice")
	open42("bob")
	captures := map[string]string{"list (bob, filtered)": ""}

	// Bob: price is the fifth field (sku, name, description, categories, price).
	tm.keys("bob", "Tab", "Tab", "Tab", "Tab")
	tm.waitFor("bob", "▸ price")
	tm.keys("bob", "C-u")
	tm.text("bob", "95.00")
	tm.keys("bob", "C-s")
	tm.waitFor("bob", "saved v2")

	// Alice sees bob's save while she is still editing.
	captures["editor with live banner (alice)"] = tm.waitFor("alice", "bob saved v2 (price); you are editing v1")

	// Alice: a line at the top of the description, then her own price.
	tm.keys("alice", "Tab", "Tab")
	tm.waitFor("alice", "▸ description")
	tm.text("alice", "Now with a dimmer. ")
	tm.keys("alice", "Tab", "Tab")
	tm.waitFor("alice", "▸ price")
	tm.keys("alice", "C-u")
	tm.text("alice", "92.00")
	tm.keys("alice", "C-s")
	captures["conflict dialog (alice)"] = tm.waitFor("alice", "collide:      price", "m  merge field by field")

	tm.keys("alice", "m")
	captures["merge view (alice)"] = tm.waitFor("alice", "1 of 1 conflict left", "1 mine   92.00", "2 theirs 95.00")
	tm.keys("alice", "1")
	captures["merge view resolved (alice)"] = tm.waitFor("alice", "0 of 1 conflict left")
	tm.keys("alice", "C-s")
	captures["saved (alice)"] = tm.waitFor("alice", "merged with bob's v2; saved v3")
	// Bob's list or editor learns of alice's save too.
	tm.waitFor("bob", "alice saved v3")

	for _, name := range []string{"editor with live banner (alice)", "conflict dialog (alice)", "merge view (alice)", "saved (alice)"} {
		t.Logf("%s:\n%s", name, captures[name])
	}

	r := tandem(t, dsn, "get", "product", "42", "--json")
	if r.code != 0 {
		t.Fatalf("get: exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		Version   int64          `json:"version"`
		UpdatedBy string         `json:"updated_by"`
		Fields    map[string]any `json:"fields"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("get --json: %v\n%s", err, r.stdout)
	}
	if got.Version != 3 || got.UpdatedBy != "alice" {
		t.Errorf("version %d by %s, want 3 by alice", got.Version, got.UpdatedBy)
	}
	if got.Fields["price"] != "92.00" {
		t.Errorf("price = %v, want alice's 92.00 picked in the merge", got.Fields["price"])
	}
	if d, _ := got.Fields["description"].(string); !strings.HasPrefix(d, "Now with a dimmer. A heavy brass base") {
		t.Errorf("description lost alice's edit: %q", d)
	}

	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ products ]")
	tm.keys("alice", "q")
}

// TestE2E_ExternalEditor edits a description in $EDITOR (ctrl+e): the TUI hands the terminal
// to the editor, takes the text back and saves it.
func TestE2E_ExternalEditor(t *testing.T) {
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "demo.db")
	madeStoreAt(t, dsn, "seed")
	editor := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf 'Written in the external editor.\\n' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.start("carol", fmt.Sprintf("exec env XDG_CACHE_HOME=%s EDITOR=%s TERM=xterm-256color %s --db %s --user carol",
		filepath.Join(dir, "cache"), editor, binary, dsn))
	tm.waitFor("carol", "[ products ]", "1 of 60")
	tm.keys("carol", "Enter")
	tm.waitFor("carol", "product 1 · v1")
	tm.keys("carol", "Tab", "Tab")
	tm.waitFor("carol", "▸ description")
	tm.keys("carol", "C-e")
	tm.waitFor("carol", "took the text back from "+editor, "Written in the external editor.")
	tm.keys("carol", "C-s")
	tm.waitFor("carol", "saved v2")
	r := tandem(t, dsn, "get", "product", "1", "--json")
	var got struct {
		Fields map[string]any `json:"fields"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("get --json: %v\n%s", err, r.stdout)
	}
	if d := got.Fields["description"]; d != "Written in the external editor.\n" {
		t.Fatalf("description = %q", d)
	}
}

// pid is the process id of the program a session runs (its pane's process: the sessions
// exec the TUI, so it is tandem itself).
func (s *tmuxServer) pid(name string) int {
	s.t.Helper()
	var pid int
	out := strings.TrimSpace(s.run("display-message", "-p", "-t", name, "#{pane_pid}"))
	if _, err := fmt.Sscan(out, &pid); err != nil || pid <= 0 {
		s.t.Fatalf("pane pid of %s: %q", name, out)
	}
	return pid
}

// TestE2E_ReadOnlyUnlocksAfterHolderKilled: alice takes a lease (e) on product 7 with a 3 s
// TTL; bob opens it and sees it read-only; alice's process is SIGKILLed, so nobody releases
// the lease; bob's editor becomes editable by itself, no key pressed, within TTL + 2 s of the
// kill (the lease may have been renewed just before it).
func TestE2E_ReadOnlyUnlocksAfterHolderKilled(t *testing.T) {
	waitsBeside(t)
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "demo.db")
	madeStoreAt(t, dsn, "seed")
	const ttl = 3 * time.Second
	tui := func(user string) string {
		return fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db %s --user %s --lease-ttl %s",
			filepath.Join(dir, "cache-"+user), binary, dsn, user, ttl)
	}
	tm.start("alice", tui("alice"))
	tm.start("bob", tui("bob"))
	for _, who := range []string{"alice", "bob"} {
		tm.waitFor(who, "[ products ]", "1 of 60")
		tm.keys(who, "j", "j", "j", "j", "j", "j")
		tm.waitFor(who, "7 of 60")
	}
	tm.keys("alice", "e")
	tm.waitFor("alice", "product 7 · v1", "lease: you")
	tm.keys("bob", "Enter")
	tm.waitFor("bob", "product 7 · v1", "read-only: held by alice since")

	pid := tm.pid("alice")
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill alice's tandem (pid %d): %v", pid, err)
	}
	killed := time.Now()

	deadline := killed.Add(ttl + 2*time.Second)
	for {
		scr := tm.screen("bob")
		if strings.Contains(scr, "alice's lease expired") && strings.Contains(scr, "you can edit") &&
			!strings.Contains(scr, "read-only") {
			t.Logf("bob editable %v after the kill:\n%s", time.Since(killed).Round(100*time.Millisecond), scr)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's editor still not editable %v after alice was killed (TTL %v); it shows:\n%s",
				time.Since(killed).Round(100*time.Millisecond), ttl, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Editable for real: a typed name is saved without anyone pressing anything else first.
	tm.keys("bob", "Tab")
	tm.waitFor("bob", "▸ name")
	tm.text("bob", " (bob)")
	tm.keys("bob", "C-s")
	tm.waitFor("bob", "saved v2")
}

// TestE2E_MoveDocument moves a document from the editor in a real terminal on a SQLite store:
// the tree picker, a cycle refused in the store's words, then a move that the store keeps.
func TestE2E_MoveDocument(t *testing.T) {
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "demo.db")
	madeStoreAt(t, dsn, "seed")
	tm.start("carol", fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db %s --user carol",
		filepath.Join(dir, "cache"), binary, dsn))
	tm.waitFor("carol", "[ products ]")
	tm.keys("carol", "Tab")
	tm.waitFor("carol", "[ documents ]", "How we work")
	for range 5 {
		tm.keys("carol", "j")
	}
	tm.waitFor("carol", "6 of 15")
	tm.keys("carol", "e")
	tm.waitFor("carol", "document 6 · v1", "lease: you")
	tm.keys("carol", "C-o")
	tm.waitFor("carol", "Put it under:", "(this document)")
	for range 6 { // from the current parent (1) to 7, which is inside 6
		tm.keys("carol", "j")
	}
	tm.keys("carol", "Enter")
	tm.waitFor("carol", "move: moving 6 under 7 would create a cycle")
	for range 3 { // to 10 · On call
		tm.keys("carol", "j")
	}
	tm.keys("carol", "Enter")
	t.Logf("after the move:\n%s", tm.waitFor("carol", "moved under 10 · On call → v2"))

	r := tandem(t, dsn, "get", "document", "6", "--json")
	var got struct {
		Version int64          `json:"version"`
		Fields  map[string]any `json:"fields"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("get --json: %v\n%s", err, r.stdout)
	}
	if got.Version != 2 || got.Fields["parent_id"] != float64(10) {
		t.Fatalf("document 6: v%d parent %v, want v2 under 10", got.Version, got.Fields["parent_id"])
	}
}

// TestE2E_FirstRuns starts several TUIs at once, each in a terminal of its own, on one file
// that does not exist yet: exactly one creates the store and fills it with the sample data
// (and says so, on stderr), the others open what it made, every one shows the full list, and
// the store holds the sample data once in a file of mode 0600.
func TestE2E_FirstRuns(t *testing.T) {
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "first.db")
	const procs = 4
	for i := range procs {
		tm.start(fmt.Sprint("tui", i), fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db %s --user u%d 2>%s",
			filepath.Join(dir, "cache"), binary, dsn, i, filepath.Join(dir, fmt.Sprint("stderr", i))))
	}
	creators := 0
	want := fmt.Sprintf("tandem: created %s with %d products and %d documents\n", dsn, defaultSeedProducts, defaultSeedDocuments)
	for i := range procs {
		tm.waitFor(fmt.Sprint("tui", i), "[ products ]", fmt.Sprintf("1 of %d", defaultSeedProducts))
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprint("stderr", i)))
		if err != nil {
			t.Fatal(err)
		}
		switch string(b) {
		case want:
			creators++
		case "":
		default:
			t.Errorf("TUI %d wrote %q on stderr", i, b)
		}
	}
	if creators != 1 {
		t.Errorf("%d TUIs say they created the store, want 1", creators)
	}
	if fi, err := os.Stat(dsn); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("the store's file has mode %o, want 600", fi.Mode().Perm())
	}
	var products []record
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "products", "--json")), &products); err != nil {
		t.Fatal(err)
	}
	if len(products) != defaultSeedProducts {
		t.Errorf("store holds %d products, want the sample once (%d)", len(products), defaultSeedProducts)
	}
}
