package sqlite_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tandem-editor/tandem/internal/testfs"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestMain removes the template store openTemp makes.
func TestMain(m *testing.M) {
	code := m.Run()
	if template.dir != "" {
		os.RemoveAll(template.dir)
	}
	os.Exit(code)
}

// template is an empty, migrated store made once per test binary. A fresh open runs every
// migration (about 50 ms, 860 ms under the race detector) and the contract suite opens
// hundreds of stores; openTemp copies the template instead and gives the copy a store id of
// its own. The migrations themselves are tested on fresh files (migrate_*_test.go, TestOpen).
var template struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func templatePath(t *testing.T) string {
	t.Helper()
	template.once.Do(func() {
		if template.dir, template.err = os.MkdirTemp("", "tandem-sqlite-template-"); template.err != nil {
			return
		}
		template.path = filepath.Join(template.dir, "template.db")
		db, err := sqlite.Open(t.Context(), template.path, store.Options{})
		if err != nil {
			template.err = err
			return
		}
		template.err = db.Close() // a clean close checkpoints the WAL into the file
	})
	if template.err != nil {
		t.Fatalf("template store: %v", template.err)
	}
	return template.path
}

// openTemp opens a new, empty store in t.TempDir(): a copy of the template with a new store
// id (a store with its own registry is migrated afresh, as its registry may differ).
func openTemp(t *testing.T, opts store.Options) store.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	if opts.Registry == nil {
		testfs.CopyFile(t, templatePath(t), path)
		newStoreID(t, path)
	}
	db, err := sqlite.Open(t.Context(), path, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return db
}

// newStoreID gives the store at path a random store id, as a fresh store gets one.
func newStoreID(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b [16]byte
	_, _ = rand.Read(b[:])
	if _, err := db.Exec(`UPDATE store_meta SET value = ? WHERE key = 'store_id'`, hex.EncodeToString(b[:])); err != nil {
		t.Fatal(err)
	}
}

func TestDB(t *testing.T) { storetest.Run(t, openTemp) }

func TestDB_Concurrency(t *testing.T) { storetest.RunConcurrency(t, openTemp) }
