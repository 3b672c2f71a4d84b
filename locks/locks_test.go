package locks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// The tests use 1-second leases (store.MinLeaseTTL): renewals every 500 ms, retries every
// 100 ms. What they assert is behaviour (held, lost, released), never how long anything took.

func actorCtx(t *testing.T, name string) context.Context {
	t.Helper()
	return store.WithActor(t.Context(), store.Actor{Name: name, Role: store.RoleEditor})
}

func product1(group string) store.LeaseRequest {
	return store.LeaseRequest{Kind: store.KindProduct, RecordID: 1, Group: group, TTL: time.Second}
}

func mustAcquire(t *testing.T, ctx context.Context, ls store.Leases, req store.LeaseRequest, opts Options) *Held {
	t.Helper()
	h, err := Acquire(ctx, ls, req, opts)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	t.Cleanup(func() { _ = h.Release(context.WithoutCancel(ctx)) })
	return h
}

// waitLost returns the loss reason, failing after a generous bound (a missing loss signal,
// not a slow one, is what this catches).
func waitLost(t *testing.T, h *Held) error {
	t.Helper()
	select {
	case err, ok := <-h.Lost():
		if !ok {
			t.Fatal("Lost closed without a reason")
		}
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("no loss reported; status %v", h.Status())
	}
	return nil
}

func waitDone(t *testing.T, h *Held) {
	t.Helper()
	select {
	case <-h.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("heartbeat goroutine did not end")
	}
}

func TestAcquire_RenewsPastTTL(t *testing.T) {
	ls := newLeases(t)
	alice, bob := actorCtx(t, "alice"), actorCtx(t, "bob")
	h := mustAcquire(t, alice, ls, product1(store.GroupEditor), Options{})
	first := h.Lease()

	// Three TTLs: without renewals the lease would have expired twice over.
	time.Sleep(3 * time.Second)
	select {
	case err := <-h.Lost():
		t.Fatalf("lease lost while renewing: %v", err)
	default:
	}
	if got := h.Status().State; got != StateHeld {
		t.Fatalf("state = %s, want %s", got, StateHeld)
	}
	if got := h.Lease(); !got.ExpiresAt.After(first.ExpiresAt.Add(time.Second)) || got.Fence != first.Fence || got.Token != first.Token {
		t.Fatalf("lease after renewals = %+v, want same token and fence, expiry later than %v", got, first.ExpiresAt)
	}
	_, err := ls.AcquireLease(bob, product1(store.GroupEditor))
	var le *store.LeaseError
	if !errors.As(err, &le) || le.Lost || le.Lease.Holder != "alice" {
		t.Fatalf("bob's acquire during alice's renewed lease: err = %v, want a LeaseError naming alice", err)
	}
}

