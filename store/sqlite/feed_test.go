package sqlite_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// TestDB_SubscribersShareReader has subscribers of one store share its feed reader while
// writers commit: one reading as the changes come, one that reads nothing until the writes
// are done (it falls behind what the reader keeps and reads the log itself), one that
// joins late from the start, and one that joins after all others left (the reader starts
// again). Each gets every change after its cursor, once, in order.
func TestDB_SubscribersShareReader(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "t.db"))
	p := mustProduct(t, db)
	from, err := db.LastChangeID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	eager, err := db.Subscribe(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := db.Subscribe(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 300 // more changes than the reader keeps
	var (
		got   = make(chan []int64, 1)
		wg    sync.WaitGroup
		wrote = make(chan struct{})
	)
	go func() { got <- collect(eager, writers*each) }()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := db.UpdateRecord(editor(t, "w"), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": int64(w + 1)}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(wrote) }()
	<-wrote
	if t.Failed() {
		return
	}
	all, err := db.Changes(t.Context(), from, 2*writers*each)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int64, len(all))
	for i, c := range all {
		want[i] = c.ID
	}
	late, err := db.Subscribe(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	check := func(who string, ids []int64, want []int64) {
		t.Helper()
		if len(ids) != len(want) {
			t.Fatalf("%s got %d changes, want %d", who, len(ids), len(want))
		}
		for i := range ids {
			if ids[i] != want[i] {
				t.Fatalf("%s: change %d is %d, want %d", who, i, ids[i], want[i])
			}
		}
	}
	check("eager", <-got, want)
	check("slow", collect(slow, len(want)), want)
	check("late", collect(late, len(want)), want)
	cancel()
	for _, ch := range []<-chan store.Change{eager, slow, late} {
		for range ch { // closed once its subscriber stopped
		}
	}
	again, err := db.Subscribe(t.Context(), want[len(want)-3])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(editor(t, "w"), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
		t.Fatal(err)
	}
	last, err := db.LastChangeID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	check("again", collect(again, 3), []int64{want[len(want)-2], want[len(want)-1], last})
}

// collect reads n changes from ch and returns their IDs.
func collect(ch <-chan store.Change, n int) []int64 {
	var ids []int64
	for len(ids) < n {
		select {
		case c, ok := <-ch:
			if !ok {
				return ids
			}
			ids = append(ids, c.ID)
		case <-time.After(10 * time.Second):
			return ids
		}
	}
	return ids
}

// BenchmarkFeed50 is the change feed of a team server: 50 subscribers (its sessions) of one
// store, and a save (b.N of them) that all of them hear. Per op: one save and its 50
// deliveries.
func BenchmarkFeed50(b *testing.B) {
	const subscribers = 50
	db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "t.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := store.WithActor(b.Context(), store.Actor{Name: "bench", Role: store.RoleEditor})
	p, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "P-1", "name": "Hammer", "price": int64(1)})
	if err != nil {
		b.Fatal(err)
	}
	from, err := db.LastChangeID(ctx)
	if err != nil {
		b.Fatal(err)
	}
	heard := make(chan int64, subscribers)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range subscribers {
		ch, err := db.Subscribe(sctx, from)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for c := range ch {
				heard <- c.ID
			}
		}()
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := db.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
			b.Fatal(err)
		}
		for range subscribers {
			<-heard
		}
	}
}
