package sync_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestSync_SmallBatches syncs with one acknowledgement and one pulled record per local
// transaction (the background sync's short writes): a document that the source moved under
// a newer one comes before its new parent in the pull, waits, and comes in once the parent
// has; every local delta is on the source exactly once; the copy ends as the source.
func TestSync_SmallBatches(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			ctx := as("root")
			var prods []int64
			for i := range 4 {
				r, err := src.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("SB-%d", i), "name": "lamp", "price": int64(1000), "stock": int64(100)})
				if err != nil {
					t.Fatal(err)
				}
				prods = append(prods, r.ID)
			}
			child, err := src.CreateRecord(ctx, store.KindDocument, store.Values{"title": "child", "body": body})
			if err != nil {
				t.Fatal(err)
			}
			wc := mustClone(t, src, "copy")
			// On the source: a new document, and the older one moved under it.
			parent, err := src.CreateRecord(ctx, store.KindDocument, store.Values{"title": "parent", "body": body})
			if err != nil {
				t.Fatal(err)
			}
			mustMove(t, src, "carol", child.ID, parent.ID)
			mustAdjust(t, src, "carol", prods[0], -5)
			// In the copy: deltas on every product, several on each.
			for i := range 12 {
				mustAdjust(t, wc, "alice", prods[i%len(prods)], -1)
			}
			o := tsync.Options{AckBatch: 1, ApplyBatch: 1}
			var rep *tsync.Report
			for range 3 {
				if rep, err = tsync.SyncWith(context.Background(), src, wc, o); err != nil {
					t.Fatal(err)
				}
			}
			if !rep.InSync() {
				t.Fatalf("not in sync: %+v", rep)
			}
			for i, id := range prods {
				want := int64(100 - 3)
				if i == 0 {
					want -= 5
				}
				if got := mustGet(t, src, store.KindProduct, id).Fields["stock"]; got != want {
					t.Errorf("product %d stock %v, want %d (each delta once)", id, got, want)
				}
			}
			if got := mustGet(t, wc, store.KindDocument, child.ID).Fields[store.ParentField]; got != parent.ID {
				t.Errorf("child's parent in the copy %v, want %d", got, parent.ID)
			}
			assertConverged(t, src, wc, nil)
		})
	}
}
