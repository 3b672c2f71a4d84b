package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_Schema runs the contract on a schema with no product or document in it.
// TODO(schema): drop SkipUnlessSchema once the store makes a schema's tables at open.
func TestDB_Schema(t *testing.T) {
	storetest.SkipUnlessSchema(t, func(opts store.Options) (store.Store, error) {
		return sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "probe.db"), opts)
	})
	storetest.RunSchema(t, openTemp)
}
