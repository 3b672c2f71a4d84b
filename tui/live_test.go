package tui

import (
	"context"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	tsync "github.com/tandem-editor/tandem/sync"
	"github.com/tandem-editor/tandem/sync/live"
)

// fakeLive is a LiveSync whose status the test sets. Its lease source, when set, answers
// only while the status says online.
type fakeLive struct {
	mu     gosync.Mutex
	s      live.Status
	kicks  int
	leases store.Store
}

func (f *fakeLive) Status() live.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s
}

func (f *fakeLive) Kick() {
	f.mu.Lock()
	f.kicks++
	f.mu.Unlock()
}

func (f *fakeLive) LeaseSource(context.Context) (store.Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.leases == nil || !f.s.Online {
		return nil, live.ErrOffline
	}
	return gatedLeases{f.leases, f}, nil
}
func (f *fakeLive) Present(store.Kind, int64, string)  {}
func (f *fakeLive) Withdraw(store.Kind, int64, string) {}

func (f *fakeLive) set(s live.Status) {
	f.mu.Lock()
	f.s = s
	f.mu.Unlock()
}

// TestLive_HeaderAndSaveStates: on a --local copy the header shows the connection as a
// status (online and when synced, offline since when and what is pending, the conflicts),
// a save says "saved locally" and asks the syncer for a round, and once the syncer pushed
// it the editor says "saved on the server (vN)".
func TestLive_HeaderAndSaveStates(t *testing.T) {
	ctx := store.WithActor(context.Background(), store.Actor{Name: "erin", Role: store.RoleEditor})
	src, wc := memory.New(store.Options{}), memory.New(store.Options{})
	t.Cleanup(func() { wc.Close(); src.Close() })
	mustSeed(t, src, 2)
	if _, err := tsync.Clone(ctx, src, wc, tsync.CloneOptions{Source: "postgres://db.example/tandem"}); err != nil {
		t.Fatal(err)
	}
	f := &fakeLive{}
	f.set(live.Status{Started: true, Online: true, SyncedAt: t0.Add(-2 * time.Second)})
	d := newDriver(t, wc, "erin", func(o *Options) { o.Live = f })
	d.waitFor("online · synced 2 s ago · 0 conflicts")

	f.set(live.Status{Started: true, OfflineSince: time.Date(2026, 1, 2, 10, 5, 0, 0, time.Local), Pending: 3, Conflicts: 1})
	d.app.Render()
	d.waitFor("offline since 10:05 · 0 pending · 0 conflicts")

	f.set(live.Status{Started: true, Online: true, SyncedAt: t0})
	d.key("enter")
	if d.app.editor == nil {
		t.Fatalf("enter opened no editor:\n%s", d.screen())
	}
	id := d.app.editor.id
	d.key("end")
	d.typeText(" two")
	d.key("ctrl+s")
	d.waitFor("saved locally")
	if f.kicks == 0 {
		t.Error("a local save did not ask the syncer for a round")
	}
	f.set(live.Status{Started: true, Online: true, SyncedAt: t0, PushSeq: 1,
		LastPushed: []live.Pushed{{Kind: store.KindProduct, ID: id, Version: 8}}})
	d.apply(copyPollMsg{})
	d.waitFor("saved on the server (v8)")
}

// TestLive_SaveAgainAfterPush: with a real syncer, a second save of the open record after
// the first was pushed (the copy then holds the source's version) is saved, not taken for a
// conflict.
func TestLive_SaveAgainAfterPush(t *testing.T) {
	ctx := store.WithActor(context.Background(), store.Actor{Name: "erin", Role: store.RoleEditor})
	src, wc := memory.New(store.Options{}), memory.New(store.Options{})
	t.Cleanup(func() { wc.Close(); src.Close() })
	mustSeed(t, src, 2)
	if _, err := tsync.Clone(ctx, src, wc, tsync.CloneOptions{Source: "postgres://db.example/tandem"}); err != nil {
		t.Fatal(err)
	}
	s := live.New(wc, live.Options{Open: func(context.Context) (store.Store, error) { return unclosed{src}, nil },
		MinBackoff: 10 * time.Millisecond})
	sctx, cancel := context.WithCancel(context.Background())
	go s.Run(sctx)
	t.Cleanup(func() { cancel(); <-s.Done() })
	d := newDriver(t, wc, "erin", func(o *Options) { o.Live = s })
	d.key("enter")
	if d.app.editor == nil {
		t.Fatalf("enter opened no editor:\n%s", d.screen())
	}
	id := d.app.editor.id
	base, err := src.FindRecord(ctx, store.KindProduct, id)
	if err != nil || base.Version != 1 {
		t.Fatalf("the source's record: %v, %v", base, err)
	}
	pushed := func(v int64) func() bool {
		return func() bool {
			r, err := src.FindRecord(ctx, store.KindProduct, id)
			return err == nil && r.Version >= v
		}
	}
	d.typeText(" one")
	d.key("ctrl+s")
	d.waitFor("saved locally")
	d.waitUntil("the first save on the source", pushed(2))
	d.typeText(" two")
	d.key("ctrl+s")
	d.waitFor("saved locally")
	d.waitUntil("the second save on the source", pushed(3))
	r, err := src.FindRecord(ctx, store.KindProduct, id)
	if err != nil {
		t.Fatal(err)
	}
	if sku, _ := r.Fields["sku"].(string); !strings.HasSuffix(sku, " one two") || r.Version != 3 {
		t.Fatalf("the source's sku %q at v%d, want both saves at v3", sku, r.Version)
	}
}
