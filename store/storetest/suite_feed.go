package storetest

import (
	"context"
	"fmt"
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

// testFeedManyWriters has many writers save different records at once, so their commits
// finish in any order, while a subscriber and a reader paging with Changes from its last id
// follow the log. Both must see every change exactly once, in the log's order, with each
// record's versions in order: a change that commits after a later id was read must not fall
// under a cursor that moved past it.
func testFeedManyWriters(t *testing.T, open Opener) {
	s := fresh(t, open)
	const writers, each = 8, 40
	recs := make([]*store.Record, writers)
	for g := range recs {
		recs[g] = mustCreateProduct(t, s, fmt.Sprintf("W%d", g))
	}
	from := mustLastChangeID(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	feed, err := s.Subscribe(ctx, from)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	const total = writers * each
	type followed struct {
		got []store.Change
		err error
	}
	follow := func(next func() ([]store.Change, error)) <-chan followed {
		out := make(chan followed, 1)
		go func() {
			var f followed
			progress := time.Now()
			for len(f.got) < total && f.err == nil {
				var cs []store.Change
				cs, f.err = next()
				f.got = append(f.got, cs...)
				if len(cs) > 0 {
					progress = time.Now()
				} else if time.Since(progress) > feedPatience {
					f.err = fmt.Errorf("nothing new for %s", feedPatience)
				}
			}
			out <- f
		}()
		return out
	}
	subscribed := follow(func() ([]store.Change, error) {
		select {
		case c, ok := <-feed:
			if !ok {
				return nil, fmt.Errorf("feed closed")
			}
			return []store.Change{c}, nil
		case <-time.After(feedPatience):
			return nil, fmt.Errorf("no change on the feed for %s", feedPatience)
		}
	})
	cursor := from
	paged := follow(func() ([]store.Change, error) {
		cs, err := s.Changes(ctx, cursor, 5)
		if len(cs) > 0 {
			cursor = cs[len(cs)-1].ID
		} else {
			time.Sleep(time.Millisecond) // poll, do not spin
		}
		return cs, err
	})
	hammer(t, writers, each, func(g, i int) error {
		a := store.Actor{Name: fmt.Sprintf("w%d", g), Role: store.RoleSystem}
		_, err := s.UpdateRecord(actx(t, a), store.KindProduct, recs[g].ID, store.Update{Add: map[string]int64{"stock": 1}})
		return err
	})
	var all []store.Change
	for after := from; ; {
		cs := mustChanges(t, s, after)
		if len(cs) == 0 {
			break
		}
		all = append(all, cs...)
		after = cs[len(cs)-1].ID
	}
	if len(all) != total {
		t.Fatalf("change log has %d entries after the writers, want %d", len(all), total)
	}
	last := map[int64]int64{}
	for i, c := range all {
		if i > 0 && c.ID <= all[i-1].ID {
			t.Fatalf("change log ids out of order at %d: %d after %d", i, c.ID, all[i-1].ID)
		}
		want := int64(2) // each product was created at version 1 before the cursor
		if v, ok := last[c.RecordID]; ok {
			want = v + 1
		}
		if c.Version != want {
			t.Fatalf("change %d of product %d has version %d, want %d", c.ID, c.RecordID, c.Version, want)
		}
		last[c.RecordID] = c.Version
	}
	for name, ch := range map[string]<-chan followed{"subscriber": subscribed, "Changes reader": paged} {
		f := <-ch
		got := f.got
		if f.err != nil {
			t.Errorf("%s: %v", name, f.err)
		}
		if len(got) != len(all) {
			t.Errorf("%s got %d changes, want %d", name, len(got), len(all))
		}
		for i := range min(len(got), len(all)) {
			if got[i].ID != all[i].ID {
				t.Errorf("%s: change %d has id %d, want %d (skipped, repeated or out of order)", name, i, got[i].ID, all[i].ID)
				break
			}
		}
	}
}
