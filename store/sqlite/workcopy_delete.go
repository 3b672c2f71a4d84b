package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tandem-editor/tandem/store"
)

// Deletes and restores on a working copy. A delete is done locally as on any store (a
// tombstone in the copy's history) and, in the same transaction, appended to the outbox as
// a CopyDelete entry: the base version the record was last synced at, the values the delete
// found, and a fresh idempotency key. It is written explicitly here, not by a trigger, since
// the copy itself removes rows on the source's behalf (a delete pulled from the source, a
// create replaced by the source's record) and those must never reach the outbox.
//
// The order with the record's earlier entries is kept: saves and moves made before the
// delete are pushed first, then the delete. A save applied on exactly its base moves the
// delete onto the version it made (AckEntry's rebase), so the delete removes what the copy
// had; a save merged with someone else's change leaves the delete on the old base, and the
// delete meets the source's change as a conflict (store.DeletedHere) instead of removing it.
//
// A record the source never had (a local create not pushed yet) leaves no delete behind:
// its entries and its conflict go with it. A record with another open conflict is refused:
// the conflict says what the source has, which the person should see before deleting.
//
// A restore brings back a record whose delete has not been pushed yet: the pending delete
// is dropped, and the earlier entries stay queued. A record deleted on the source, or whose
// delete has reached it, is restored on the source (the copy takes it back at the next
// sync): restoring it here would make a record the source does not have.

// copyDeleteOp is the outbox op a local delete writes, as the SQL stores it.
var copyDeleteOp = string(store.CopyDelete)

// queueCopyDelete appends the outbox entry of the local delete of rec, inside the delete's
// transaction, or drops the entries of a record the source never had.
func (db *DB) queueCopyDelete(ctx context.Context, tx *tx, rec *store.Record, actor store.Actor) error {
	kind := string(rec.Kind)
	var base int64
	err := tx.QueryRowContext(ctx, `SELECT version FROM wc_base WHERE kind = ? AND record_id = ?`, kind, rec.ID).Scan(&base)
	if errors.Is(err, sql.ErrNoRows) {
		// Created here and not on the source yet: nothing to delete there.
		for _, q := range []string{`DELETE FROM wc_outbox WHERE kind = ? AND record_id = ?`,
			`DELETE FROM wc_conflicts WHERE kind = ? AND record_id = ?`,
			`DELETE FROM wc_stale WHERE kind = ? AND record_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, kind, rec.ID); err != nil {
				return fmt.Errorf("drop the local %s %d's changes: %w", rec.Kind, rec.ID, err)
			}
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the base of %s %d: %w", rec.Kind, rec.ID, err)
	}
	var op, reason string
	err = tx.QueryRowContext(ctx, `SELECT op, reason FROM wc_conflicts WHERE kind = ? AND record_id = ?`, kind, rec.ID).Scan(&op, &reason)
	switch {
	case err == nil:
		return store.CopyDeleteInConflict(rec.Kind, rec.ID, reason)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("read the conflict of %s %d: %w", rec.Kind, rec.ID, err)
	}
	before, err := db.encodeValues(rec.Kind, rec.Fields)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO wc_outbox (op, kind, record_id, base_version, before, after, key, actor, at)
		VALUES (?, ?, ?, ?, ?, '{}', ?, ?, ?)`, copyDeleteOp, kind, rec.ID, base, before,
		store.OriginKey+randomHex(16), actor.Name, formatTime(tx.now))
	if err != nil {
		return fmt.Errorf("queue the delete of %s %d: %w", rec.Kind, rec.ID, err)
	}
	return nil
}

// copyRestore decides a restore of kind id on a working copy, inside the restore's
// transaction, before anything is written: pending is the seq of the record's delete not
// yet pushed (0 for a record created here, whose restore queues its create again). A
// record deleted on the source, or whose delete reached it, is refused.
func (db *DB) copyRestore(ctx context.Context, tx *tx, kind store.Kind, id int64, exists bool) (pending int64, err error) {
	if exists || id >= localIDBase {
		return 0, nil // PlanRestore says it is not deleted; a local create comes back as one
	}
	err = tx.QueryRowContext(ctx, `SELECT seq FROM wc_outbox WHERE kind = ? AND record_id = ? AND op = ?`,
		string(kind), id, copyDeleteOp).Scan(&pending)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, store.NotDeletedInCopy(kind, id)
	}
	if err != nil {
		return 0, fmt.Errorf("read the pending delete of %s %d: %w", kind, id, err)
	}
	return pending, nil
}

