package postgres_test

import (
	"testing"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/storetest"
)

// openFresh opens a store in a fresh schema of the test server (dropped when the test ends).
func openFresh(t *testing.T, opts store.Options) store.Store {
	t.Helper()
	db, err := postgres.Open(t.Context(), pgtest.DSN(t), opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return db
}

func TestDB(t *testing.T) {
	pgtest.ServerDSN(t) // skip (or fail under CI) once, not per subtest
	storetest.Run(t, openFresh)
}

func TestDB_Concurrency(t *testing.T) {
	pgtest.ServerDSN(t)
	storetest.RunConcurrency(t, openFresh)
}
