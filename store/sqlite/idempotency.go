package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Key lifetimes are judged by the database clock, like leases.

type keyRow struct {
	store.KeyRecord
	expired bool
}

func (db *DB) findKey(ctx context.Context, q querier, scope, key string, now time.Time) (*keyRow, error) {
	var (
		k                keyRow
		status, cat, eat string
	)
	err := q.QueryRowContext(ctx, `SELECT status, request_hash, result, owner, created_at, expires_at
		FROM idempotency WHERE scope = ? AND key = ?`, scope, key).
		Scan(&status, &k.RequestHash, &k.Result, &k.Owner, &cat, &eat)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	k.Scope, k.Key, k.Status = scope, key, store.KeyStatus(status)
	if k.CreatedAt, err = parseTime(cat); err != nil {
		return nil, err
	}
	if k.ExpiresAt, err = parseTime(eat); err != nil {
		return nil, err
	}
	k.expired = !now.Before(k.ExpiresAt)
	return &k, nil
}

// checkUpdateKey looks up an update's idempotency key (scope api) inside the update's
// transaction: a non-nil result means the same request already completed, and is its
// stored result to replay.
func (db *DB) checkUpdateKey(ctx context.Context, tx *tx, key, hash string) (*store.KeyResult, error) {
	now, err := tx.clock(ctx)
	if err != nil {
		return nil, err
	}
	k, err := db.findKey(ctx, tx, store.ScopeAPI, key, now)
	if err != nil || k == nil {
		return nil, err
	}
	replay, err := store.CheckSaveKey(k.KeyRecord, !k.expired, hash)
	if err != nil || !replay {
		return nil, err
	}
	res, err := store.ReplayOf(k.KeyRecord)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// completeKey writes an update's key as COMPLETED (completeUpdateKey, relativeSave):
// scope, key, request hash, result, owner, created and expiry times.
const completeKey = `INSERT INTO idempotency (scope, key, status, request_hash, result, owner, created_at, expires_at)
	VALUES (?, ?, 'COMPLETED', ?, ?, ?, ?, ?)
	ON CONFLICT (scope, key) DO UPDATE SET status = 'COMPLETED', request_hash = excluded.request_hash,
		result = excluded.result, owner = excluded.owner, created_at = excluded.created_at,
		expires_at = excluded.expires_at`

// completeUpdateKey records an update's key as COMPLETED with its result, in the update's
// transaction.
func (db *DB) completeUpdateKey(ctx context.Context, tx *tx, key, hash string, res store.KeyResult, actor store.Actor) error {
	now, err := tx.clock(ctx)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, completeKey,
		store.ScopeAPI, key, hash, res.Encode(), actor.Name, formatTime(now), formatTime(now.Add(store.DefaultCompletedTTL)))
	if err != nil {
		return fmt.Errorf("record idempotency key: %w", err)
	}
	return nil
}

// ClaimKey claims (scope, key) for a request with the given hash.
func (db *DB) ClaimKey(ctx context.Context, scope, key, requestHash string, pendingTTL time.Duration) (*store.Claim, error) {
	owner, err := store.KeyCaller(ctx, scope, key, db.owner)
	if err != nil {
		return nil, err
	}
	pendingTTL = store.PendingTTL(pendingTTL)
	var claim *store.Claim
	what := fmt.Sprintf("claim idempotency key %s/%s", scope, key)
	err = db.inTx(ctx, what, func(tx *tx) error {
		now, err := tx.clock(ctx)
		if err != nil {
			return err
		}
		k, err := db.findKey(ctx, tx, scope, key, now)
		if err != nil {
			return err
		}
		var stored *store.KeyRecord
		if k != nil {
			stored = &k.KeyRecord
		}
		decision, err := store.DecideClaim(stored, requestHash, owner, now)
		if err != nil {
			return err
		}
		if decision == store.ClaimReplay {
			claim = &store.Claim{Record: k.KeyRecord}
			return nil
		}
		rec := store.KeyRecord{Scope: scope, Key: key, Status: store.KeyPending, RequestHash: requestHash,
			Owner: owner, CreatedAt: now, ExpiresAt: now.Add(pendingTTL)}
		_, err = tx.ExecContext(ctx, `INSERT INTO idempotency (scope, key, status, request_hash, result, owner, created_at, expires_at)
			VALUES (?, ?, 'PENDING', ?, NULL, ?, ?, ?)
			ON CONFLICT (scope, key) DO UPDATE SET status = 'PENDING', request_hash = excluded.request_hash,
				result = NULL, owner = excluded.owner, created_at = excluded.created_at, expires_at = excluded.expires_at`,
			scope, key, requestHash, owner, formatTime(now), formatTime(rec.ExpiresAt))
		if err != nil {
			return err
		}
		claim = &store.Claim{Claimed: true, Record: rec}
		return nil
	})
	if err != nil {
		return nil, mapErr(what, err)
	}
	return claim, nil
}

// CompleteKey marks a key the caller claimed COMPLETED with its result, kept for keep.
func (db *DB) CompleteKey(ctx context.Context, scope, key string, result []byte, keep time.Duration) error {
	result, keep = store.CompletedKey(result, keep)
	return db.finishKey(ctx, scope, key, store.KeyCompleted, result, keep)
}

// FailKey marks a key the caller claimed FAILED, so a later claim may try again.
func (db *DB) FailKey(ctx context.Context, scope, key string) error {
	return db.finishKey(ctx, scope, key, store.KeyFailed, nil, store.DefaultCompletedTTL)
}

func (db *DB) finishKey(ctx context.Context, scope, key string, status store.KeyStatus, result []byte, keep time.Duration) error {
	owner, err := store.KeyCaller(ctx, scope, key, db.owner)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("finish idempotency key %s/%s", scope, key)
	return db.inTx(ctx, what, func(tx *tx) error {
		now, err := tx.clock(ctx)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE idempotency SET status = ?, result = ?, expires_at = ?
			WHERE scope = ? AND key = ? AND status = 'PENDING' AND owner = ?`,
			string(status), result, formatTime(now.Add(keep)), scope, key, owner)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.KeyNotClaimedError(scope, key)
		}
		return nil
	})
}

// FindKey returns the state of a key. ENOTFOUND if there is none.
func (db *DB) FindKey(ctx context.Context, scope, key string) (*store.KeyRecord, error) {
	what := fmt.Sprintf("find idempotency key %s/%s", scope, key)
	k, err := db.findKey(ctx, db.read, scope, key, time.Time{})
	if err != nil {
		return nil, mapErr(what, err)
	}
	if k == nil {
		return nil, store.Errorf(store.ENOTFOUND, "idempotency key %s/%s not found", scope, key)
	}
	return &k.KeyRecord, nil
}

// PurgeKeys deletes the PENDING and FAILED keys whose lifetime ended (by the database clock),
// as store.Purgeable says, and returns how many. COMPLETED keys are kept for good.
// It reads the whole key table: expires_at has no index, so that a save, which writes a key
// row, maintains one b-tree for it and not two (migration 0010).
func (db *DB) PurgeKeys(ctx context.Context) (int, error) {
	var n int64
	err := db.inTx(ctx, "purge idempotency keys", func(tx *tx) error {
		now, err := tx.clock(ctx)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM idempotency WHERE status <> 'COMPLETED' AND expires_at <= ?`, formatTime(now))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
