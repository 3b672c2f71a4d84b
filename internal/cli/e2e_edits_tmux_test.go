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

// editsTUI is the command that runs the TUI for user on dsn, its drafts under dir, with
// the environment variables env (NAME=value) added.
func editsTUI(dir, dsn, user string, env ...string) string {
	return fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s %s --db '%s' --user %s",
		filepath.Join(dir, "cache-"+user), strings.Join(env, " "), binary, dsn, user)
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
	waitsBeside(t)
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

// TestE2E_BringBackKeepsTheirWork is the two-terminal demo (docs/demo.md) with the roles turned
// round, then the other ways edits come back. Bob changes product 42's price; alice saves a
// new description and price (v2); bob brings his edits back: after reload (r, then ctrl+r),
// as the draft a crash left, or as the draft kept when alice took the lease (with part of
// his edits made in $EDITOR). His price collides with hers and opens the merge view (he
// keeps his); her description, which he did not touch, stays hers in the store.
func TestE2E_BringBackKeepsTheirWork(t *testing.T) {
	waitsBeside(t)
	for _, b := range backends(t) {
		for _, way := range []string{"reload", "crash", "lease"} {
			t.Run(b.name+"/"+way, func(t *testing.T) {
				bringBackE2E(t, b, way)
			})
		}
	}
}

