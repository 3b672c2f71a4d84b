package postgres_test

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_Schema runs the contract on a schema with no product or document in it.
// TODO(schema): drop SkipUnlessSchema once the store makes a schema's tables at open.
func TestDB_Schema(t *testing.T) {
	pgtest.ServerDSN(t)
	storetest.SkipUnlessSchema(t, func(opts store.Options) (store.Store, error) {
		return postgres.Open(t.Context(), pgtest.DSN(t), opts)
	})
	storetest.RunSchema(t, openFresh)
}
