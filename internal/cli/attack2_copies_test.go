//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tandem copies forget refuses a copy that another tandem has open: that process would go
// on writing its edits into the removed file and lose them when it exits. Once it is
// closed, the copy is forgotten.
func TestCopiesForget_RefusesAnOpenCopy(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	mustTandem(t, src, "seed", "--products", "3", "--documents", "0")
	env := []string{"XDG_DATA_HOME=" + filepath.Join(dir, "data"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config")}
	run := func(dsn string, args ...string) result {
		c := tandemCmd(dsn, args...)
		c.Env = append(c.Env, env...)
		return runResult(t, c, args)
	}
	wantExit(t, "the first --local run", run(src, "--local", "list", "products"), 0)
	var cs []jsonCopy
	if r := run(src, "copies", "--json"); json.Unmarshal([]byte(r.stdout), &cs) != nil || len(cs) != 1 {
		t.Fatalf("tandem copies: %q %s", r.stdout, r.stderr)
	}
	path, id := cs[0].Path, cs[0].ID

	// Another tandem with the copy open: a watch on it.
	w := tandemCmd(path, "watch")
	w.Env = append(w.Env, env...)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Process.Kill(); _ = w.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for openedBy(path) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the watch never had the copy open")
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantExit(t, "forget of an open copy", run(src, "copies", "forget", id), 2, "open in another tandem")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the open copy was removed: %v", err)
	}

	_ = w.Process.Kill()
	_ = w.Wait()
	r := run(src, "copies", "forget", id)
	wantExit(t, "forget once the watch ended", r, 0, "forgot")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the copy is still there after forget: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.sync.lock")); len(left) > 0 {
		t.Errorf("forget left its lock behind: %v", left)
	}
}
