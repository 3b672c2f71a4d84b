// Package locks keeps leases alive for long-running holders: a person editing a record, a
// `tandem lease acquire --hold`, a worker busy with one record. Acquire takes a lease from a
// store.Leases and starts a heartbeat that renews it at half its TTL (seed 000); the holder
// learns at once, on Held.Lost, when the lease is gone (the store refused a renewal because
// the lease expired or was taken over, or the store stayed unreachable until the lease's
// expiry), so it stops writing. Saves made under the lease still carry its token, and the
// store checks token and fencing number in the same transaction as the write: the heartbeat
// keeps the lease, the fencing check makes it safe.
package locks

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// DefaultTTL is the lease TTL when none is given: long enough that a person's lease survives
// a short network outage, short enough that a crashed holder frees the record soon. The
// heartbeat keeps a live holder's lease for as long as it runs.
const DefaultTTL = 2 * time.Minute

// releaseTimeout bounds the release a heartbeat makes on its own when its context ends.
const releaseTimeout = 5 * time.Second

// Options tune a Held lease's heartbeat. The zero value is ready to use.
type Options struct {
	// TTL is the lease's time to live, used for the grant and every renewal when the
	// request names none; zero means DefaultTTL. A LeaseRequest's own TTL wins.
	TTL time.Duration
	// RenewEvery is the time between successful renewals; zero means half the TTL.
	RenewEvery time.Duration
	// RetryEvery is the time between attempts after a renewal failed for a transient
	// reason (store unreachable, busy); zero means a tenth of the TTL.
	RetryEvery time.Duration

	// beforeRenew, when set (tests only), runs before every renewal attempt; a test pauses
	// the heartbeat by blocking in it.
	beforeRenew func()
}

// State is where a held lease stands.
type State string

// Lease states, as Status reports them.
const (
	StateHeld     State = "held"     // the last renewal succeeded
	StateFailing  State = "failing"  // renewals fail for a transient reason; still valid until the expiry
	StateLost     State = "lost"     // refused by the store, or not renewed before the expiry
	StateReleased State = "released" // released by the holder (or its context ended)
)

// Status is a snapshot of a held lease for a user interface.
type Status struct {
	State State
	// Lease is the lease as last granted or renewed. Its Token is empty: a status is for
	// display and never carries the secret.
	Lease store.Lease
	// Remaining is how long the lease stays valid by the local estimate (the last
	// successful renewal plus the TTL, on the monotonic clock); 0 once lost or released.
	Remaining time.Duration
	// Err is the last renewal error (StateFailing) or why the lease was lost (StateLost).
	Err error
}

// String describes the status in a few words: "held, 1m40s left", "renewal failing, 12s
// left: database is locked", "lost: your lease … is no longer valid: expired".
func (s Status) String() string {
	left := s.Remaining.Round(time.Second)
	switch s.State {
	case StateHeld:
		return fmt.Sprintf("held, %s left", left)
	case StateFailing:
		return fmt.Sprintf("renewal failing, %s left: %v", left, s.Err)
	case StateLost:
		return fmt.Sprintf("lost: %v", s.Err)
	}
	return string(s.State)
}

// Held is a lease kept alive by a heartbeat goroutine. All methods are safe for concurrent
// use. The heartbeat ends when Release is called, when the lease is lost, or when the
// context given to Acquire ends (the lease is then released on a best-effort basis).
type Held struct {
	leases store.Leases
	ttl    time.Duration
	renew  time.Duration
	retry  time.Duration
	hook   func()

	cancel context.CancelFunc // stops the heartbeat and any renewal in flight
	done   chan struct{}      // closed when the heartbeat goroutine has ended
	lost   chan error         // one loss reason, then closed; closed without a value otherwise

	mu       sync.Mutex
	lease    store.Lease // as last granted or renewed, with its token
	deadline time.Time   // local monotonic estimate of lease.ExpiresAt
	state    State
	err      error
	stopping bool // Release was called

	releaseOnce sync.Once
	releaseErr  error
}

