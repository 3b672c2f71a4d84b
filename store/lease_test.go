package store

import (
	"errors"
	"testing"
	"time"
)

func TestLeaseLost(t *testing.T) {
	now := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	alice := Lease{Kind: KindProduct, RecordID: 7, Group: GroupEditor, Holder: "alice", Token: "secret", Fence: 3,
		AcquiredAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Minute)}
	with := func(f func(*Lease)) Lease { l := alice; f(&l); return l }
	for _, c := range []struct {
		name   string
		cur    Lease
		fence  int64
		reason string // "" for a valid grant
	}{
		{"live", alice, 3, ""},
		{"expires a moment later", with(func(l *Lease) { l.ExpiresAt = now.Add(time.Microsecond) }), 3, ""},
		{"expired at now", with(func(l *Lease) { l.ExpiresAt = now }), 3, "expired"},
		{"expired before", with(func(l *Lease) { l.ExpiresAt = now.Add(-time.Second) }), 3, "expired"},
		{"released", with(func(l *Lease) { l.Released, l.ExpiresAt = true, now.Add(-time.Second) }), 3, "released"},
		{"released, expiry ahead", with(func(l *Lease) { l.Released = true }), 3, "released"},
		// Whether alice's lease expired or she released it before bob acquired the scope:
		// the current row is bob's, and that is what her grant is told.
		{"taken over", with(func(l *Lease) { l.Holder, l.Fence = "bob", 4 }), 3, "taken over by bob"},
		{"taken over, the new lease ended too", with(func(l *Lease) { l.Holder, l.Fence, l.Released = "bob", 5, true }), 3, "taken over by bob"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := LeaseLost(c.cur, c.fence, now)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("LeaseLost = %v, want nil (valid)", err)
				}
				return
			}
			var le *LeaseError
			if !errors.As(err, &le) {
				t.Fatalf("LeaseLost = %v, want a *LeaseError", err)
			}
			if !le.Lost || le.Reason != c.reason || !le.Now.Equal(now) {
				t.Errorf("LeaseLost = lost %v reason %q now %v, want lost, %q, %v", le.Lost, le.Reason, le.Now, c.reason, now)
			}
			if le.Lease.Token != "" || le.Lease.Fence != c.fence || le.Lease.Kind != KindProduct || le.Lease.RecordID != 7 || le.Lease.Group != GroupEditor {
				t.Errorf("lease in the error = %+v, want product 7's editor lease at fence %d without its token", le.Lease, c.fence)
			}
			if ErrorCode(err) != ELEASE {
				t.Errorf("code = %s, want %s", ErrorCode(err), ELEASE)
			}
		})
	}
}
