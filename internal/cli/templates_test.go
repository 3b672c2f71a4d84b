package cli

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-editor/tandem/internal/testfs"
)

// Most process tests start from a new store: an empty one ("tandem init") or one with the
// sample data ("tandem seed", "tandem init --sample"). Making one runs every migration (and
// seed writes 75 records), about a tenth of a second of CPU per process on top of the
// process itself, and a hundred tests make one. madeStore runs the command once per test
// binary for each argument list, into a template, and gives each test a copy of that file
// with a store id of its own, as the command would have made. The commands that make stores
// are tested on new files by their own tests (cmd_seed_test.go, open_test.go), which run
// them as processes and do not use these copies.
var templates struct {
	mu    sync.Mutex
	paths map[string]string // the argument list, joined by NULs: the template's path
	errs  map[string]string // the argument list: why its template could not be made
}

// madeStore returns the path of a new SQLite store in t.TempDir() that holds what "tandem
// ARGS" makes of a file that does not exist: a copy of a template made once, with a new
// random store id, so that no two stores of a test share one (a clone refuses a source
// that is its own copy's store).
func madeStore(t *testing.T, args ...string) string {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "tandem.db")
	madeStoreAt(t, dsn, args...)
	return dsn
}

// madeStoreAt is madeStore at path, a file that does not exist yet.
func madeStoreAt(t *testing.T, path string, args ...string) {
	t.Helper()
	testfs.CopyFile(t, templateFor(t, args...), path)
	setStoreID(t, path)
}

// templateFor returns the template store for args, making it with the binary on first use.
func templateFor(t *testing.T, args ...string) string {
	t.Helper()
	key := strings.Join(args, "\x00")
	templates.mu.Lock()
	defer templates.mu.Unlock()
	if p, ok := templates.paths[key]; ok {
		return p
	}
	if msg, ok := templates.errs[key]; ok {
		t.Fatalf("template store for tandem %s: %s", strings.Join(args, " "), msg)
	}
	if templates.paths == nil {
		templates.paths, templates.errs = map[string]string{}, map[string]string{}
	}
	dir, err := os.MkdirTemp(testDir, "template-")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tandem.db")
	r := tandem(t, path, args...)
	if r.code == 0 {
		// The process closed the store cleanly, so that the file holds everything: SQLite
		// removes the write-ahead log when its last connection closes.
		if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
			r.code, r.stderr = -1, fmt.Sprintf("%s-wal is left beside the store (stat: %v)", path, err)
		}
	}
	if r.code != 0 {
		templates.errs[key] = fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		t.Fatalf("template store for tandem %s: %s", strings.Join(args, " "), templates.errs[key])
	}
	templates.paths[key] = path
	return path
}

// setStoreID gives the store at path a new random store id, as a new store gets one
// (migration 0002_store_meta).
func setStoreID(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	res, err := db.Exec(`UPDATE store_meta SET value = ? WHERE key = 'store_id'`, hex.EncodeToString(b[:]))
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil || n != 1 {
		t.Fatalf("new store id for %s: %d rows changed (%v), want 1", path, n, err)
	}
}