// Acquire takes a lease on req's scope and keeps it alive until Release, loss, or the end of
// ctx. ctx must carry the actor (store.WithActor): the heartbeat's renewals are made by it.
// req.TTL of zero means opts.TTL, then DefaultTTL. The store's errors pass through: ELEASE
// (*store.LeaseError naming the holder) when someone holds the scope, EINVALID, ENOTFOUND.
func Acquire(ctx context.Context, leases store.Leases, req store.LeaseRequest, opts Options) (*Held, error) {
	if req.TTL == 0 {
		req.TTL = opts.TTL
	}
	if req.TTL == 0 {
		req.TTL = DefaultTTL
	}
	start := time.Now()
	l, err := leases.AcquireLease(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("acquire lease on %s %d (%s): %w", req.Kind, req.RecordID, req.Group, err)
	}
	h := &Held{
		leases:   leases,
		ttl:      req.TTL,
		renew:    opts.RenewEvery,
		retry:    opts.RetryEvery,
		hook:     opts.beforeRenew,
		done:     make(chan struct{}),
		lost:     make(chan error, 1),
		lease:    *l,
		deadline: start.Add(req.TTL),
		state:    StateHeld,
	}
	if h.renew <= 0 {
		h.renew = h.ttl / 2
	}
	if h.retry <= 0 {
		h.retry = h.ttl / 10
	}
	hctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	go h.run(hctx, ctx)
	return h, nil
}

// Lease returns the lease as last granted or renewed, token included.
func (h *Held) Lease() store.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease
}

// Token returns the lease's secret token, to present with every save made under it.
func (h *Held) Token() string { return h.Lease().Token }

// Lost returns a channel that receives why the lease was lost, once, and is then closed. It
// is closed without a value when the lease was released or its context ended.
func (h *Held) Lost() <-chan error { return h.lost }

// Done returns a channel that is closed when the heartbeat has stopped for any reason.
func (h *Held) Done() <-chan struct{} { return h.done }

// Err returns why the lease was lost, or nil while it is held or after a release.
func (h *Held) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == StateLost {
		return h.err
	}
	return nil
}

// Expires returns when the lease expires by the local estimate: the start of the last
// successful renewal plus the TTL. It is never later than the database's expiry.
func (h *Held) Expires() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.deadline
}

// Remaining returns how long the lease stays valid by the local estimate, 0 once it is lost,
// released or past its expiry.
func (h *Held) Remaining() time.Duration { return h.Status().Remaining }

// Status returns a snapshot for display.
func (h *Held) Status() Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Status{State: h.state, Lease: h.lease, Err: h.err}
	s.Lease.Token = ""
	if s.State == StateHeld || s.State == StateFailing {
		s.Remaining = max(time.Until(h.deadline), 0)
	}
	if s.State == StateHeld {
		s.Err = nil
	}
	return s
}

// Release stops the heartbeat and ends the lease in the store. It is idempotent: later calls
// return the first call's result. A lost lease is not released (there is nothing left to
// end). ctx must carry the actor.
func (h *Held) Release(ctx context.Context) error {
	h.mu.Lock()
	h.stopping = true
	h.mu.Unlock()
	h.cancel()
	<-h.done
	h.release(ctx)
	return h.releaseErr
}

// release ends the lease in the store once, unless it was lost.
func (h *Held) release(ctx context.Context) {
	h.releaseOnce.Do(func() {
		h.mu.Lock()
		lost := h.state == StateLost
		token := h.lease.Token
		if !lost {
			h.state = StateReleased
			h.err = nil
		}
		h.mu.Unlock()
		if lost {
			return
		}
		if _, err := h.leases.ReleaseLease(ctx, token); err != nil {
			h.releaseErr = fmt.Errorf("release lease on %s %d (%s): %w", h.lease.Kind, h.lease.RecordID, h.lease.Group, err)
		}
	})
}

