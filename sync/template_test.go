package sync_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	gosync "sync"
	"testing"

	"github.com/tandem-editor/tandem/internal/testfs"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// TestMain removes the template store openNew makes.
func TestMain(m *testing.M) {
	code := m.Run()
	if template.dir != "" {
		os.RemoveAll(template.dir)
	}
	os.Exit(code)
}

// template is an empty, migrated SQLite store made once per test binary. A fresh open runs
// every migration (about 50 ms, most of a second under the race detector) and these tests
// open a few hundred stores, a source and its copies in each; openNew copies the template
// instead and gives the copy a store id of its own, as store/sqlite's own tests do. The
// migrations themselves are tested on fresh files there (migrate_*_test.go, TestOpen).
var template struct {
	once gosync.Once
	dir  string
	path string
	err  error
}

// openNew opens a new, empty SQLite store at path (a file that does not exist yet): a copy
// of the template with a new random store id, so that no two stores share one (a clone
// refuses a source that is its own copy's store). It does not close the store.
func openNew(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	template.once.Do(func() {
		if template.dir, template.err = os.MkdirTemp("", "tandem-sync-template-"); template.err != nil {
			return
		}
		template.path = filepath.Join(template.dir, "template.db")
		db, err := sqlite.Open(context.Background(), template.path, store.Options{})
		if err != nil {
			template.err = err
			return
		}
		template.err = db.Close() // a clean close checkpoints the WAL into the file
	})
	if template.err != nil {
		t.Fatalf("template store: %v", template.err)
	}
	testfs.CopyFile(t, template.path, path)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	_, err = raw.Exec(`UPDATE store_meta SET value = ? WHERE key = 'store_id'`, hex.EncodeToString(b[:]))
	if cerr := raw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("new store id for %s: %v", path, err)
	}
	db, err := sqlite.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return db
}
