package memory

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/store"
)

type leaseScope struct {
	kind  store.Kind
	id    int64
	group string
}

type lease struct {
	store.Lease
}

// checkLeases is the lease check of a write: it gathers what store.CheckWriteLeases decides
// on (the presented token's grant and its scope's current lease, the leases of the written
// groups held under other tokens) and asks it.
func (db *DB) checkLeases(kind store.Kind, id int64, groups []string, token string, now time.Time) error {
	w := store.WriteLeases{Now: now}
	if token != "" {
		if l, ok := db.tokens[token]; ok {
			w.Grant = &store.LeaseGrant{Kind: l.Kind, RecordID: l.RecordID, Group: l.Group, Fence: l.Fence}
			if cur, ok := db.leases[leaseScope{l.Kind, l.RecordID, l.Group}]; ok {
				w.Current = &cur.Lease
			}
		}
	}
	for _, g := range groups {
		if l, ok := db.leases[leaseScope{kind, id, g}]; ok && l.Token != token {
			w.Others = append(w.Others, l.Lease)
		}
	}
	return store.CheckWriteLeases(kind, id, token, w)
}

// lost decides whether the grant l is still valid at now (store.LeaseLost), against the
// current lease of its scope.
func (db *DB) lost(l *lease, now time.Time) error {
	return store.LeaseLost(db.leases[leaseScope{l.Kind, l.RecordID, l.Group}].Lease, l.Fence, now)
}

func (l *lease) public() store.Lease {
	p := l.Lease
	p.Token = ""
	return p
}

// AcquireLease grants a lease to the actor, taking over an expired or released one with a
// higher fencing number. ELEASE (*store.LeaseError naming the holder) when a live lease
// holds the scope, EINVALID for an unknown group or a TTL out of range, ENOTFOUND for a
// missing record.
func (db *DB) AcquireLease(ctx context.Context, req store.LeaseRequest) (*store.Lease, error) {
	actor, err := store.WriterFrom(ctx, "a lease")
	if err != nil {
		return nil, err
	}
	if err := db.begin(ctx, "AcquireLease"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if err := db.Registry().CheckLeaseRequest(req); err != nil {
		return nil, err
	}
	if db.wc != nil {
		return nil, store.CopyLeaseRefused("in memory")
	}
	if _, err := db.find(req.Kind, req.RecordID); err != nil {
		return nil, err
	}
	if err := store.CheckLeaseAccess(actor, req, store.AncestorsFunc(func(id int64) ([]int64, error) {
		return db.ancestors(req.Kind, id), nil
	})); err != nil {
		return nil, err
	}
	now := db.dbNow()
	scope := leaseScope{req.Kind, req.RecordID, req.Group}
	old, ok := db.leases[scope]
	if ok && old.Live(now) {
		return nil, &store.LeaseError{Lease: old.public(), Now: now}
	}
	if ok && !old.Released {
		db.appendChange(store.Change{Event: store.EventLeaseExpired, Kind: req.Kind, RecordID: req.RecordID,
			Actor: old.Holder, Group: req.Group, Fence: old.Fence, At: now})
	}
	db.fences[scope]++
	l := &lease{Lease: store.Lease{Kind: req.Kind, RecordID: req.RecordID, Group: req.Group, Holder: actor.Name,
		Token: store.NewLeaseToken(), Fence: db.fences[scope], AcquiredAt: now, ExpiresAt: now.Add(req.TTL)}}
	db.leases[scope] = l
	db.tokens[l.Token] = l
	db.appendChange(store.Change{Event: store.EventLeaseGranted, Kind: req.Kind, RecordID: req.RecordID,
		Actor: actor.Name, Role: actor.Role, Group: req.Group, Fence: l.Fence, At: now})
	out := l.Lease
	return &out, nil
}

// ExtendLease moves a live lease's expiry to now + ttl. ELEASE (Lost) when the lease
// expired, was released or taken over; ENOTFOUND for an unknown token; EINVALID for a TTL
// out of range.
func (db *DB) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	if err := db.begin(ctx, "ExtendLease"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if err := store.CheckLeaseTTL(ttl); err != nil {
		return nil, err
	}
	l, ok := db.tokens[token]
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "no lease with this token")
	}
	now := db.dbNow()
	if err := db.lost(l, now); err != nil {
		return nil, err
	}
	l.ExpiresAt = now.Add(ttl)
	db.appendChange(store.Change{Event: store.EventLeaseRenewed, Kind: l.Kind, RecordID: l.RecordID,
		Actor: l.Holder, Group: l.Group, Fence: l.Fence, At: now})
	out := l.Lease
	return &out, nil
}

// ReleaseLease ends a lease; releasing an ended lease is not an error. ENOTFOUND for an
// unknown token.
func (db *DB) ReleaseLease(ctx context.Context, token string) (*store.LeaseRelease, error) {
	if err := db.begin(ctx, "ReleaseLease"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	l, ok := db.tokens[token]
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "no lease with this token")
	}
	now := db.dbNow()
	var le *store.LeaseError
	if err := db.lost(l, now); errors.As(err, &le) {
		return &store.LeaseRelease{Lease: le.Lease, Ended: le.Reason}, nil
	}
	l.Released, l.ExpiresAt = true, now
	db.appendChange(store.Change{Event: store.EventLeaseReleased, Kind: l.Kind, RecordID: l.RecordID,
		Actor: l.Holder, Group: l.Group, Fence: l.Fence, At: now})
	return &store.LeaseRelease{Lease: l.public()}, nil
}

// BreakLease ends another's live lease on group of kind id (store.LeaseBreaker).
func (db *DB) BreakLease(ctx context.Context, kind store.Kind, id int64, group string) (*store.LeaseRelease, error) {
	actor, err := store.CheckBreakLease(ctx, kind, id)
	if err != nil {
		return nil, err
	}
	if err := db.begin(ctx, "BreakLease"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	now := db.dbNow()
	l, ok := db.leases[leaseScope{kind, id, group}]
	if !ok || !l.Live(now) {
		return nil, store.NoLiveLease(kind, id, group)
	}
	l.Released, l.ExpiresAt = true, now
	db.appendChange(store.Change{Event: store.EventLeaseReleased, Kind: kind, RecordID: id,
		Actor: actor.Name, Role: actor.Role, Group: group, Fence: l.Fence, At: now})
	return &store.LeaseRelease{Lease: l.public()}, nil
}

// FindLeases returns the live leases matching flt, and those that ended within flt.Expired,
// without tokens, ordered by kind, record and group, with the database clock's now.
func (db *DB) FindLeases(ctx context.Context, flt store.LeaseFilter) ([]store.Lease, time.Time, error) {
	if err := db.begin(ctx, "FindLeases"); err != nil {
		return nil, time.Time{}, err
	}
	defer db.mu.Unlock()
	now := db.dbNow()
	out := []store.Lease{}
	for scope, l := range db.leases {
		if flt.Kind != "" && scope.kind != flt.Kind || flt.RecordID != 0 && scope.id != flt.RecordID {
			continue
		}
		// A released lease's ExpiresAt is the moment it was released.
		if l.Live(now) || flt.Expired > 0 && now.Sub(l.ExpiresAt) < flt.Expired {
			out = append(out, l.public())
		}
	}
	slices.SortFunc(out, func(a, b store.Lease) int {
		if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.RecordID, b.RecordID); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	})
	return out, now, nil
}