func bringBackE2E(t *testing.T, b backend, way string) {
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := b.seeded(t)
	editor := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf 'Bob closes the text.\\n' >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.start("keep", "sleep 600")
	tm.start("alice", editsTUI(dir, dsn, "alice"))
	tm.start("bob", editsTUI(dir, dsn, "bob", "EDITOR="+editor))
	open42 := func(who, key string) {
		tm.waitFor(who, "[ products ]", "1 of ")
		tm.keys(who, "/")
		tm.text(who, "LGT-1042")
		tm.keys(who, "Enter")
		tm.waitFor(who, "1 of 1 matching")
		tm.keys(who, key)
	}
	open42("alice", "Enter")
	tm.waitFor("alice", "product 42 · v1")
	open42("bob", "Enter")
	tm.waitFor("bob", "product 42 · v1")

	if way == "lease" {
		// Part of bob's edits comes from $EDITOR: a line at the end of the description.
		tm.keys("bob", "Tab", "Tab")
		tm.waitFor("bob", "▸ description")
		tm.keys("bob", "C-e")
		tm.waitFor("bob", "took the text back from")
		tm.keys("bob", "Tab", "Tab")
	} else {
		tm.keys("bob", "Tab", "Tab", "Tab", "Tab")
	}
	tm.waitFor("bob", "▸ price")
	tm.keys("bob", "C-u")
	tm.text("bob", "95.00")
	tm.keys("bob", "Tab") // a field change writes the draft
	tm.waitFor("bob", "▸ stock")

	switch way {
	case "crash":
		waitDraft(t, filepath.Join(dir, "cache-bob"))
		pid := tm.pid("bob")
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitExit(t, pid)
	case "lease":
		tm.keys("alice", "Escape")
		tm.waitFor("alice", "[ products ]")
		tm.keys("alice", "e")
		tm.waitFor("alice", "product 42 · v1", "lease: you, ")
		tm.waitFor("bob", "alice took the lease", "your edits are kept as a draft")
		tm.keys("bob", "Escape")
		tm.waitFor("bob", "[ products ]")
	}

	// Alice: a line at the top of the description, then her own price.
	tm.keys("alice", "Tab", "Tab")
	tm.waitFor("alice", "▸ description")
	tm.text("alice", "Now with a dimmer. ")
	tm.keys("alice", "Tab", "Tab")
	tm.waitFor("alice", "▸ price")
	tm.keys("alice", "C-u")
	tm.text("alice", "92.00")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "saved v2")
	tm.keys("alice", "Escape") // leaves, releasing her lease
	tm.waitFor("alice", "[ products ]")

	switch way {
	case "reload":
		tm.keys("bob", "C-s")
		tm.waitFor("bob", "collide:      price")
		tm.keys("bob", "r")
		tm.waitFor("bob", "their changes, now v2")
		tm.keys("bob", "C-r")
	case "crash":
		tm.start("bob2", editsTUI(dir, dsn, "bob"))
		open42("bob2", "Enter")
		tm.waitFor("bob2", "Unsaved edits from")
		tm.keys("bob2", "y")
	case "lease":
		tm.keys("bob", "Enter")
		tm.waitFor("bob", "Unsaved edits from")
		tm.keys("bob", "y")
	}
	who := "bob"
	if way == "crash" {
		who = "bob2"
	}
	// (tandem before the merge said "draft … restored" and put the whole old form back)
	scr := tm.waitForAny(who, "conflict left", "back on top of v2", "restored (made on")
	if strings.Contains(scr, "conflict left") {
		tm.waitFor(who, "1 of 1 conflict left", "price")
		tm.keys(who, "1")
		tm.waitFor(who, "0 of 1 conflict left")
	}
	tm.keys(who, "C-s")
	tm.waitFor(who, "saved v3")

	r := tandem(t, dsn, "get", "product", "42", "--json")
	var got struct {
		Version int64          `json:"version"`
		Fields  map[string]any `json:"fields"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("get --json: %v\n%s", err, r.stdout)
	}
	desc, _ := got.Fields["description"].(string)
	if !strings.HasPrefix(desc, "Now with a dimmer. A heavy brass base") {
		t.Errorf("alice's description was reverted: %q", desc)
	}
	if way == "lease" && !strings.HasSuffix(desc, "Bob closes the text.\n") {
		t.Errorf("bob's line from $EDITOR was lost: %q", desc)
	}
	if got.Fields["price"] != "95.00" {
		t.Errorf("price = %v, want bob's 95.00 (kept in the merge view)", got.Fields["price"])
	}
}

// waitDraft waits until a draft file exists under the cache directory dir.
func waitDraft(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, "tandem", "drafts", "stores", "*", "*", "product-42.json")); len(m) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no draft under %s after 15 s", dir)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitForAny polls the session's screen until it contains one of wants, and returns it.
func (s *tmuxServer) waitForAny(name string, wants ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		scr := s.screen(name)
		for _, w := range wants {
			if strings.Contains(scr, w) {
				return scr
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s's terminal never showed any of %q; it shows:\n%s", name, wants, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2E_MergePreviewIsWhatIsSaved: bob and alice each change one word of the same line of
// product 42's description (in $EDITOR); alice's save meets bob's, she merges, takes the
// word-level merge (w, enter), and the preview the merge view shows is, line for line, the
// description the store holds after ctrl+s.
func TestE2E_MergePreviewIsWhatIsSaved(t *testing.T) {
	waitsBeside(t)
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "demo.db")
	madeStoreAt(t, dsn, "seed")
	sed := func(who, from, to string) string {
		p := filepath.Join(dir, "editor-"+who+".sh")
		if err := os.WriteFile(p, []byte(fmt.Sprintf("#!/bin/sh\nsed -i 's/%s/%s/' \"$1\"\n", from, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tm.start("alice", editsTUI(dir, dsn, "alice", "EDITOR="+sed("alice", "natural", "undyed")))
	tm.start("bob", editsTUI(dir, dsn, "bob", "EDITOR="+sed("bob", "heavy", "solid")))
	for _, who := range []string{"bob", "alice"} {
		tm.waitFor(who, "[ products ]", "1 of ")
		tm.keys(who, "/")
		tm.text(who, "LGT-1042")
		tm.keys(who, "Enter")
		tm.waitFor(who, "1 of 1 matching")
		tm.keys(who, "Enter")
		tm.waitFor(who, "product 42 · v1")
	}
	for _, who := range []string{"bob", "alice"} {
		tm.keys(who, "Tab", "Tab")
		tm.waitFor(who, "▸ description")
		tm.keys(who, "C-e")
		tm.waitFor(who, "took the text back from")
		tm.keys(who, "C-s")
		if who == "bob" {
			tm.waitFor("bob", "saved v2")
		}
	}
	tm.waitFor("alice", "collide:      description")
	tm.keys("alice", "m")
	tm.waitFor("alice", "1 of 1 conflict left")
	tm.keys("alice", "w")
	tm.waitFor("alice", "word-level merge")
	tm.keys("alice", "Enter")
	scr := tm.waitFor("alice", "0 of 1 conflict left", "description will be written as")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "saved v3")

	r := tandem(t, dsn, "get", "product", "42", "--json")
	var got struct {
		Fields map[string]any `json:"fields"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("get --json: %v\n%s", err, r.stdout)
	}
	desc, _ := got.Fields["description"].(string)
	saved := strings.Split(strings.TrimSuffix(desc, "\n"), "\n")
	if !strings.HasPrefix(saved[0], "A solid brass base") || !strings.Contains(saved[0], "undyed linen") {
		t.Fatalf("the saved description does not hold both words: %q", desc)
	}
	lines := strings.Split(scr, "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "description will be written as") {
			at = i + 1
		}
	}
	if at < 0 || at+len(saved) > len(lines) {
		t.Fatalf("no whole preview on the screen:\n%s", scr)
	}
	for i, want := range saved {
		got := []rune(strings.TrimRight(lines[at+i], " "))
		if len(got) >= 2 {
			got = got[2:] // the origin mark
		} else {
			got = nil
		}
		if string(got) != want {
			t.Fatalf("preview line %d is %q, the saved line is %q; screen:\n%s", i+1, string(got), want, scr)
		}
	}
}

