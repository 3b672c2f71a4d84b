package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// feedPatience bounds how long a test waits for the feed: far above the one-second promise,
// so it only catches a feed that never delivers.
const feedPatience = 10 * time.Second

func mustReceive(t *testing.T, ch <-chan store.Change) store.Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("feed closed early")
		}
		return c
	case <-time.After(feedPatience):
		t.Fatal("no change arrived on the feed")
	}
	return store.Change{}
}

func testFeed(t *testing.T, open Opener) {
	t.Run("SubscribeSeesChange", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		ch, err := s.Subscribe(t.Context(), mustLastChangeID(t, s))
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(5)}})
		got := mustReceive(t, ch)
		if got.Event != store.EventSaved || got.Kind != store.KindProduct || got.RecordID != p.ID || got.Version != 2 ||
			got.Actor != "bob" || !slices.Equal(got.Fields, []string{"price"}) || !got.History || got.At.IsZero() {
			t.Errorf("change = %+v, want bob's save of price to v2 with history", got)
		}
		l := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		if got := mustReceive(t, ch); got.Event != store.EventLeaseGranted || got.Group != store.GroupEditor || got.Fence != l.Fence {
			t.Errorf("change = %+v, want the lease grant", got)
		}
		if _, err := s.ExtendLease(t.Context(), l.Token, time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := mustReceive(t, ch); got.Event != store.EventLeaseRenewed {
			t.Errorf("change = %+v, want the renewal", got)
		}
	})
	t.Run("CursorResume", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		cursor := mustLastChangeID(t, s)
		for i := range 3 {
			mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": int64(i + 1)}})
		}
		all := mustChanges(t, s, cursor)
		if len(all) != 3 || all[0].ID <= cursor || all[0].ID >= all[1].ID || all[1].ID >= all[2].ID {
			t.Fatalf("changes after %d = %+v, want 3 in increasing id order", cursor, all)
		}
		if got, err := s.Changes(t.Context(), cursor, 2); err != nil || len(got) != 2 || got[1].ID != all[1].ID {
			t.Errorf("changes with limit 2 = %+v, %v", got, err)
		}
		if got := mustLastChangeID(t, s); got != all[2].ID {
			t.Errorf("last change id = %d, want %d", got, all[2].ID)
		}
		// A subscriber that was away since the first of the three catches up on the other two.
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := s.Subscribe(ctx, all[0].ID)
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		for _, want := range all[1:] {
			if got := mustReceive(t, ch); got.ID != want.ID || got.Version != want.Version || got.Deltas["stock"] != want.Deltas["stock"] {
				t.Errorf("change = %+v, want %+v", got, want)
			}
		}
		cancel()
		for range ch { // the channel is closed once ctx ends
		}
	})
	t.Run("Empty", func(t *testing.T) {
		s := fresh(t, open)
		if got := mustLastChangeID(t, s); got != 0 {
			t.Errorf("last change id of an empty store = %d, want 0", got)
		}
		if got := mustChanges(t, s, 0); len(got) != 0 {
			t.Errorf("changes = %+v, want none", got)
		}
	})
}
