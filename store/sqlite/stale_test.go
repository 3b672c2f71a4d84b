package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestOldClient: a client opened before a schema change writes after it (storetest
// RunOldClient), through the relative save's one UPDATE too.
func TestOldClient(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parts.db")
	storetest.RunOldClient(t, func(t *testing.T) (store.Store, func(t *testing.T) store.Store) {
		return openParts(t, path, partsRegistry(t)), func(t *testing.T) store.Store { return openParts(t, path, nil) }
	})
}
