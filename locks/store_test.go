package locks

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// newLeases returns the leases of a fresh in-memory store, with a product 1 to lease. Lease
// expiry follows the store's database clock, which for memory is the wall clock.
func newLeases(t *testing.T) store.Leases {
	t.Helper()
	ctx := store.WithActor(t.Context(), store.Actor{Name: "setup", Role: store.RoleEditor})
	db := memory.New(store.Options{})
	t.Cleanup(func() { db.Close() })
	if _, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "P-1", "name": "Lamp"}); err != nil {
		t.Fatalf("create product: %v", err)
	}
	return db
}
