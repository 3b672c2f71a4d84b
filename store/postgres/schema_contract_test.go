package postgres_test

import (
	"testing"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_Schema runs the contract on a schema with no product or document in it.
func TestDB_Schema(t *testing.T) {
	pgtest.ServerDSN(t)
	storetest.RunSchema(t, openFresh)
}
