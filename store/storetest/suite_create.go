package storetest

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// testCreateOptions: a create may ask for its id (an import restoring an export) and carry
// an idempotency key, so that a create sent twice makes one record.
func testCreateOptions(t *testing.T, open Opener) {
	vals := func(sku string) store.Values {
		return store.Values{"sku": sku, "name": "Product " + sku, "price": int64(100)}
	}
	t.Run("ID", func(t *testing.T) {
		s := fresh(t, open)
		ctx := actx(t, actAlice)
		got, err := s.CreateRecord(ctx, store.KindProduct, vals("A-42"), store.CreateOptions{ID: 42})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != 42 || got.Version != 1 {
			t.Fatalf("create with id 42 = id %d version %d, want 42 and 1", got.ID, got.Version)
		}
		next, err := s.CreateRecord(ctx, store.KindProduct, vals("A-43"))
		if err != nil {
			t.Fatal(err)
		}
		if next.ID <= 42 {
			t.Errorf("the next create got id %d, want an id above 42", next.ID)
		}
	})
	t.Run("ErrIDTaken", func(t *testing.T) {
		s := fresh(t, open)
		ctx := actx(t, actAlice)
		r := mustCreateProduct(t, s, "A-1")
		_, err := s.CreateRecord(ctx, store.KindProduct, vals("A-2"), store.CreateOptions{ID: r.ID})
		if store.ErrorCode(err) != store.EINVALID {
			t.Fatalf("create with a taken id: err %v, want EINVALID", err)
		}
		if n, _ := s.CountRecords(ctx, store.KindProduct); n != 1 {
			t.Errorf("%d products after a refused create, want 1", n)
		}
	})
	t.Run("IdempotencyKey", func(t *testing.T) {
		s := fresh(t, open)
		ctx := actx(t, actAlice)
		opt := store.CreateOptions{IdempotencyKey: "import:1"}
		first, err := s.CreateRecord(ctx, store.KindProduct, vals("K-1"), opt)
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.CreateRecord(ctx, store.KindProduct, vals("K-1"), opt)
		if err != nil {
			t.Fatalf("the same keyed create again: %v", err)
		}
		if again.ID != first.ID {
			t.Errorf("replayed create returned id %d, want %d", again.ID, first.ID)
		}
		if n, _ := s.CountRecords(ctx, store.KindProduct); n != 1 {
			t.Errorf("%d products after a create sent twice, want 1", n)
		}
		k, err := s.FindKey(ctx, store.ScopeAPI, "import:1")
		if err != nil || k.Status != store.KeyCompleted {
			t.Fatalf("key after create: %+v, %v; want COMPLETED", k, err)
		}
		if _, err := s.CreateRecord(ctx, store.KindProduct, vals("K-2"), opt); store.ErrorCode(err) != store.EINVALID {
			t.Errorf("the key reused for another create: err %v, want EINVALID", err)
		}
	})
}
