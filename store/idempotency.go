package store

import "time"

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

// Key lifetimes: a PENDING claim is short-lived so a dead owner's claim is taken over soon;
// a COMPLETED result is kept long enough for any sane retry.
const (
	DefaultPendingTTL   = 30 * time.Second
	DefaultCompletedTTL = 7 * 24 * time.Hour
)

// KeyRecord is the state of one idempotency key.
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

// CheckSaveKey decides what a save does with an idempotency key already stored for it (scope
// api): k is the stored key, live whether its lifetime has not ended (database clock), hash
// the save's RequestHash. replay is true when the same request already completed: the save
// answers with k's result and writes nothing. A key used for another request is EINVALID, a
// PENDING one EBUSY; an ended or FAILED key is free, and the save takes it.
func CheckSaveKey(k KeyRecord, live bool, hash string) (replay bool, err error) {
	if !live {
		return false, nil
	}
	if k.RequestHash != hash {
		return false, Errorf(EINVALID, "idempotency key %s was already used for a different request", k.Key)
	}
	switch k.Status {
	case KeyCompleted:
		return true, nil
	case KeyPending:
		return false, Errorf(EBUSY, "idempotency key %s is in progress elsewhere; try again later", k.Key)
	}
	return false, nil
}
