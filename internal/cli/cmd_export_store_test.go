package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_ExportRefusesTheStoreItReads: -o naming the SQLite store the export reads (the
// file itself, a symbolic or hard link to it, a second name of its directory, its -wal or
// -shm, a working copy's own file), the store a working copy was cloned from, or any other
// SQLite database is refused with exit 2, writes nothing and leaves the store as it was; a
// file beside it is written as always.
func TestCLI_ExportRefusesTheStoreItReads(t *testing.T) {
	besideOthers(t)
	dsn := newSQLiteStore(t)
	mustTandem(t, dsn, "import", writeFile(t, "base.csv", importBase(3)))
	want := mustTandem(t, dsn, "export", "products")
	dir := filepath.Dir(dsn)
	other := t.TempDir()
	if err := os.Symlink(dsn, filepath.Join(other, "link.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(dsn, filepath.Join(other, "hard.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(other, "dir")); err != nil {
		t.Fatal(err)
	}
	before := strings.Join(dirNames(t, dir), " ")

	for _, out := range []string{
		dsn,
		dsn + "-wal",
		dsn + "-shm",
		filepath.Join(other, "link.db"),
		filepath.Join(other, "hard.db"),
		filepath.Join(other, "dir", "tandem.db"),
		filepath.Join(other, "dir", "tandem.db-wal"),
	} {
		r := tandem(t, dsn, "export", "products", "--format", "csv", "-o", out)
		if r.code != 2 || !strings.Contains(r.stderr, "the export would replace the store it reads") {
			t.Errorf("export -o %s: exit %d, stderr %q; want exit 2 and the store named", out, r.code, r.stderr)
		}
		if got := strings.Join(dirNames(t, dir), " "); got != before {
			t.Errorf("export -o %s changed the store's directory: %s, was %s", out, got, before)
		}
		if got := mustTandem(t, dsn, "export", "products"); got != want {
			t.Fatalf("export -o %s changed the store: it exports\n%s\nwant\n%s", out, got, want)
		}
	}
	// Through a linked --db, the -wal SQLite uses is the one beside the link's target.
	link := filepath.Join(other, "link.db")
	if r := tandem(t, link, "export", "products", "--format", "csv", "-o", dsn+"-wal"); r.code != 2 {
		t.Errorf("export --db LINK -o TARGET-wal: exit %d, stderr %q; want exit 2", r.code, r.stderr)
	}

	// A working copy is a SQLite store too.
	copyFile := filepath.Join(t.TempDir(), "copy.db")
	mustTandem(t, dsn, "clone", dsn, copyFile)
	if r := tandem(t, copyFile, "export", "products", "--format", "csv", "-o", copyFile); r.code != 2 {
		t.Errorf("export -o COPY on the copy: exit %d, stderr %q; want exit 2", r.code, r.stderr)
	}
	if got := mustTandem(t, copyFile, "export", "products"); got != want {
		t.Errorf("the copy exports\n%s\nwant\n%s", got, want)
	}
	// Nor may an export of the copy replace the store it was cloned from and syncs with.
	for _, out := range []string{dsn, filepath.Join(other, "link.db")} {
		r := tandem(t, copyFile, "export", "products", "--format", "csv", "-o", out)
		if r.code != 2 || !strings.Contains(r.stderr, "the store this working copy was cloned from") {
			t.Errorf("export -o SOURCE on the copy (%s): exit %d, stderr %q; want exit 2 and the source named", out, r.code, r.stderr)
		}
	}
	if got := strings.Join(dirNames(t, dir), " "); got != before {
		t.Errorf("export -o SOURCE on the copy changed the source's directory: %s, was %s", got, before)
	}
	if got := mustTandem(t, dsn, "export", "products"); got != want {
		t.Errorf("export -o SOURCE on the copy changed the source: it exports\n%s\nwant\n%s", got, want)
	}

	// Nor any other SQLite database: another store (here a second working copy, whose
	// edits would be lost) or another program's.
	second := filepath.Join(t.TempDir(), "second.db")
	mustTandem(t, dsn, "clone", dsn, second)
	secondSum := sum(t, second)
	if r := tandem(t, dsn, "export", "products", "--format", "csv", "-o", second); r.code != 2 || !strings.Contains(r.stderr, "is an SQLite database") {
		t.Errorf("export -o ANOTHER-STORE: exit %d, stderr %q; want exit 2 and the database named", r.code, r.stderr)
	}
	if sum(t, second) != secondSum {
		t.Errorf("export -o ANOTHER-STORE changed it")
	}

	beside := filepath.Join(dir, "products.csv")
	mustTandem(t, dsn, "export", "products", "-o", beside)
	if got, _ := os.ReadFile(beside); string(got) != want {
		t.Errorf("export -o beside the store wrote\n%s\nwant\n%s", got, want)
	}
}
