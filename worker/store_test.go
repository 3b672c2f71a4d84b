package worker

import (
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// openStore returns a fresh SQLite store in a real file for one test.
func openStore(t *testing.T) store.Store {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tandem.db"), store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openCopy returns a fresh working copy in a real file (source "team.db"), holding recs as
// the source has them.
func openCopy(t *testing.T, recs ...*store.Record) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "train.db"), store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.StartCopy(t.Context(), store.CopyState{SourceID: "src", Source: "team.db", Kinds: store.DefaultRegistry().Kinds(), Position: 1}); err != nil {
		t.Fatal(err)
	}
	if err := db.ApplySource(t.Context(), recs, store.FeedPoint{ID: 2}); err != nil {
		t.Fatal(err)
	}
	return db
}
