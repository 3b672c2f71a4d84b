package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func TestLocksOverview(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 2,
		Group: store.GroupEditor, TTL: 600e9}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.key("L")
	d.waitFor("bob")
	d.golden("locks")
	d.key("enter")
	d.waitFor("read-only: held by bob since 10:05")
}

func TestLocks_HeaderCountsLiveLeases(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	mustLease(t, s, "bob", 2, 10*time.Minute)
	l := mustLease(t, s, "carol", 3, 10*time.Minute)
	if _, err := s.ReleaseLease(actorCtx("carol"), l.Token); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.key("L")
	d.waitFor("carol")
	if !strings.Contains(d.screen(), "locks  1 live lease · 1 ended lately") {
		t.Fatalf("the header does not count live leases apart:\n%s", d.screen())
	}
}

func TestLocks_EditorReturnsToLocks(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	mustLease(t, s, "bob", 2, 10*time.Minute)
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.key("L")
	d.waitFor("bob")
	d.key("enter")
	d.waitFor("read-only: held by bob")
	d.key("esc")
	d.settle()
	if d.app.screen != scrLocks {
		t.Fatalf("leaving the record went to screen %d, not the locks screen:\n%s", d.app.screen, d.screen())
	}
	d.key("esc")
	d.waitFor("[ products ]")
}
