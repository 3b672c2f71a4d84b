package locks

import (
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// newLeases returns the leases of a fresh SQLite store in a real file, with a product 1 to
// lease.
func newLeases(t *testing.T) store.Leases {
	t.Helper()
	ctx := store.WithActor(t.Context(), store.Actor{Name: "setup", Role: store.RoleEditor})
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tandem.db"), store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "P-1", "name": "Lamp"}); err != nil {
		t.Fatalf("create product: %v", err)
	}
	return db
}
