package locks

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// flakyLeases wraps a store.Leases and makes ExtendLease fail with EUNAVAILABLE while down
// is set: a store that is out of reach, between the manager and any store.
type flakyLeases struct {
	store.Leases
	mu   sync.Mutex
	down bool
}

func (f *flakyLeases) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *flakyLeases) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		return nil, store.Errorf(store.EUNAVAILABLE, "extend lease: %w", fmt.Errorf("connection refused"))
	}
	return f.Leases.ExtendLease(ctx, token, ttl)
}
