package storetest

import (
	"fmt"
	"math"
	"strings"
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
	t.Run("ErrIDTooLarge", func(t *testing.T) {
		// An id near the top of int64 would leave no id for the creates after it: refused
		// with EINVALID, nothing written, and creates go on as before.
		s := fresh(t, open)
		ctx := actx(t, actAlice)
		for _, id := range []int64{store.MaxID + 1, math.MaxInt64} {
			_, err := s.CreateRecord(ctx, store.KindProduct, vals(fmt.Sprintf("BIG-%d", id)), store.CreateOptions{ID: id})
			if store.ErrorCode(err) != store.EINVALID {
				t.Fatalf("create with id %d: err %v, want EINVALID", id, err)
			}
			if !strings.Contains(fmt.Sprint(err), "too large") {
				t.Errorf("create with id %d: message %q does not say the id is too large", id, err)
			}
		}
		if n, _ := s.CountRecords(ctx, store.KindProduct); n != 0 {
			t.Errorf("%d products after refused creates, want 0", n)
		}
		top, err := s.CreateRecord(ctx, store.KindProduct, vals("TOP"), store.CreateOptions{ID: store.MaxID})
		if err != nil {
			t.Fatalf("create with id MaxID: %v", err)
		}
		if top.ID != store.MaxID {
			t.Fatalf("create with id MaxID got id %d", top.ID)
		}
		next, err := s.CreateRecord(ctx, store.KindProduct, vals("NEXT"))
		if err != nil {
			t.Fatalf("a create after the largest id: %v", err)
		}
		if next.ID <= store.MaxID {
			t.Errorf("the create after id MaxID got id %d, want one above it", next.ID)
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
