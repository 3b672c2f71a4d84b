package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

func openTemp(t *testing.T, opts store.Options) store.Store {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return db
}

func TestDB(t *testing.T) { storetest.Run(t, openTemp) }

func TestDB_Concurrency(t *testing.T) { storetest.RunConcurrency(t, openTemp) }
