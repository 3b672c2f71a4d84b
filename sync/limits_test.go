package sync_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestSync_PassesAndPushLimit: a sync of one pass with a push limit (the background sync's
// rounds) pushes the runs of saves up to the limit and leaves the rest pending, reads no
// echo of its own pushes (the copy's position stays where its pull left it), and the syncs
// after it push the rest, each delta once, until the copy is the source.
func TestSync_PassesAndPushLimit(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			var prods []int64
			for i := range 3 {
				r, err := src.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": fmt.Sprintf("PL-%d", i), "name": "lamp", "price": int64(1000), "stock": int64(100)})
				if err != nil {
					t.Fatal(err)
				}
				prods = append(prods, r.ID)
			}
			wc := mustClone(t, src, "copy")
			// Three saves of each product: a run takes one save of each (three entries), the
			// next save of a product starts the next run.
			for range 3 {
				for _, id := range prods {
					mustAdjust(t, wc, "alice", id, -1)
				}
			}
			before, err := wc.CopyState(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			o := tsync.Options{Passes: 1, PushLimit: 2}
			rep, err := tsync.SyncWith(context.Background(), src, wc, o)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Pushed != 3 || rep.Pending != 6 {
				t.Errorf("first sync pushed %d and left %d pending, want the first run of 3 and 6 pending", rep.Pushed, rep.Pending)
			}
			if rep.Position != before.Position {
				t.Errorf("position %d after one pass, want %d (its pushes' echo is the next sync's)", rep.Position, before.Position)
			}
			for range 4 {
				if rep, err = tsync.SyncWith(context.Background(), src, wc, o); err != nil {
					t.Fatal(err)
				}
			}
			if rep.Pending != 0 {
				t.Fatalf("%d pending after five syncs, want none", rep.Pending)
			}
			for _, id := range prods {
				if got := mustGet(t, src, store.KindProduct, id).Fields["stock"]; got != int64(97) {
					t.Errorf("product %d stock %v on the source, want 97 (each delta once)", id, got)
				}
			}
			if _, err := tsync.Sync(context.Background(), src, wc); err != nil {
				t.Fatal(err)
			}
			assertConverged(t, src, wc, nil)
		})
	}
}
