package store

import (
	"context"
	"strings"
	"time"
)

// KeyStatus is the state of an idempotency key.
type KeyStatus string

// Idempotency key states (seed 000).
const (
	KeyPending   KeyStatus = "PENDING"   // claimed; the work is under way
	KeyCompleted KeyStatus = "COMPLETED" // done; Result replays it
	KeyFailed    KeyStatus = "FAILED"    // failed for good; a new claim may try again
)

// Idempotency scopes. API keys (CLI and editor saves) and job keys (workers) never collide.
const (
	ScopeAPI = "api"
	ScopeJob = "job"
)

// Key retention, decided here for every store:
//
//   - A PENDING claim lives for its TTL (DefaultPendingTTL unless the claimer asks), so that a
//     dead owner's claim is taken over soon.
//   - A COMPLETED key is kept for good, with its request hash, result, who applied it and
//     when: it answers every later request with the same key, however late (a working copy
//     restored from a backup, a script retried after months), and whatever the clocks of the
//     processes that ask say. Its ExpiresAt (completion plus keep, DefaultCompletedTTL by
//     default) is the retention its result was promised for; no decision reads it, and
//     PurgeKeys never deletes a COMPLETED key. That is one row of a few hundred bytes per
//     keyed write, kept as the change log keeps its entry of the write.
//   - A FAILED key may be claimed again at once by the same request, and by another one
//     once its lifetime (DefaultCompletedTTL) ended; PurgeKeys deletes it then.
const (
	DefaultPendingTTL   = 30 * time.Second
	DefaultCompletedTTL = 7 * 24 * time.Hour
)

// Purgeable reports whether PurgeKeys deletes k at now (the database clock): a PENDING or
// FAILED key whose lifetime ended. A COMPLETED key never is. The SQL stores write the same
// condition in their DELETE (status <> 'COMPLETED' AND expires_at <= now).
func Purgeable(k KeyRecord, now time.Time) bool {
	return k.Status != KeyCompleted && !now.Before(k.ExpiresAt)
}

// KeyRecord is the state of one idempotency key. ExpiresAt ends a PENDING claim and a
// FAILED key; a COMPLETED key outlives it (see DefaultCompletedTTL).
type KeyRecord struct {
	Scope       string
	Key         string
	Status      KeyStatus
	RequestHash string
	Result      []byte
	Owner       string
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// Claim is the answer to ClaimKey.
type Claim struct {
	// Claimed is true when the caller now owns the key (new, FAILED or stale PENDING taken
	// over) and must do the work, then CompleteKey or FailKey.
	Claimed bool
	// Record is the key's state; for a COMPLETED key, Record.Result replays the first result.
	Record KeyRecord
}

// MaxKeyLen is the longest idempotency key a store accepts, in bytes.
const MaxKeyLen = 200

// CheckKey validates an idempotency key and its scope before any store touches them.
func CheckKey(scope, key string) error {
	switch {
	case scope == "":
		return Errorf(EINVALID, "idempotency key without a scope")
	case key == "":
		return Errorf(EINVALID, "empty idempotency key")
	case len(key) > MaxKeyLen:
		return Errorf(EINVALID, "idempotency key over %d characters", MaxKeyLen)
	}
	return nil
}

// KeyOwner names the owner of a claim: the actor and the store value that claimed it
// ("alice@3f9c..."), so that a paused process cannot complete a claim another process (or
// another store value of the same actor) took over. Every store names owners this way.
func KeyOwner(actor Actor, instance string) string { return actor.Name + "@" + instance }

// KeyCaller checks what every ClaimKey, CompleteKey and FailKey starts with, before a store
// touches the key: the scope and key (CheckKey), and the actor, returned as the claim owner
// the store value instance writes (KeyOwner).
func KeyCaller(ctx context.Context, scope, key, instance string) (owner string, err error) {
	if err := CheckKey(scope, key); err != nil {
		return "", err
	}
	a, err := ActorFrom(ctx)
	if err != nil {
		return "", err
	}
	return KeyOwner(a, instance), nil
}

// PendingTTL is how long a new claim lives: ttl, or DefaultPendingTTL when ttl <= 0.
func PendingTTL(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return DefaultPendingTTL
	}
	return ttl
}

