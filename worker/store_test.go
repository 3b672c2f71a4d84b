package worker

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// openStore returns a fresh in-memory store for one test: the workers use nothing of a store
// but its contract, which memory keeps.
func openStore(t *testing.T) store.Store {
	t.Helper()
	db := memory.New(store.Options{})
	t.Cleanup(func() { db.Close() })
	return db
}

// openCopy returns a fresh in-memory working copy (source "team.db"), holding recs as the
// source has them.
func openCopy(t *testing.T, recs ...*store.Record) *memory.DB {
	t.Helper()
	db := memory.New(store.Options{})
	t.Cleanup(func() { db.Close() })
	if err := db.StartCopy(t.Context(), store.CopyState{SourceID: "src", Source: "team.db", Kinds: store.DefaultRegistry().Kinds(), Position: 1}); err != nil {
		t.Fatal(err)
	}
	if err := db.ApplySource(t.Context(), recs, store.FeedPoint{ID: 2}); err != nil {
		t.Fatal(err)
	}
	return db
}