// setApplying sets or clears the flag that keeps the outbox triggers quiet, inside tx.
func setApplying(ctx context.Context, tx *tx, on bool) error {
	if _, err := tx.ExecContext(ctx, `UPDATE wc_meta SET applying = ?`, on); err != nil {
		return fmt.Errorf("working copy flag: %w", err)
	}
	return nil
}

// ackDelete removes delete entry seq of kind id, which is now done on the source: the
// record is gone on both sides, so what the copy kept about it (its base, a stale mark, a
// conflict an earlier entry met) goes too.
func ackDelete(ctx context.Context, tx *wcTx, seq int64, kind store.Kind, id int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM wc_outbox WHERE seq = ?`, seq); err != nil {
		return err
	}
	var left int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM wc_outbox WHERE kind = ? AND record_id = ?`, string(kind), id).Scan(&left); err != nil {
		return err
	}
	if left > 0 {
		return nil // restored and deleted again since: the newer entries keep the base
	}
	for _, q := range []string{`DELETE FROM wc_base WHERE kind = ? AND record_id = ?`,
		`DELETE FROM wc_stale WHERE kind = ? AND record_id = ?`,
		`DELETE FROM wc_conflicts WHERE kind = ? AND record_id = ?`} {
		if _, err := tx.ExecContext(ctx, q, string(kind), id); err != nil {
			return err
		}
	}
	return nil
}

// ResolveDelete closes the conflict of a local delete (store.WorkingCopy).
func (db *DB) ResolveDelete(ctx context.Context, kind store.Kind, id int64, del bool) error {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return err
	}
	err = db.inTx(ctx, "resolve delete conflict", func(t *tx) error {
		tx, c, err := db.takeConflict(ctx, t, kind, id, func(c store.CopyConflict) error {
			if c.Op != store.CopyDelete {
				return store.NotDeleteConflict(kind, id, c.Reason)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !del {
			// The source's record wins. The copy holds only its editor and shared fields,
			// so it comes back whole from the source at the next sync (Stale).
			if _, err := tx.ExecContext(ctx, `DELETE FROM wc_outbox WHERE kind = ? AND record_id = ?`, string(kind), id); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO wc_stale (kind, record_id) VALUES (?, ?)`, string(kind), id)
			return err
		}
		mine, err := db.encodeValues(kind, c.Theirs)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO wc_outbox (op, kind, record_id, base_version, before, after, key, actor, at)
			VALUES (?, ?, ?, ?, ?, '{}', ?, ?, ?)`, copyDeleteOp, string(kind), id, c.TheirsVersion, mine,
			store.OriginKey+randomHex(16), actor.Name, formatTime(tx.now))
		return err
	})
	return mapErr("resolve delete conflict", err)
}

// cancelCopyDelete drops the pending delete seq of kind id, which a restore just brought
// back, and clears the flag the restore set. The record is read from the source again at the
// next sync (Stale): while it has no other entries it takes the source's values, which it
// had before the delete unless a resolution moved its delete onto a newer version.
func (db *DB) cancelCopyDelete(ctx context.Context, tx *tx, kind store.Kind, id, seq int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM wc_outbox WHERE seq = ?`, seq); err != nil {
		return fmt.Errorf("cancel the delete of %s %d: %w", kind, id, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO wc_stale (kind, record_id) VALUES (?, ?)`, string(kind), id); err != nil {
		return fmt.Errorf("cancel the delete of %s %d: %w", kind, id, err)
	}
	return setApplying(ctx, tx, false)
}