// waitUntil polls cond until it holds, failing after 15 s with what it waited for.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after 15 s for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestE2E_SignalWhileExternalEditorRuns: alice holds the lease on product 1 and edits its
// name in $EDITOR; her TUI gets SIGTERM while the editor runs. The lease is released at once;
// the editor, still open, is saved and closed afterwards: its text goes to her draft (not
// only what she had typed before), offered when she opens the record again.
func TestE2E_SignalWhileExternalEditorRuns(t *testing.T) {
	waitsBeside(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			tm := newTmuxServer(t)
			dir := t.TempDir()
			dsn := b.seeded(t)
			started, goOn := filepath.Join(dir, "started"), filepath.Join(dir, "go")
			editor := filepath.Join(dir, "editor.sh")
			script := fmt.Sprintf("#!/bin/sh\ntouch %s\nwhile [ ! -e %s ]; do sleep 0.05; done\nprintf 'Named in the editor\\n' > \"$1\"\n", started, goOn)
			if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			tm.start("keep", "sleep 600")
			tm.start("alice", editsTUI(dir, dsn, "alice", "EDITOR="+editor))
			tm.waitFor("alice", "[ products ]", "1 of ")
			tm.keys("alice", "e")
			tm.waitFor("alice", "product 1 · v1", "lease: you, ")
			tm.keys("alice", "Tab")
			tm.waitFor("alice", "▸ name")
			tm.keys("alice", "C-e")
			waitUntil(t, "the editor to start", func() bool { _, err := os.Stat(started); return err == nil })
			pid := tm.pid("alice")
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "the lease to be released", func() bool { return len(liveLocks(t, dsn)) == 0 })
			if err := os.WriteFile(goOn, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			waitExit(t, pid)
			drafts, _ := filepath.Glob(filepath.Join(dir, "cache-alice", "tandem", "drafts", "stores", "*", "alice", "product-1.json"))
			if len(drafts) != 1 {
				t.Fatalf("drafts %v, want product 1's", drafts)
			}
			data, err := os.ReadFile(drafts[0])
			if err != nil || !strings.Contains(string(data), "Named in the editor") {
				t.Fatalf("draft %s (%v) does not hold the text from the editor", data, err)
			}
			tm.start("again", editsTUI(dir, dsn, "alice"))
			tm.waitFor("again", "[ products ]", "1 of ")
			tm.keys("again", "Enter")
			tm.waitFor("again", "Unsaved edits from")
		})
	}
}
