package locks

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// newLeases returns the lease store the tests run against.
func newLeases(t *testing.T) store.Leases {
	t.Helper()
	return newMemLeases()
}
