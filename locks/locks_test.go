package locks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Tests about expiry use 1-second leases (store.MinLeaseTTL); the others use leases that
// outlive any stall of a loaded machine, so that a late renewal cannot change their outcome.
// What they assert is behaviour (held, lost, released), never how long anything took, and
// they wait for events (a state, the database clock), not for fixed times.

func actorCtx(t *testing.T, name string) context.Context {
	t.Helper()
	return store.WithActor(t.Context(), store.Actor{Name: name, Role: store.RoleEditor})
}

func product1(group string) store.LeaseRequest {
	return store.LeaseRequest{Kind: store.KindProduct, RecordID: 1, Group: group, TTL: time.Second}
}

// product1Long is product1 with a lease that does not run out during a test.
func product1Long(group string) store.LeaseRequest {
	req := product1(group)
	req.TTL = time.Minute
	return req
}

// waitState polls h until cond holds, failing after a generous bound.
func waitState(t *testing.T, h *Held, what string, cond func(Status) bool) Status {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if st := h.Status(); cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("never %s; status %v", what, h.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	t.Parallel() // waits on lease lifetimes on a store of its own, beside the other such tests
	ls := newLeases(t)
	alice, bob := actorCtx(t, "alice"), actorCtx(t, "bob")
	// A 2-second lease renewed every second (the default, half the TTL): a stalled heartbeat
	// has a second to spare.
	req := product1(store.GroupEditor)
	req.TTL = 2 * time.Second
	h := mustAcquire(t, alice, ls, req, Options{})
	first := h.Lease()

	// Wait until the database clock is well past the first expiry (half a TTL) while the
	// lease is still live: only renewals can have kept it.
	for {
		live, now, err := ls.FindLeases(alice, store.LeaseFilter{Kind: store.KindProduct, RecordID: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(live) != 1 || live[0].Fence != first.Fence {
			t.Fatalf("live leases at %v = %+v, want alice's fence %d", now, live, first.Fence)
		}
		if now.After(first.ExpiresAt.Add(req.TTL / 2)) {
			break
		}
		select {
		case err := <-h.Lost():
			t.Fatalf("lease lost while renewing: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if got := h.Status().State; got != StateHeld {
		t.Fatalf("state = %s, want %s", got, StateHeld)
	}
	if got := h.Lease(); !got.ExpiresAt.After(first.ExpiresAt.Add(req.TTL/2)) || got.Fence != first.Fence || got.Token != first.Token {
		t.Fatalf("lease after renewals = %+v, want same token and fence, expiry later than %v", got, first.ExpiresAt)
	}
	_, err := ls.AcquireLease(bob, product1(store.GroupEditor))
	var le *store.LeaseError
	if !errors.As(err, &le) || le.Lost || le.Lease.Holder != "alice" {
		t.Fatalf("bob's acquire during alice's renewed lease: err = %v, want a LeaseError naming alice", err)
	}
}

func TestHeld_LostAfterTakeover(t *testing.T) {
	t.Parallel() // waits on lease lifetimes on a store of its own, beside the other such tests
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
	// The loss is found at the next renewal; a long lease renewed often shows that it is
	// the release, not an expiry, that is found.
	h := mustAcquire(t, alice, ls, product1Long(store.GroupEditor), Options{RenewEvery: 50 * time.Millisecond})
	if _, err := ls.ReleaseLease(alice, h.Token()); err != nil {
		t.Fatal(err)
	}
	if err := waitLost(t, h); store.ErrorCode(err) != store.ELEASE {
		t.Fatalf("loss reason %v, want ELEASE", err)
	}
	waitDone(t, h)
}

func TestHeld_StoreUnreachable(t *testing.T) {
	t.Parallel() // waits on lease lifetimes on a store of its own, beside the other such tests
	t.Run("PastExpiry", func(t *testing.T) {
		fl := &flakyLeases{Leases: newLeases(t)}
		alice := actorCtx(t, "alice")
		h := mustAcquire(t, alice, fl, product1(store.GroupEditor), Options{})
		fl.setDown(true)
		// Before the expiry the holder is told renewals fail, and how long it has left.
		st := waitState(t, h, "left held", func(s Status) bool { return s.State != StateHeld })
		if st.State != StateFailing && st.State != StateLost {
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
		// A long lease renewed often: the outage is short next to the TTL however slowly
		// the test itself runs.
		h := mustAcquire(t, alice, fl, product1Long(store.GroupEditor), Options{RenewEvery: 50 * time.Millisecond, RetryEvery: 20 * time.Millisecond})
		fl.setDown(true)
		if st := waitState(t, h, "failing", func(s Status) bool { return s.State != StateHeld }); st.State != StateFailing {
			t.Fatalf("status during a short outage = %v, want failing", st)
		}
		fl.setDown(false)
		if st := waitState(t, h, "recovered", func(s Status) bool { return s.State != StateFailing }); st.State != StateHeld {
			t.Fatalf("status after the outage = %v, want held", st)
		}
	})
}

func TestHeld_Release(t *testing.T) {
	ls := newLeases(t)
	alice, bob := actorCtx(t, "alice"), actorCtx(t, "bob")
	h := mustAcquire(t, alice, ls, product1Long(store.GroupEditor), Options{})
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
	if _, err := ls.AcquireLease(bob, product1Long(store.GroupEditor)); err != nil {
		t.Fatalf("bob's acquire after alice's release: %v", err)
	}
}

func TestHeld_ContextEnd(t *testing.T) {
	ls := newLeases(t)
	bob := actorCtx(t, "bob")
	ctx, cancel := context.WithCancel(actorCtx(t, "alice"))
	h := mustAcquire(t, ctx, ls, product1Long(store.GroupEditor), Options{})
	cancel()
	waitDone(t, h)
	if err, ok := <-h.Lost(); ok {
		t.Fatalf("Lost after the context ended delivered %v, want closed", err)
	}
	if _, err := ls.AcquireLease(bob, product1Long(store.GroupEditor)); err != nil {
		t.Fatalf("bob's acquire after alice's context ended: %v", err)
	}
}

func TestAcquire_Refused(t *testing.T) {
	ls := newLeases(t)
	alice, bob := actorCtx(t, "alice"), actorCtx(t, "bob")
	mustAcquire(t, alice, ls, product1Long(store.GroupEditor), Options{})
	_, err := Acquire(bob, ls, product1Long(store.GroupEditor), Options{})
	var le *store.LeaseError
	if !errors.As(err, &le) || le.Lease.Holder != "alice" {
		t.Fatalf("Acquire of a held scope: %v, want a LeaseError naming alice", err)
	}
	// Another group of the same record is independent.
	mustAcquire(t, bob, ls, product1Long(store.GroupSystem), Options{})
}
