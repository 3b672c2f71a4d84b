package cli

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestE2E_CopyConflictFromCLISync: the TUI runs on a working copy in a real terminal while
// a real `tandem sync` process, in another terminal, leaves two conflicts: an edit the
// source changed too, and a new product whose sku the source took meanwhile. Without any
// key pressed in the TUI, its list marks both rows with ! and says the conflict as a
// sentence; the edited record's editor shows the banner, and ctrl+g opens its merge view;
// the refused create's screen says why and offers the ways out.
func TestE2E_CopyConflictFromCLISync(t *testing.T) {
	tm := newTmuxServer(t)
	dir := t.TempDir()
	src, copyFile := filepath.Join(dir, "src.db"), filepath.Join(dir, "copy.db")
	madeStoreAt(t, src, "seed")
	mustTandem(t, src, "clone", src, copyFile)
	mustTandem(t, copyFile, "set", "product", "42", "name=Mine lamp", "--expect-version", "1")
	mustTandem(t, src, "set", "product", "42", "name=Their lamp", "--expect-version", "1")
	out := mustTandem(t, copyFile, "create", "product", "sku=NEW-1", "name=Copy lamp")
	m := regexp.MustCompile(`created product (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("create said %q", out)
	}
	theirs := regexp.MustCompile(`created product (\d+)`).FindStringSubmatch(mustTandem(t, src, "create", "product", "sku=NEW-1", "name=Source lamp"))

	tm.start("tui", fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db %s --user erin",
		filepath.Join(dir, "cache"), binary, copyFile))
	tm.waitFor("tui", "offline copy of src.db", "0 conflicts")

	// tandem sync in another terminal: exit 3, conflicts remain.
	if r := tandem(t, copyFile, "sync"); r.code != 3 {
		t.Fatalf("tandem sync: exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
	}
	tm.waitFor("tui", "2 conflicts", "a sync left 2 conflicts: product 42: name changed on both sides.")

	// The edited record: its editor's banner, and ctrl+g opens the merge view.
	tm.keys("tui", "/")
	tm.text("tui", "LGT-1042")
	tm.keys("tui", "Enter")
	mustMarked(t, tm.waitFor("tui", "1 of 1 matching"), "42")
	tm.keys("tui", "Enter")
	tm.waitFor("tui", "conflict from a sync: product 42: name changed on both sides · ctrl+g opens it")
	tm.keys("tui", "C-g")
	tm.waitFor("tui", "name changed on both sides:", "Mine lamp", "Their lamp")
	tm.keys("tui", "Escape")
	tm.waitFor("tui", "lock: free · saves check the version") // the editor again
	tm.keys("tui", "Escape")
	tm.waitFor("tui", "[ products ]")

	// The refused create.
	tm.keys("tui", "/")
	tm.keys("tui", "C-u")
	tm.text("tui", "NEW-1")
	tm.keys("tui", "Enter")
	mustMarked(t, tm.waitFor("tui", `1 of 1 matching "NEW-1"`), m[1])
	tm.keys("tui", "Enter")
	tm.waitFor("tui", "conflict from a sync: the source refused the new product "+m[1])
	tm.keys("tui", "C-g")
	// The reason wraps at the width: its two halves.
	tm.waitFor("tui", "the source refused it: sku NEW-1 is taken on the source by", "product "+theirs[1]+".", "give sku another value", "drop the new product")
	tm.keys("tui", "C-c")
}

// mustMarked checks that the list on screen scr marks the row of record id with ! (the
// second cell of the row, after the cursor's).
func mustMarked(t *testing.T, scr, id string) {
	t.Helper()
	for _, l := range strings.Split(scr, "\n") {
		r := []rune(l)
		if len(r) < 3 {
			continue
		}
		if f := strings.Fields(string(r[2:])); len(f) > 0 && f[0] == id {
			if r[1] != '!' {
				t.Fatalf("the row of %s is not marked !: %q", id, l)
			}
			return
		}
	}
	t.Fatalf("no row of %s:\n%s", id, scr)
}
