package worker

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/storetest"
)

// openStore returns a fresh store for one test.
func openStore(t *testing.T) store.Store {
	t.Helper()
	st := storetest.NewFake(store.Options{})
	t.Cleanup(func() { st.Close() })
	return st
}
