package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Lease is a business lock on one field group of one record (seeds 000 and 004): held by one
// person or worker until ExpiresAt, on the database clock. The token proves ownership; the
// fencing number grows with every new grant of the same scope, so a holder whose lease was
// taken over can never write again.
type Lease struct {
	Kind       Kind
	RecordID   int64
	Group      string
	Holder     string
	Token      string // secret; only returned to the holder by AcquireLease
	Fence      int64
	AcquiredAt time.Time
	ExpiresAt  time.Time
	Released   bool
}

// Live reports whether the lease is held at now (database time).
func (l Lease) Live(now time.Time) bool { return !l.Released && now.Before(l.ExpiresAt) }

// LeaseRequest asks for a lease on one group of a record for TTL. The holder is the actor.
type LeaseRequest struct {
	Kind     Kind
	RecordID int64
	Group    string
	TTL      time.Duration
}

// LeaseFilter selects leases for FindLeases.
type LeaseFilter struct {
	Kind     Kind          // "" for all kinds
	RecordID int64         // 0 for all records
	Expired  time.Duration // also list leases that ended (expired or released) within this long
}

// Limits for leases.
const (
	MinLeaseTTL = time.Second
	MaxLeaseTTL = 24 * time.Hour
)

// LeaseRelease is what ReleaseLease found. Releasing a lease that already ended is not an
// error, but the caller is told so: a holder whose lease was taken over must not believe it
// let go of the record itself.
type LeaseRelease struct {
	Lease Lease // the token's lease, without the token
	// Ended is "" when this call ended the lease; otherwise why it had ended before:
	// "released", "expired" or "taken over by bob".
	Ended string
}

// CheckLeaseTTL refuses a lease duration outside [MinLeaseTTL, MaxLeaseTTL]. It is the one
// rule and the one message for AcquireLease and ExtendLease in every store, and for the CLI's
// --ttl, which checks it before it opens a store.
func CheckLeaseTTL(ttl time.Duration) error {
	if ttl < MinLeaseTTL || ttl > MaxLeaseTTL {
		return Errorf(EINVALID, "lease TTL %s is outside %s..%s", ttl, MinLeaseTTL, MaxLeaseTTL)
	}
	return nil
}

// CheckLeaseRequest checks a lease request before any store touches it: a known kind, a
// group the registry has for it, and a TTL in range (CheckLeaseTTL). EINVALID naming the
// kind's groups for an unknown group.
func (r *Registry) CheckLeaseRequest(req LeaseRequest) error {
	if _, ok := r.kinds[req.Kind]; !ok {
		return r.unknownKind(req.Kind)
	}
	if !r.HasGroup(req.Kind, req.Group) {
		return Errorf(EINVALID, "unknown lease group %s for %s (groups: %s)",
			Quote(req.Group), req.Kind, strings.Join(r.Groups(req.Kind), ", "))
	}
	return CheckLeaseTTL(req.TTL)
}

// CheckLeaseAccess refuses (EFORBIDDEN) a lease req by actor on a record their
// permissions do not let them write, path reading where it sits inside the lease's
// transaction (see Actor.CheckPlace).
func CheckLeaseAccess(actor Actor, req LeaseRequest, path PathReader) error {
	return actor.CheckPlace(fmt.Sprintf("a lease on %s %d", req.Kind, req.RecordID), req.Kind, req.RecordID, path)
}

// NewLeaseToken returns a new lease token: 32 random bytes, hex. Only its holder ever sees
// it; stores keep LeaseTokenHash.
func NewLeaseToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// LeaseTokenHash is what a store keeps instead of a lease token (hex SHA-256), so that
// whoever reads the database cannot write under another holder's lease.
func LeaseTokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// LeaseLost decides whether a lease grant, presented with a write, an extend or a release,
// is still valid. cur is the current lease of the grant's scope as the store keeps it, fence
// the fencing number the grant was given, and now the database's time (expiry is the
// database clock's to decide, never the caller's). It returns nil while the grant is the
// scope's current, live lease; otherwise a *LeaseError (Lost) whose Reason says why:
// "taken over by HOLDER" when a newer grant holds the scope (whatever became of the old
// one), else "released" or "expired". The error's Lease is cur without its token, at the
// grant's fence. Every store reads its row and asks this, so they all give the same answer.
func LeaseLost(cur Lease, fence int64, now time.Time) error {
	var reason string
	switch {
	case cur.Fence != fence:
		reason = "taken over by " + cur.Holder
	case cur.Released:
		reason = "released"
	case !now.Before(cur.ExpiresAt):
		reason = "expired"
	default:
		return nil
	}
	l := cur
	l.Token, l.Fence = "", fence
	return &LeaseError{Lease: l, Lost: true, Now: now, Reason: reason}
}

