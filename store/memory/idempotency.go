package memory

import (
	"context"
	"slices"
	"time"

	"github.com/tandem-editor/tandem/store"
)

type keyID struct{ scope, key string }

// ClaimKey claims (scope, key) for a request with the given hash, as store.DecideClaim says:
// EINVALID for another request's hash, EBUSY for a live PENDING claim of another owner.
func (db *DB) ClaimKey(ctx context.Context, scope, key, requestHash string, pendingTTL time.Duration) (*store.Claim, error) {
	owner, err := store.KeyCaller(ctx, scope, key, db.instance)
	if err != nil {
		return nil, err
	}
	pendingTTL = store.PendingTTL(pendingTTL)
	if err := db.begin(ctx, "ClaimKey"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	now := db.dbNow()
	id := keyID{scope, key}
	decision, err := store.DecideClaim(db.keys[id], requestHash, owner, now)
	if err != nil {
		return nil, err
	}
	if decision == store.ClaimReplay {
		return &store.Claim{Record: cloneKey(*db.keys[id])}, nil
	}
	k := &store.KeyRecord{Scope: scope, Key: key, Status: store.KeyPending, RequestHash: requestHash,
		Owner: owner, CreatedAt: now, ExpiresAt: now.Add(pendingTTL)}
	db.keys[id] = k
	return &store.Claim{Claimed: true, Record: cloneKey(*k)}, nil
}

// CompleteKey marks a claimed key COMPLETED with its result, kept for keep (0: the default).
// ENOTFOUND when the caller does not hold the claim.
func (db *DB) CompleteKey(ctx context.Context, scope, key string, result []byte, keep time.Duration) error {
	if err := db.begin(ctx, "CompleteKey"); err != nil {
		return err
	}
	defer db.mu.Unlock()
	k, err := db.heldKey(ctx, scope, key)
	if err != nil {
		return err
	}
	result, keep = store.CompletedKey(result, keep)
	k.Status, k.Result, k.ExpiresAt = store.KeyCompleted, slices.Clone(result), db.dbNow().Add(keep)
	return nil
}

// FailKey marks a claimed key FAILED so a later claim may try again. ENOTFOUND when the
// caller does not hold the claim.
func (db *DB) FailKey(ctx context.Context, scope, key string) error {
	if err := db.begin(ctx, "FailKey"); err != nil {
		return err
	}
	defer db.mu.Unlock()
	k, err := db.heldKey(ctx, scope, key)
	if err != nil {
		return err
	}
	k.Status, k.ExpiresAt = store.KeyFailed, db.dbNow().Add(store.DefaultCompletedTTL)
	return nil
}

// savedKey answers a save or delete with key and request hash: the stored result when the
// key completed (replay it), nil when the save goes ahead, an error as store.CheckSaveKey
// decides.
func (db *DB) savedKey(key, hash string, now time.Time) (*store.KeyResult, error) {
	k, ok := db.keys[keyID{store.ScopeAPI, key}]
	if !ok {
		return nil, nil
	}
	replay, err := store.CheckSaveKey(*k, now.Before(k.ExpiresAt), hash)
	if err != nil || !replay {
		return nil, err
	}
	kr, err := store.ReplayOf(*k)
	if err != nil {
		return nil, err
	}
	return &kr, nil
}

// heldKey returns the key the caller holds as PENDING, or ENOTFOUND.
func (db *DB) heldKey(ctx context.Context, scope, key string) (*store.KeyRecord, error) {
	owner, err := store.KeyCaller(ctx, scope, key, db.instance)
	if err != nil {
		return nil, err
	}
	k, ok := db.keys[keyID{scope, key}]
	if !ok || k.Status != store.KeyPending || k.Owner != owner {
		return nil, store.KeyNotClaimedError(scope, key)
	}
	return k, nil
}

// FindKey returns the state of a key. ENOTFOUND if there is none.
func (db *DB) FindKey(ctx context.Context, scope, key string) (*store.KeyRecord, error) {
	if err := db.begin(ctx, "FindKey"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	k, ok := db.keys[keyID{scope, key}]
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "idempotency key %s/%s not found", scope, key)
	}
	c := cloneKey(*k)
	return &c, nil
}

// PurgeKeys deletes the PENDING and FAILED keys whose lifetime ended (on the database clock),
// as store.Purgeable says, and returns how many. COMPLETED keys are kept for good.
func (db *DB) PurgeKeys(ctx context.Context) (int, error) {
	if err := db.begin(ctx, "PurgeKeys"); err != nil {
		return 0, err
	}
	defer db.mu.Unlock()
	now := db.dbNow()
	n := 0
	for id, k := range db.keys {
		if store.Purgeable(*k, now) {
			delete(db.keys, id)
			n++
		}
	}
	return n, nil
}

func cloneKey(k store.KeyRecord) store.KeyRecord {
	k.Result = slices.Clone(k.Result)
	return k
}
