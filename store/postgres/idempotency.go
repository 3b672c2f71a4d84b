package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// Idempotency keys live in the idempotency table, keyed by (scope, key). A claim's owner is
// the actor plus this DB value's random id ("alice@3f9c..."), so a paused process cannot
// complete a claim another process took over. Lifetimes are judged by the database clock,
// like leases (as in the SQLite store).

const keyColumns = "scope, key, status, request_hash, result, owner, created_at, expires_at"

func scanKey(row scanner, extra ...any) (store.KeyRecord, error) {
	var k store.KeyRecord
	var status string
	err := row.Scan(append([]any{&k.Scope, &k.Key, &status, &k.RequestHash, &k.Result, &k.Owner, &k.CreatedAt, &k.ExpiresAt}, extra...)...)
	k.Status = store.KeyStatus(status)
	k.CreatedAt, k.ExpiresAt = k.CreatedAt.UTC(), k.ExpiresAt.UTC()
	return k, err
}

// ClaimKey claims (scope, key) for a request with the given hash. See store.Idempotency for
// the states and error codes.
func (db *DB) ClaimKey(ctx context.Context, scope, key, requestHash string, pendingTTL time.Duration) (*store.Claim, error) {
	owner, err := store.KeyCaller(ctx, scope, key, db.owner)
	if err != nil {
		return nil, err
	}
	pendingTTL = store.PendingTTL(pendingTTL)
	var out *store.Claim
	// A rerun after a lost COMMIT finds its own PENDING claim and claims it again: repeatable.
	err = db.inTx(ctx, fmt.Sprintf("claim idempotency key %s/%s", scope, key), true, func(tx pgx.Tx) error {
		k, err := scanKey(tx.QueryRow(ctx, `INSERT INTO idempotency (scope, key, status, request_hash, owner, created_at, expires_at)
			VALUES ($1, $2, 'PENDING', $3, $4, clock_timestamp(), clock_timestamp() + $5 * interval '1 microsecond')
			ON CONFLICT (scope, key) DO NOTHING RETURNING `+keyColumns,
			scope, key, requestHash, owner, pendingTTL.Microseconds()))
		if err == nil {
			out = &store.Claim{Claimed: true, Record: k}
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var now time.Time
		k, err = scanKey(tx.QueryRow(ctx, "SELECT "+keyColumns+`, clock_timestamp()
			FROM idempotency WHERE scope = $1 AND key = $2 FOR UPDATE`, scope, key), &now)
		if errors.Is(err, pgx.ErrNoRows) {
			return errRetry // purged in between
		}
		if err != nil {
			return err
		}
		decision, err := store.DecideClaim(&k, requestHash, owner, now)
		if err != nil {
			return err
		}
		if decision == store.ClaimReplay {
			out = &store.Claim{Record: k}
			return nil
		}
		// FAILED, our own PENDING, or a stale PENDING whose owner died: claim it.
		k, err = scanKey(tx.QueryRow(ctx, `UPDATE idempotency SET status = 'PENDING', request_hash = $3, result = NULL,
			owner = $4, created_at = clock_timestamp(), expires_at = clock_timestamp() + $5 * interval '1 microsecond'
			WHERE scope = $1 AND key = $2 RETURNING `+keyColumns,
			scope, key, requestHash, owner, pendingTTL.Microseconds()))
		if err != nil {
			return err
		}
		out = &store.Claim{Claimed: true, Record: k}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CompleteKey marks a claimed key COMPLETED with its result, kept for keep. ENOTFOUND when
// the caller does not hold the claim.
func (db *DB) CompleteKey(ctx context.Context, scope, key string, result []byte, keep time.Duration) error {
	result, keep = store.CompletedKey(result, keep)
	return db.finishKey(ctx, scope, key, store.KeyCompleted, result, keep)
}

// FailKey marks a claimed key FAILED so a later claim may try again. ENOTFOUND when the
// caller does not hold the claim.
func (db *DB) FailKey(ctx context.Context, scope, key string) error {
	return db.finishKey(ctx, scope, key, store.KeyFailed, nil, store.DefaultCompletedTTL)
}

// finishKey moves a key claimed by this caller from PENDING to status.
func (db *DB) finishKey(ctx context.Context, scope, key string, status store.KeyStatus, result []byte, keep time.Duration) error {
	owner, err := store.KeyCaller(ctx, scope, key, db.owner)
	if err != nil {
		return err
	}
	return db.inTx(ctx, fmt.Sprintf("finish idempotency key %s/%s", scope, key), true, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE idempotency SET status = $3, result = $4,
			expires_at = clock_timestamp() + $5 * interval '1 microsecond'
			WHERE scope = $1 AND key = $2 AND status = 'PENDING' AND owner = $6`,
			scope, key, string(status), result, keep.Microseconds(), owner)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			// A rerun after a lost COMMIT finds its own first attempt done.
			var st string
			err := tx.QueryRow(ctx, `SELECT status FROM idempotency WHERE scope = $1 AND key = $2 AND owner = $3`,
				scope, key, owner).Scan(&st)
			if err == nil && st == string(status) {
				return nil
			}
			return store.KeyNotClaimedError(scope, key)
		}
		return nil
	})
}

// FindKey returns the state of a key. ENOTFOUND if there is none.
func (db *DB) FindKey(ctx context.Context, scope, key string) (*store.KeyRecord, error) {
	var k store.KeyRecord
	err := db.read(ctx, fmt.Sprintf("find key %s/%s", scope, key), func(q querier) (err error) {
		k, err = scanKey(q.QueryRow(ctx, "SELECT "+keyColumns+" FROM idempotency WHERE scope = $1 AND key = $2", scope, key))
		if errors.Is(err, pgx.ErrNoRows) {
			return store.Errorf(store.ENOTFOUND, "idempotency key %s/%s not found", scope, key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// PurgeKeys deletes the PENDING and FAILED keys whose lifetime ended (by the database clock),
// as store.Purgeable says, and returns how many. COMPLETED keys are kept for good.
func (db *DB) PurgeKeys(ctx context.Context) (int, error) {
	var n int64
	err := db.inTx(ctx, "purge keys", true, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM idempotency WHERE status <> 'COMPLETED' AND expires_at <= clock_timestamp()")
		n = tag.RowsAffected()
		return err
	})
	return int(n), err
}
