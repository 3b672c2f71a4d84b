package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestSourceLocation: a working copy keeps where its source is, never its password.
func TestSourceLocation(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://alice:s3cret@db.example:5432/tandem?sslmode=require": "postgres://alice@db.example:5432/tandem?sslmode=require",
		"postgresql://bob@db/x?password=s3cret&sslmode=disable":          "postgresql://bob@db/x?sslmode=disable",
		"host=db password='s3cret' dbname=tandem":                        "host=db dbname=tandem",
		`host=db password=s3\ cret\'TAIL dbname=tandem`:                  "host=db dbname=tandem",
		`password='it\'s s3cret' host=db dbname='my db'`:                 `host=db dbname='my db'`,
	} {
		got, err := sourceLocation(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if got != want || strings.Contains(got, "s3cret") {
			t.Errorf("sourceLocation(%q) = %q, want %q", dsn, got, want)
		}
	}
	got, err := sourceLocation("team.db")
	if err != nil || !filepath.IsAbs(got) || filepath.Base(got) != "team.db" {
		t.Errorf("sourceLocation(team.db) = %q, %v; want an absolute path", got, err)
	}
}

// TestCLI_CloneLeftovers: what a killed clone left next to FILE (its temporary database and
// the file SQLite's create makes before it) is removed by the next clone, which succeeds.
func TestCLI_CloneLeftovers(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	team, file := filepath.Join(dir, "team.db"), filepath.Join(dir, "k.db")
	madeStoreAt(t, team, "init", "--sample")
	left := []string{".k.db.clone", ".k.db.clone-wal", ".k.db.clone-shm",
		"..k.db.clone.new-0a1b2c3d4e5f", "..k.db.clone.new-0a1b2c3d4e5f-wal", "..k.db.clone.new-0a1b2c3d4e5f-shm"}
	for _, n := range left {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("left by a killed clone"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustTandem(t, team, "clone", team, file)
	mustTandem(t, file, "status")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".k.db") || strings.HasPrefix(e.Name(), "..k.db") {
			t.Errorf("left after the clone: %s", e.Name())
		}
	}
}

// TestCLI_CloneConcurrent: a clone into a FILE another clone is making is refused with a
// message saying so; of several clone processes into one FILE at once exactly one makes it,
// and each other one says why it did not.
func TestCLI_CloneConcurrent(t *testing.T) {
	dir := t.TempDir()
	team, file := filepath.Join(dir, "team.db"), filepath.Join(dir, "k.db")
	madeStoreAt(t, team, "init", "--sample")

	unlock, ok, err := lockClone(filepath.Join(dir, ".k.db.clone.lock"))
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	if r := tandem(t, team, "clone", team, file); r.code != 2 || !strings.Contains(r.stderr, "another tandem clone into") {
		t.Errorf("clone while another holds the lock: exit %d %q, want 2", r.code, r.stderr)
	}
	unlock()
	if _, err := os.Stat(file); err == nil {
		t.Fatalf("the refused clone made %s", file)
	}

	const n = 4
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = tandem(t, team, "clone", team, file)
		}()
	}
	wg.Wait()
	won := 0
	for _, r := range results {
		switch {
		case r.code == 0:
			won++
		case r.code == 2 && (strings.Contains(r.stderr, "another tandem clone into") || strings.Contains(r.stderr, "exists")):
		default:
			t.Errorf("concurrent clone: exit %d %q", r.code, r.stderr)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d concurrent clones made the file, want 1", won, n)
	}
	mustTandem(t, file, "status")
}

// TestCLI_CloneIntoDirectory: a FILE that is a directory is refused (exit 2) saying it is a
// directory and how to name a file in it, not "remove it"; the directory is left as it was.
func TestCLI_CloneIntoDirectory(t *testing.T) {
	dir := t.TempDir()
	team := filepath.Join(dir, "team.db")
	madeStoreAt(t, team, "init", "--sample")
	into := filepath.Join(dir, "copies")
	if err := os.Mkdir(into, 0o755); err != nil {
		t.Fatal(err)
	}
	r := tandem(t, team, "clone", team, into)
	want := into + " is a directory: clone makes a new file; name it (for example " + filepath.Join(into, "copy.db") + ")"
	if r.code != exitUsage || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "remove it") {
		t.Errorf("clone into a directory: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitUsage, want)
	}
	if names := dirNames(t, into); len(names) > 0 {
		t.Errorf("the refused clone made %v", names)
	}
}

// TestCLI_CloneIntoSourceCompanion: FILE named like the SQLite source's -journal, -wal or
// -shm (here or by another spelling of its directory) is refused (exit 2) before anything is
// written: SQLite takes an existing SOURCE-journal for a crashed write's hot journal and
// deletes it at the next open of the source, so a copy there was lost at its first sync,
// its offline edits with it.
func TestCLI_CloneIntoSourceCompanion(t *testing.T) {
	dir := t.TempDir()
	team := filepath.Join(dir, "team.db")
	madeStoreAt(t, team, "init", "--sample")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{
		team + "-journal",
		filepath.Join(dir, "sub", "..", "team.db-journal"),
		team + "-wal",
		team + "-shm",
	} {
		r := tandem(t, team, "clone", team, file)
		if r.code != exitUsage || !strings.Contains(r.stderr, "is the source's") {
			t.Errorf("clone into %s: exit %d, stderr %q; want %d and \"is the source's\"", file, r.code, r.stderr, exitUsage)
		}
	}
	for _, n := range dirNames(t, dir) {
		if n != "team.db" && n != "sub" && !strings.HasPrefix(n, "team.db-") {
			t.Errorf("a refused clone left %s", n)
		}
	}
	if _, err := os.Stat(team + "-journal"); err == nil {
		t.Errorf("a refused clone made %s-journal", team)
	}
	mustTandem(t, team, "list", "products", "--limit", "1")
}
