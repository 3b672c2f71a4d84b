package tui

import (
	"context"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	tsync "github.com/tandem-editor/tandem/sync"
	"github.com/tandem-editor/tandem/sync/live"
)

// gatedLeases is a --local copy's lease source that does not answer while its fakeLive says
// offline: renewals and releases fail then, as they do on a lost connection.
type gatedLeases struct {
	store.Store
	f *fakeLive
}

func (g gatedLeases) online() error {
	if !g.f.Status().Online {
		return live.ErrOffline
	}
	return nil
}

func (g gatedLeases) AcquireLease(ctx context.Context, r store.LeaseRequest) (*store.Lease, error) {
	if err := g.online(); err != nil {
		return nil, err
	}
	return g.Store.AcquireLease(ctx, r)
}

func (g gatedLeases) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	if err := g.online(); err != nil {
		return nil, err
	}
	return g.Store.ExtendLease(ctx, token, ttl)
}

func (g gatedLeases) ReleaseLease(ctx context.Context, token string) (*store.LeaseRelease, error) {
	if err := g.online(); err != nil {
		return nil, err
	}
	return g.Store.ReleaseLease(ctx, token)
}

// TestLive_LeaseTakenAgainAfterReconnect: a lease taken online on a --local copy is shown
// lost when the connection goes, and taken again when it comes back, though the source
// still held the old one (its release could not reach it); when someone else took the
// record's lease meanwhile, the editor says the lease was lost while offline and turns
// read-only with their name.
func TestLive_LeaseTakenAgainAfterReconnect(t *testing.T) {
	ctx := store.WithActor(context.Background(), store.Actor{Name: "erin", Role: store.RoleEditor})
	src, wc := memory.New(store.Options{}), memory.New(store.Options{})
	t.Cleanup(func() { wc.Close(); src.Close() })
	mustSeed(t, src, 2)
	if _, err := tsync.Clone(ctx, src, wc, tsync.CloneOptions{Source: "postgres://db.example/tandem"}); err != nil {
		t.Fatal(err)
	}
	online := live.Status{Started: true, Online: true, SyncedAt: t0}
	offline := live.Status{Started: true, OfflineSince: t0}
	f := &fakeLive{leases: src}
	f.set(online)
	d := newDriver(t, wc, "erin", func(o *Options) { o.Live = f })
	openProduct(t, d, 1, "e")
	d.waitFor("lease taken")
	first := liveLeases(t, src, 1)
	if len(first) != 1 || first[0].Holder != "erin" {
		t.Fatalf("leases on the source: %+v, want erin's", first)
	}

	f.set(offline)
	d.apply(copyPollMsg{})
	d.waitFor("the lease is taken again once the server answers")
	if ls := liveLeases(t, src, 1); len(ls) != 1 || ls[0].Fence != first[0].Fence {
		t.Fatalf("leases on the source while offline: %+v, want erin's first one still there", ls)
	}

	f.set(online)
	d.apply(copyPollMsg{})
	d.waitFor("lease taken again")
	ls := liveLeases(t, src, 1)
	if len(ls) != 1 || ls[0].Holder != "erin" || ls[0].Fence == first[0].Fence {
		t.Fatalf("leases on the source after reconnecting: %+v, want one new lease of erin's", ls)
	}
	if d.app.editor.held == nil || d.app.editor.readOnly != "" {
		t.Fatalf("the editor holds no lease or is read-only (%q)", d.app.editor.readOnly)
	}

	// Offline again; erin's lease ends on the source (it expired) and bob takes one.
	f.set(offline)
	d.apply(copyPollMsg{})
	d.waitFor("the lease is taken again once the server answers")
	if _, err := src.ReleaseLease(ctx, d.app.editor.offlineHeld.Token()); err != nil {
		t.Fatal(err)
	}
	mustLease(t, src, "bob", 1, time.Minute)
	f.set(online)
	d.apply(copyPollMsg{})
	d.waitFor("your lease was lost while offline: read-only, held by bob")
	if ls := liveLeases(t, src, 1); len(ls) != 1 || ls[0].Holder != "bob" {
		t.Fatalf("leases on the source: %+v, want bob's only", ls)
	}
}
