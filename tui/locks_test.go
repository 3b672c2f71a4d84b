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

// TestLocks_ScrollsToCursor: more leases than the screen has rows (80x24). Moving down past
// the last row shows the selected lease and the ones after it, as the list does; the
// holder of a long name (a worker's) stays in its column.
func TestLocks_ScrollsToCursor(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 40)
	for id := int64(1); id <= 40; id++ {
		who := "bob"
		if id == 40 {
			who = "worker:checksum@vm:29017"
		}
		mustLease(t, s, who, id, 10*time.Minute)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.key("L")
	d.waitFor("40 live leases")
	for range 39 {
		d.key("j")
	}
	d.settle()
	sel, header := "", ""
	for line := range strings.SplitSeq(d.screen(), "\n") {
		if strings.HasPrefix(line, "▸") {
			sel = line
		}
		if strings.Contains(line, "fence") {
			header = line
		}
	}
	if f := strings.Fields(sel); len(f) < 6 || f[2] != "40" || f[4] != "worker:checksum@vm:29017" {
		t.Fatalf("after 39 × j the selected lease (product 40, the worker's) is %q:\n%s", sel, d.screen())
	}
	col, row := strings.Index(header, "fence"), []rune(sel)
	if col < 1 || col >= len(row) || row[col] != '1' || row[col-1] != ' ' {
		t.Errorf("the worker's fence is not under the fence column:\n%s\n%s", header, sel)
	}
}
