package tui

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

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
	if _, err := s.ReleaseLease(actorCtx("bob"), l.Token); err != nil {
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
	if _, err := s.ReleaseLease(actorCtx("bob"), l.Token); err != nil {
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

func TestLease_HeldByOtherOpensReadOnly(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 1,
		Group: store.GroupEditor, TTL: 600e9}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "e")
	d.waitFor("read-only: held by bob since 10:05")
	d.golden("editor_readonly")
	d.typeText("xyz")
	d.key("ctrl+s")
	if got := mustRecord(t, s, 1).Version; got != 1 {
		t.Fatalf("read-only editor saved: v%d", got)
	}
}

func TestLease_TakenReleasedAndLost(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	openProduct(t, d, 1, "e")
	d.waitFor("lease: you, ")
	ls, _, _ := s.FindLeases(context.Background(), store.LeaseFilter{Kind: store.KindProduct, RecordID: 1})
	if len(ls) != 1 || ls[0].Holder != "alice" {
		t.Fatalf("leases after e: %+v", ls)
	}
	focusField(t, d, "name")
	d.typeText(" v2")
	// The lease expires and bob takes it over: alice learns at once and keeps her edits.
	s.SetFailure(func(op string) error {
		if op == "ExtendLease" {
			return store.Errorf(store.EUNAVAILABLE, "network down")
		}
		return nil
	})
	s.Advance(3 * DefaultLeaseTTL)
	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 1,
		Group: store.GroupEditor, TTL: 1e9}); err != nil {
		t.Fatal(err)
	}
	d.waitFor("bob took the lease: read-only until it ends; your edits are kept as a draft")
	s.SetFailure(nil)
	s.Advance(2e9) // bob's one-second lease ends too
	d.waitFor("bob's lease expired at 10:11:01: you can edit")
	d.waitFor("lease: you, ") // opened with e: she takes the lease again
	d.key("ctrl+s")
	d.waitFor("saved v2")
	if got := mustRecord(t, s, 1).Fields["name"]; got != "Product 1 v2" {
		t.Fatalf("name = %q: edits were not kept after the lease was lost", got)
	}
}

// TestLease_OnFirstEdit: with LeaseOnEdit, opening and moving around take no lease; the
// first keystroke that changes the form takes it, and leaving releases it.
func TestLease_OnFirstEdit(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	d := newDriver(t, s, "alice", func(o *Options) { o.LeaseOnEdit, o.Lease, o.Now = true, true, s.Now })
	openProduct(t, d, 1, "enter")
	d.waitFor("the lease is taken at your first edit")
	focusField(t, d, "name")
	if ls := liveLeases(t, s, 1); len(ls) != 0 {
		t.Fatalf("leases before any edit: %+v", ls)
	}
	d.typeText("!")
	d.waitFor("lease: you, ")
	ls := liveLeases(t, s, 1)
	if len(ls) != 1 || ls[0].Holder != "alice" {
		t.Fatalf("leases after the first edit: %+v", ls)
	}
	d.typeText("?")
	if again := liveLeases(t, s, 1); len(again) != 1 || again[0].Fence != ls[0].Fence {
		t.Fatalf("leases after a second edit: %+v, want the first one only", again)
	}
	d.key("ctrl+s")
	d.waitFor("saved v2")
	d.key("esc")
	d.waitFor("[ products ]")
	d.settle()
	if ls := liveLeases(t, s, 1); len(ls) != 0 {
		t.Fatalf("leases after leaving: %+v", ls)
	}

	// e still takes the lease on open.
	openProduct(t, d, 2, "e")
	d.waitFor("lease: you, ")
	d.key("esc")
	d.waitFor("[ products ]")
}

// TestLease_OnFirstEditHeldByOther: someone took the lease between open and the first
// edit; the edit turns the form read-only and is kept as a draft, not lost.
func TestLease_OnFirstEditHeldByOther(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	// Without a feed, bob's lease is found only when alice's first edit asks for hers.
	d := newDriver(t, quietFeed{s}, "alice", func(o *Options) { o.LeaseOnEdit, o.Now = true, s.Now })
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 1,
		Group: store.GroupEditor, TTL: 600e9}); err != nil {
		t.Fatal(err)
	}
	d.typeText(" by alice")
	d.waitFor("read-only: held by bob since 10:05 — your edit is kept as a draft")
	d.settle()
	dr, err := d.app.c.drafts.Load(store.KindProduct, 1)
	if err != nil || dr == nil {
		t.Fatalf("draft after the refused lease: %v, %v", dr, err)
	}
	if got := dr.Values["name"]; got != "Product 1 by alice" {
		t.Fatalf("draft name = %q, want the edit", got)
	}
	if ls := liveLeases(t, s, 1); len(ls) != 1 || ls[0].Holder != "bob" {
		t.Fatalf("leases: %+v, want bob's only", ls)
	}
}

// stalledRenewals is a store whose lease renewals fail: the first at once, the next one
// only when the test closes release. The heartbeat stays "failing" for as long as the test
// needs to see it, whatever the machine's load, instead of for a fixed second.
type stalledRenewals struct {
	store.Store
	calls   atomic.Int32
	release chan struct{}
}

func (s *stalledRenewals) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	if s.calls.Add(1) > 1 {
		<-s.release // deliberately not ctx: the renewal must outlive the lease's deadline
	}
	return nil, store.Errorf(store.EUNAVAILABLE, "network down")
}

func TestLease_RenewalFailingThenLostAtOnce(t *testing.T) {
	fake := newFakeStore(t)
	mustSeed(t, fake, 1)
	s := &stalledRenewals{Store: fake, release: make(chan struct{})}
	var once sync.Once
	unstall := func() { once.Do(func() { close(s.release) }) }
	t.Cleanup(unstall)
	d := newDriver(t, s, "alice", func(o *Options) { o.LeaseTTL = 2 * time.Second })
	openProduct(t, d, 1, "e")
	d.waitFor("lease: you, ")
	focusField(t, d, "name")
	d.typeText(" kept")
	// No key is pressed from here: the heartbeat's failures and the loss reach the screen.
	d.waitFor("renewal failing")
	unstall()
	d.waitFor("lease lost")
	fake.Advance(5 * time.Second) // the database clock sees the lease expired as well
	d.key("ctrl+s")
	d.waitFor("saved v2")
	if got := mustRecord(t, fake, 1).Fields["name"]; got != "Product 1 kept" {
		t.Fatalf("name = %q: edits were not kept after the lease was lost", got)
	}
}

func TestLease_ReleasedOnLeaving(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "e")
	d.waitFor("lease: you, ")
	d.key("esc")
	d.waitFor("[ products ]")
	// The release is a command of its own, which may still run when the list is back.
	d.settle()
	ls, _, err := s.FindLeases(context.Background(), store.LeaseFilter{Kind: store.KindProduct, RecordID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 0 {
		t.Fatalf("lease still live after leaving the editor: %+v", ls)
	}
}
