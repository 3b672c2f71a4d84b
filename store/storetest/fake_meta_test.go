package storetest

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestFake_StoreID holds the fake to the contract's store id rules, so code keyed by the
// store id (drafts) is tested against ids that behave like real ones.
func TestFake_StoreID(t *testing.T) {
	testStoreID(t, func(t *testing.T, opts store.Options) store.Store { return NewFake(opts) })
}
