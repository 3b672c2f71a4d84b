package locks

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// flakyLeases wraps a store.Leases and makes ExtendLease fail with EUNAVAILABLE while down
// is set: a store that is out of reach, which a real SQLite file cannot simulate.
type flakyLeases struct {
	store.Leases
	mu      sync.Mutex
	down    bool
	extends int
}

func (f *flakyLeases) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *flakyLeases) extendCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.extends
}

func (f *flakyLeases) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	f.mu.Lock()
	down := f.down
	f.extends++
	f.mu.Unlock()
	if down {
		return nil, store.Errorf(store.EUNAVAILABLE, "extend lease: %w", fmt.Errorf("connection refused"))
	}
	return f.Leases.ExtendLease(ctx, token, ttl)
}

// memLeases is a minimal in-memory store.Leases with the store's lease rules (live lease
// refuses, expired or released one is taken over with a higher fence, extend only while live),
// used until a real store is available to this package's tests.
type memLeases struct {
	mu     sync.Mutex
	leases map[string]*store.Lease // by token
	fences map[string]int64        // by scope
	n      int
}

func newMemLeases() *memLeases {
	return &memLeases{leases: map[string]*store.Lease{}, fences: map[string]int64{}}
}

func scopeOf(k store.Kind, id int64, g string) string { return fmt.Sprintf("%s/%d/%s", k, id, g) }

func (m *memLeases) AcquireLease(ctx context.Context, r store.LeaseRequest) (*store.Lease, error) {
	a, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	sc := scopeOf(r.Kind, r.RecordID, r.Group)
	for _, l := range m.leases {
		if scopeOf(l.Kind, l.RecordID, l.Group) == sc && l.Live(now) {
			return nil, &store.LeaseError{Lease: *l, Now: now}
		}
	}
	m.n++
	m.fences[sc]++
	l := &store.Lease{Kind: r.Kind, RecordID: r.RecordID, Group: r.Group, Holder: a.Name,
		Token: fmt.Sprintf("tok-%d", m.n), Fence: m.fences[sc], AcquiredAt: now, ExpiresAt: now.Add(r.TTL)}
	m.leases[l.Token] = l
	c := *l
	return &c, nil
}

func (m *memLeases) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.leases[token]
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "no lease with this token")
	}
	now := time.Now()
	if !l.Live(now) {
		return nil, &store.LeaseError{Lease: *l, Lost: true, Now: now, Reason: "expired"}
	}
	l.ExpiresAt = now.Add(ttl)
	c := *l
	return &c, nil
}

func (m *memLeases) ReleaseLease(ctx context.Context, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.leases[token]
	if !ok {
		return store.Errorf(store.ENOTFOUND, "no lease with this token")
	}
	l.Released = true
	return nil
}

func (m *memLeases) FindLeases(ctx context.Context, f store.LeaseFilter) ([]store.Lease, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	var out []store.Lease
	for _, l := range m.leases {
		if l.Live(now) {
			c := *l
			c.Token = ""
			out = append(out, c)
		}
	}
	return out, now, nil
}