// CompletedKey is what CompleteKey stores: the result (empty, never nil, so a COMPLETED key
// always has one) and the retention its result is promised for, which dates its ExpiresAt
// (keep, or DefaultCompletedTTL when keep <= 0). The key itself is kept for good.
func CompletedKey(result []byte, keep time.Duration) ([]byte, time.Duration) {
	if result == nil {
		result = []byte{}
	}
	if keep <= 0 {
		keep = DefaultCompletedTTL
	}
	return result, keep
}

// ClaimDecision is what ClaimKey does with a key, as DecideClaim says.
type ClaimDecision int

// The claim decisions. Claim and TakeOver both write a PENDING claim for the caller; they
// differ only in whether an old row is overwritten.
const (
	// ClaimNew: no row, or a FAILED one whose lifetime ended (as good as purged). The caller
	// claims the key.
	ClaimNew ClaimDecision = iota + 1
	// ClaimTakeOver: a FAILED key, the caller's own PENDING claim, or a stale PENDING claim
	// whose owner died. The caller claims the key over the old row.
	ClaimTakeOver
	// ClaimReplay: the same request already COMPLETED, however long ago. Nothing is written;
	// the caller gets the stored record and replays its result.
	ClaimReplay
)

// DecideClaim decides, once for every store, what ClaimKey does: k is the key's stored row
// (nil when there is none), requestHash the request's hash, owner the caller's KeyOwner and
// now the database clock, which only PENDING and FAILED keys are judged by. A COMPLETED key
// is final: the same request replays it and another one is EINVALID, whatever now says. A
// key that remembers another request is EINVALID (even a stale PENDING one: its request may
// still be half done); a live PENDING claim of another owner is EBUSY. Backends read the
// row, call DecideClaim, and write what it says.
func DecideClaim(k *KeyRecord, requestHash, owner string, now time.Time) (ClaimDecision, error) {
	if k == nil {
		return ClaimNew, nil
	}
	live := now.Before(k.ExpiresAt)
	switch {
	case k.Status == KeyFailed && !live:
		return ClaimNew, nil
	case k.RequestHash != requestHash:
		return 0, keyMismatchError(k)
	case k.Status == KeyCompleted:
		return ClaimReplay, nil
	case k.Status == KeyPending && live && k.Owner != owner:
		return 0, keyBusyError(k)
	}
	return ClaimTakeOver, nil
}

// CheckSaveKey decides what a save does with an idempotency key already stored for it (scope
// api): k is the stored key, live whether its lifetime has not ended (database clock), hash
// the save's RequestHash. replay is true when the same request already completed, however
// long ago (live is not read then): the save answers with k's result and writes nothing. A
// COMPLETED key of another request is EINVALID, and so is a live PENDING or FAILED one; a
// live PENDING key is EBUSY (a save never holds a claim, so any live claim is someone
// else's); an ended PENDING or FAILED key, and a live FAILED key of the same request, are
// free, and the save takes them. The errors are DecideClaim's.
func CheckSaveKey(k KeyRecord, live bool, hash string) (replay bool, err error) {
	if !live && k.Status != KeyCompleted {
		return false, nil
	}
	if k.RequestHash != hash {
		return false, keyMismatchError(&k)
	}
	switch k.Status {
	case KeyCompleted:
		return true, nil
	case KeyPending:
		return false, keyBusyError(&k)
	}
	return false, nil
}

func keyMismatchError(k *KeyRecord) error {
	when := ""
	if !k.CreatedAt.IsZero() {
		when = " at " + k.CreatedAt.UTC().Format(time.RFC3339)
		if k.Owner != "" {
			when = " by " + k.Owner + when
		}
		when = " (" + strings.TrimPrefix(when, " ") + ")"
	}
	return Errorf(EINVALID, "idempotency key %s was already used for a different request%s; a key stands for one request, so this one needs a key of its own", k.Key, when)
}

func keyBusyError(k *KeyRecord) error {
	by := "another request" // a save's own lookup may not read the owner
	if k.Owner != "" {
		by = k.Owner + " since " + k.CreatedAt.UTC().Format(time.RFC3339)
	}
	return Errorf(EBUSY, "idempotency key %s is being worked on by %s; try again later", k.Key, by)
}

// KeyNotClaimedError is the error of CompleteKey and FailKey when the caller does not hold
// the key's PENDING claim, in every store.
func KeyNotClaimedError(scope, key string) error {
	return Errorf(ENOTFOUND, "idempotency key %s/%s is not claimed by you (never claimed, finished, or taken over)", scope, key)
}