// run is the heartbeat. hctx ends on Release or when parent ends.
func (h *Held) run(hctx, parent context.Context) {
	var lostErr error
	defer func() {
		if lostErr != nil {
			h.lost <- lostErr
		}
		close(h.lost)
		close(h.done)
	}()
	timer := time.NewTimer(h.renew)
	defer timer.Stop()
	for {
		select {
		case <-hctx.Done():
			h.stopped(parent)
			return
		case <-timer.C:
		}
		if h.hook != nil {
			h.hook()
		}
		next, err := h.beat(hctx)
		if hctx.Err() != nil {
			h.stopped(parent)
			return
		}
		if err != nil {
			lostErr = err
			return
		}
		timer.Reset(next)
	}
}

// stopped handles the end of the heartbeat's context: after Release there is nothing to do;
// when the caller's context ended, the lease is released so nobody waits for its expiry.
func (h *Held) stopped(parent context.Context) {
	h.mu.Lock()
	stopping := h.stopping
	h.mu.Unlock()
	if stopping {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), releaseTimeout)
	defer cancel()
	h.release(ctx)
}

// beat makes one renewal attempt. It returns the wait until the next attempt, or the reason
// the lease is lost.
func (h *Held) beat(ctx context.Context) (time.Duration, error) {
	h.mu.Lock()
	token, fence, deadline := h.lease.Token, h.lease.Fence, h.deadline
	h.mu.Unlock()

	if !time.Now().Before(deadline) {
		return 0, h.lose(h.expiredErr(nil))
	}
	// A renewal still in flight at the expiry is too late whatever it returns.
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	start := time.Now()
	l, err := h.leases.ExtendLease(cctx, token, h.ttl)
	if ctx.Err() != nil {
		return 0, nil // stopping; the caller sees ctx and ends
	}
	switch {
	case err == nil && l.Fence != fence:
		return 0, h.lose(fmt.Errorf("lease on %s %d (%s) was granted again (fence %d, ours %d)", l.Kind, l.RecordID, l.Group, l.Fence, fence))
	case err == nil:
		h.mu.Lock()
		l.Token = token
		h.lease = *l
		h.deadline = start.Add(h.ttl)
		h.state = StateHeld
		h.err = nil
		h.mu.Unlock()
		return h.renew, nil
	case permanent(err):
		return 0, h.lose(fmt.Errorf("renew lease: %w", err))
	}
	// Transient: keep trying until the expiry, and wake up at the expiry at the latest so the
	// loss is reported on time.
	left := time.Until(deadline)
	if left <= 0 {
		return 0, h.lose(h.expiredErr(err))
	}
	h.mu.Lock()
	h.state = StateFailing
	h.err = err
	h.mu.Unlock()
	return min(h.retry, left), nil
}

// expiredErr is the loss reason when the lease ran out without a successful renewal.
func (h *Held) expiredErr(last error) error {
	h.mu.Lock()
	l := h.lease
	if last == nil {
		last = h.err
	}
	h.mu.Unlock()
	lerr := &store.LeaseError{Lease: l, Lost: true, Now: time.Now(), Reason: "expired: not renewed in time"}
	lerr.Lease.Token = ""
	if last != nil {
		lerr.Reason = fmt.Sprintf("expired: not renewed in time (last error: %v)", last)
	}
	return lerr
}

// lose records the loss and returns err.
func (h *Held) lose(err error) error {
	h.mu.Lock()
	h.state = StateLost
	h.err = err
	h.mu.Unlock()
	return err
}

// permanent reports whether a renewal error means the lease is gone for good, as opposed to
// a store that is busy or out of reach for a moment.
func permanent(err error) bool {
	switch store.ErrorCode(err) {
	case store.ELEASE, store.ENOTFOUND, store.EINVALID, store.EFORBIDDEN:
		return true
	}
	return false
}