func TestHeld_LostAfterTakeover(t *testing.T) {
	ls := newLeases(t)
	alice, bob := actorCtx(t, "alice"), actorCtx(t, "bob")
	pause, resume := make(chan struct{}), make(chan struct{})
	paused := false
	opts := Options{beforeRenew: func() {
		if !paused {
			paused = true
			close(pause)
			<-resume // a stalled holder (GC pause, suspended laptop)
		}
	}}
	h := mustAcquire(t, alice, ls, product1(store.GroupEditor), opts)
	<-pause
	// Let the lease expire on the store's clock, then let bob take it over.
	var bl *store.Lease
	for deadline := time.Now().Add(10 * time.Second); ; {
		var err error
		if bl, err = ls.AcquireLease(bob, product1(store.GroupEditor)); err == nil {
			break
		} else if store.ErrorCode(err) != store.ELEASE || time.Now().After(deadline) {
			t.Fatalf("bob's acquire: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if bl.Fence <= h.Lease().Fence {
		t.Fatalf("bob's fence %d, want more than alice's %d", bl.Fence, h.Lease().Fence)
	}
	close(resume)

	err := waitLost(t, h)
	if store.ErrorCode(err) != store.ELEASE {
		t.Fatalf("loss reason %v (code %q), want ELEASE", err, store.ErrorCode(err))
	}
	if got := h.Status(); got.State != StateLost || got.Remaining != 0 || got.Err == nil || got.Lease.Token != "" {
		t.Fatalf("status after loss = %+v", got)
	}
	waitDone(t, h)
	if _, ok := <-h.Lost(); ok {
		t.Fatal("Lost delivered a second value")
	}
	// Releasing a lost lease must not end bob's.
	if err := h.Release(alice); err != nil {
		t.Fatalf("Release after loss: %v", err)
	}
	if _, err := ls.ExtendLease(bob, bl.Token, time.Second); err != nil {
		t.Fatalf("bob's lease after alice's release of her lost one: %v", err)
	}
}

func TestHeld_LostWhenReleasedBehindItsBack(t *testing.T) {
	ls := newLeases(t)
	alice := actorCtx(t, "alice")
	h := mustAcquire(t, alice, ls, product1(store.GroupEditor), Options{})
	if _, err := ls.ReleaseLease(alice, h.Token()); err != nil {
		t.Fatal(err)
	}
	if err := waitLost(t, h); store.ErrorCode(err) != store.ELEASE {
		t.Fatalf("loss reason %v, want ELEASE", err)
	}
	waitDone(t, h)
}

func TestHeld_StoreUnreachable(t *testing.T) {
	t.Run("PastExpiry", func(t *testing.T) {
		fl := &flakyLeases{Leases: newLeases(t)}
		alice := actorCtx(t, "alice")
		h := mustAcquire(t, alice, fl, product1(store.GroupEditor), Options{})
		fl.setDown(true)
		// Before the expiry the holder is told renewals fail, and how long it has left.
		for h.Status().State == StateHeld {
			time.Sleep(20 * time.Millisecond)
		}
		if st := h.Status(); st.State != StateFailing && st.State != StateLost {
			t.Fatalf("status while the store is down = %v", st)
		}
		err := waitLost(t, h)
		var le *store.LeaseError
		if !errors.As(err, &le) || !le.Lost || store.ErrorCode(err) != store.ELEASE {
			t.Fatalf("loss reason %v, want a lost LeaseError", err)
		}
		waitDone(t, h)
	})
	t.Run("ShortOutage", func(t *testing.T) {
		fl := &flakyLeases{Leases: newLeases(t)}
		alice := actorCtx(t, "alice")
		h := mustAcquire(t, alice, fl, product1(store.GroupEditor), Options{})
		fl.setDown(true)
		for h.Status().State != StateFailing {
			select {
			case err := <-h.Lost():
				t.Fatalf("lost during a short outage: %v", err)
			case <-time.After(20 * time.Millisecond):
			}
		}
		fl.setDown(false)
		for h.Status().State == StateFailing {
			time.Sleep(20 * time.Millisecond)
		}
		if st := h.Status(); st.State != StateHeld {
			t.Fatalf("status after the outage = %v, want held", st)
		}
	})
}

func TestHeld_Release(t *testing.T) {
	ls := newLeases(t)
	alice, bob := actorCtx(t, "alice"), actorCtx(t, "bob")
	h := mustAcquire(t, alice, ls, product1(store.GroupEditor), Options{})
	if err := h.Release(alice); err != nil {
		t.Fatalf("Release: %v", err)
	}
	waitDone(t, h)
	if err, ok := <-h.Lost(); ok {
		t.Fatalf("Lost after Release delivered %v, want closed", err)
	}
	if err := h.Release(alice); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if got := h.Status(); got.State != StateReleased || h.Err() != nil {
		t.Fatalf("status after Release = %+v", got)
	}
	// Released at once in the store, not only after the TTL.
	if _, err := ls.AcquireLease(bob, product1(store.GroupEditor)); err != nil {
		t.Fatalf("bob's acquire after alice's release: %v", err)
	}
}

func TestHeld_ContextEnd(t *testing.T) {
	ls := newLeases(t)
	bob := actorCtx(t, "bob")
	ctx, cancel := context.WithCancel(actorCtx(t, "alice"))
	h := mustAcquire(t, ctx, ls, product1(store.GroupEditor), Options{})
	cancel()
	waitDone(t, h)
	if err, ok := <-h.Lost(); ok {
		t.Fatalf("Lost after the context ended delivered %v, want closed", err)
	}
	if _, err := ls.AcquireLease(bob, product1(store.GroupEditor)); err != nil {
		t.Fatalf("bob's acquire after alice's context ended: %v", err)
	}
}

func TestAcquire_Refused(t *testing.T) {
	ls := newLeases(t)
	alice, bob := actorCtx(t, "alice"), actorCtx(t, "bob")
	mustAcquire(t, alice, ls, product1(store.GroupEditor), Options{})
	_, err := Acquire(bob, ls, product1(store.GroupEditor), Options{})
	var le *store.LeaseError
	if !errors.As(err, &le) || le.Lease.Holder != "alice" {
		t.Fatalf("Acquire of a held scope: %v, want a LeaseError naming alice", err)
	}
	// Another group of the same record is independent.
	mustAcquire(t, bob, ls, product1(store.GroupSystem), Options{})
}
