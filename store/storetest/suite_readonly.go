package storetest

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// testReadOnlyActor: an actor who may only read (a team server's viewer) is refused every
// write with EFORBIDDEN, the message naming the write and why, and nothing changes; reads
// work.
func testReadOnlyActor(t *testing.T, open Opener) {
	s := fresh(t, open)
	p := mustCreateProduct(t, s, "RO-1")
	doc := mustCreate(t, s, actAlice, store.KindDocument, store.Values{"title": "Handbook"})
	vic := store.Actor{Name: "vic", Role: store.RoleEditor, ReadOnly: "role viewer"}
	ctx := actx(t, vic)
	if _, err := s.FindRecord(ctx, store.KindProduct, p.ID); err != nil {
		t.Fatalf("a read by a read-only actor: %v", err)
	}
	writes := map[string]func() error{
		"save": func() error {
			_, err := s.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{BaseVersion: p.Version, Set: store.Values{"name": "x"}})
			return err
		},
		"relative change": func() error {
			_, err := s.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
			return err
		},
		"create": func() error {
			_, err := s.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "RO-2", "name": "n", "price": int64(1)})
			return err
		},
		"delete": func() error {
			_, err := s.DeleteRecord(ctx, store.KindProduct, p.ID, store.Delete{ExpectVersion: p.Version})
			return err
		},
		"move": func() error {
			_, err := s.MoveRecord(ctx, store.KindDocument, doc.ID, store.Move{})
			return err
		},
		"lease": func() error {
			_, err := s.AcquireLease(ctx, store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID})
			return err
		},
	}
	for name, write := range writes {
		err := write()
		if store.ErrorCode(err) != store.EFORBIDDEN {
			t.Errorf("%s by a read-only actor: %v, want EFORBIDDEN", name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, `"vic" may read but not write (role viewer)`) {
			t.Errorf("%s refused with %q; want who and why", name, msg)
		}
	}
	if got := mustFind(t, s, store.KindProduct, p.ID); got.Version != p.Version {
		t.Fatalf("product is v%d after refused writes; want v%d", got.Version, p.Version)
	}
	if n, err := s.CountRecords(ctx, store.KindProduct); err != nil || n != 1 {
		t.Fatalf("products after a refused create: %d, %v", n, err)
	}
}
