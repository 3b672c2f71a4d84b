package postgres

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestOldClient: a client opened before a schema change writes after it (storetest
// RunOldClient), through the one-statement relative save too.
func TestOldClient(t *testing.T) {
	dsn := pgtest.DSN(t)
	var first *DB
	storetest.RunOldClient(t, func(t *testing.T) (store.Store, func(t *testing.T) store.Store) {
		first = mustOpenWith(t, dsn, mustParts(t))
		return first, func(t *testing.T) store.Store { return mustOpenWith(t, dsn, nil) }
	})
	if first.oneStatementSaves.Load() != 0 {
		t.Errorf("%d relative saves of a client with an older schema were made in one statement", first.oneStatementSaves.Load())
	}
}