// LeaseGrant is a lease token's grant as a store keeps it: the scope it was granted on and
// its fencing number.
type LeaseGrant struct {
	Kind     Kind
	RecordID int64
	Group    string
	Fence    int64
}

// WriteLeases is what a store read, inside a write's transaction, for the lease check of a
// write (CheckWriteLeases).
type WriteLeases struct {
	// Now is the database's time.
	Now time.Time
	// Grant is the presented token's grant; nil when no token was presented or the store
	// never granted it.
	Grant *LeaseGrant
	// Current is the current lease of the grant's scope; nil when the store has none, or
	// when it was not read (no grant, or a grant of another record).
	Current *Lease
	// Others are leases of the written groups of the record held under another token than
	// the presented one, live or not (a store may leave out those that are not live).
	Others []Lease
}

// CheckWriteLeases decides the lease check of a write of kind id presenting token ("" for
// none), from what the store read (w): a presented token must be one the store granted
// (else ELEASE, UnknownTokenError), for this record (else EINVALID), and still the current,
// live lease of its scope (else LeaseLost's *LeaseError); then no other token's live lease
// may cover a written group (else a *LeaseError naming the holder, of the first such group
// by name). A write without a token under a live lease is refused even when the holder has
// the writer's name: the token binds. Every store's writes (saves, creates, moves, deletes)
// ask it, so they refuse in the same order and the same words.
func CheckWriteLeases(kind Kind, id int64, token string, w WriteLeases) error {
	if token != "" {
		g := w.Grant
		if g == nil {
			return UnknownTokenError(kind, id, w.Now)
		}
		if g.Kind != kind || g.RecordID != id {
			return Errorf(EINVALID, "the lease token belongs to %s %d, not %s %d", g.Kind, g.RecordID, kind, id)
		}
		if w.Current == nil {
			return Errorf(EINTERNAL, "lease of %s %d (%s) is missing", g.Kind, g.RecordID, g.Group)
		}
		if err := LeaseLost(*w.Current, g.Fence, w.Now); err != nil {
			return err
		}
	}
	var blocker *Lease
	for i, l := range w.Others {
		if l.Live(w.Now) && (blocker == nil || l.Group < blocker.Group) {
			blocker = &w.Others[i]
		}
	}
	if blocker == nil {
		return nil
	}
	l := *blocker
	l.Token = ""
	return &LeaseError{Lease: l, Now: w.Now}
}

// LeaseBreaker is a store that ends another's live lease: an admin's force-release.
type LeaseBreaker interface {
	// BreakLease ends the live lease on group of record id of kind, whoever holds it, for
	// the actor in ctx (CheckBreakLease: EFORBIDDEN for anyone but an admin). ENOTFOUND when
	// no live lease holds that group. Its holder's token stops being valid at once: their
	// next save, extend or heartbeat learns the lease is gone.
	BreakLease(ctx context.Context, kind Kind, id int64, group string) (*LeaseRelease, error)
}

// CheckBreakLease returns the actor in ctx when they may break others' leases on kind
// (an admin, or an actor without permissions), EFORBIDDEN otherwise.
func CheckBreakLease(ctx context.Context, kind Kind, id int64) (Actor, error) {
	what := fmt.Sprintf("the release of another's lease on %s %d", kind, id)
	a, err := WriterFrom(ctx, what)
	if err != nil {
		return Actor{}, err
	}
	if err := a.CheckKind(what, kind); err != nil {
		return Actor{}, err
	}
	return a, a.CheckAdmin(what)
}

// NoLiveLease is the error of a BreakLease that finds no live lease to end.
func NoLiveLease(kind Kind, id int64, group string) error {
	return Errorf(ENOTFOUND, "no live lease holds %s of %s %d", Quote(group), kind, id)
}
