package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// quietFeed is a store whose change feed never delivers: what a TUI sees before the feed
// has told it anything.
type quietFeed struct{ store.Store }

func (q quietFeed) Subscribe(ctx context.Context, after int64) (<-chan store.Change, error) {
	ch := make(chan store.Change)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch, nil
}

// mustLease gives who a lease on product id's editor group for ttl.
func mustLease(t *testing.T, s store.Store, who string, id int64, ttl time.Duration) *store.Lease {
	t.Helper()
	l, err := s.AcquireLease(actorCtx(who), store.LeaseRequest{Kind: store.KindProduct, RecordID: id,
		Group: store.GroupEditor, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLease_ReadOnlyUnlocksWhenLeaseExpires: bob's process dies holding the lease (nobody
// renews it, no event says so); alice's read-only editor becomes editable once it expired,
// with no key pressed.
func TestLease_ReadOnlyUnlocksWhenLeaseExpires(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	mustLease(t, s, "bob", 1, time.Minute)
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	openProduct(t, d, 1, "enter")
	d.waitFor("read-only: held by bob since 10:05")
	s.Advance(61 * time.Second)
	d.waitFor("bob's lease expired at 10:06:00: you can edit")
	if ro := d.app.editor.readOnly; ro != "" {
		t.Fatalf("still read-only: %s", ro)
	}
	focusField(t, d, "name")
	d.typeText(" by alice")
	d.key("ctrl+s")
	d.waitFor("saved v2")
	if got := mustRecord(t, s, 1).Fields["name"]; got != "Product 1 by alice" {
		t.Fatalf("name = %q", got)
	}
}

// TestLease_ReadOnlyUnlocksWhenReleased: bob saves and releases; alice's editor (opened with
// e) shows bob's version, becomes editable and takes the lease it asked for.
func TestLease_ReadOnlyUnlocksWhenReleased(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	l := mustLease(t, s, "bob", 1, 10*time.Minute)
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	openProduct(t, d, 1, "e")
	d.waitFor("read-only: held by bob since 10:05")
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 1, LeaseToken: l.Token,
		Set: store.Values{"price": int64(1200)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseLease(actorCtx("bob"), l.Token); err != nil {
		t.Fatal(err)
	}
	d.waitFor("bob's lease released: you can edit")
	d.waitFor("lease: you, ")
	if !strings.Contains(d.screen(), "product 1 · v2") || !strings.Contains(d.screen(), "price          12.00") {
		t.Fatalf("the editor does not show bob's version:\n%s", d.screen())
	}
	if ls := liveLeases(t, s, 1); len(ls) != 1 || ls[0].Holder != "alice" {
		t.Fatalf("leases after unlocking: %+v, want alice's", ls)
	}
}

// TestLease_TakenWhileEditing: bob takes the lease while alice types; she is told at once,
// her edits stay (in the form and as a draft), and once bob is done she saves them on top of
// his version.
func TestLease_TakenWhileEditing(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText(" by alice")
	l := mustLease(t, s, "bob", 1, 10*time.Minute)
	d.waitFor("bob took the lease: read-only until it ends; your edits are kept as a draft")
	d.settle()
	if dr, err := d.app.c.drafts.Load(store.KindProduct, 1); err != nil || dr == nil || dr.Values["name"] != "Product 1 by alice" {
		t.Fatalf("draft when the form turned read-only: %+v, %v", dr, err)
	}
	d.typeText("zzz") // read-only: not taken
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 1, LeaseToken: l.Token,
		Set: store.Values{"price": int64(1200)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseLease(actorCtx("bob"), l.Token); err != nil {
		t.Fatal(err)
	}
	d.waitFor("bob's lease released: you can edit; your edits are kept")
	d.key("ctrl+s")
	d.waitFor("merged with bob's v2 (price); saved v3")
	r := mustRecord(t, s, 1)
	if r.Fields["name"] != "Product 1 by alice" || r.Fields["price"] != int64(1200) {
		t.Fatalf("after the save: name %q price %v", r.Fields["name"], r.Fields["price"])
	}
}
