package sqlite

import (
	"context"
	"fmt"
	"maps"

	"github.com/tandem-editor/tandem/store"
)

// Repush takes the copy onto its source as the source is now, after the source went back
// in time (store.WorkingCopy).
func (db *DB) Repush(ctx context.Context, recs []*store.Record, at store.FeedPoint) (queued, conflicts int, err error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return 0, 0, err
	}
	err = db.inTx(ctx, "repush", func(t *tx) error {
		queued, conflicts = 0, 0 // a retried transaction counts again
		tx, err := db.newWCTx(ctx, t)
		if err != nil {
			return err
		}
		if err := upgradeCopy(ctx, tx); err != nil {
			return err
		}
		var kinds string
		var subtree int64
		if err := tx.QueryRowContext(ctx, `SELECT kinds, subtree FROM wc_meta`).Scan(&kinds, &subtree); err != nil {
			return fmt.Errorf("read working copy: %w", err)
		}
		theirs := make(map[store.RecordKey]*store.Record, len(recs))
		for _, r := range recs {
			theirs[store.RecordKey{Kind: r.Kind, ID: r.ID}] = r
		}
		st, err := db.readLocalState(ctx, tx)
		if err != nil {
			return err
		}
		before, err := localVersions(ctx, tx, recs)
		if err != nil {
			return err
		}
		done := map[store.RecordKey]bool{}
		for _, kind := range treeFirst(db.Registry()) {
			ids, err := localIDs(ctx, tx, kind)
			if err != nil {
				return err
			}
			for _, id := range ids {
				k := store.RecordKey{Kind: kind, ID: id}
				if st.Created[k] {
					continue // made here: its create is pushed as it is
				}
				done[k] = true
				q, c, err := db.repushRecord(ctx, tx, k, st.Base[k], theirs[k], actor.Name)
				if err != nil {
					return fmt.Errorf("repush %s %d: %w", kind, id, err)
				}
				queued, conflicts = queued+q, conflicts+c
			}
		}
		for k, e := range st.Deletes {
			done[k] = true
			c, err := db.repushDelete(ctx, tx, e, theirs[k])
			if err != nil {
				return fmt.Errorf("repush the delete of %s %d: %w", k.Kind, k.ID, err)
			}
			conflicts += c
		}
		// The source's records the copy did not hold: written as a pull writes them.
		var rest []*store.Record
		for _, r := range recs {
			if !done[store.RecordKey{Kind: r.Kind, ID: r.ID}] {
				rest = append(rest, r)
			}
		}
		if err := applying(ctx, tx, true); err != nil {
			return err
		}
		if err := db.applyRecords(ctx, tx, rest, kinds, subtree); err != nil {
			return err
		}
		if err := applying(ctx, tx, false); err != nil {
			return err
		}
		if err := logPulled(ctx, tx, rest, before); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE wc_meta SET position = ?, mark = ?`, at.ID, at.Mark)
		return err
	})
	return queued, conflicts, mapErr("repush", err)
}

// readLocalState reads the outbox and the conflicts inside tx (store.LocalStateOf).
func (db *DB) readLocalState(ctx context.Context, tx *wcTx) (*store.LocalState, error) {
	rows, err := tx.Tx.QueryContext(ctx, `SELECT `+db.conflictColumns()+` FROM wc_conflicts`)
	if err != nil {
		return nil, fmt.Errorf("read conflicts: %w", err)
	}
	var cs []store.CopyConflict
	for rows.Next() {
		c, err := db.scanConflict(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("read conflicts: %w", err)
		}
		cs = append(cs, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read conflicts: %w", err)
	}
	rows, err = tx.Tx.QueryContext(ctx, `SELECT `+entryColumns+` FROM wc_outbox ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	es, err := db.scanEntries(rows)
	if err != nil {
		return nil, err
	}
	return store.LocalStateOf(cs, es), nil
}

// localIDs returns the ids of the copy's records of kind.
func localIDs(ctx context.Context, tx *wcTx, kind store.Kind) ([]int64, error) {
	t, err := tx.table(kind)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Tx.QueryContext(ctx, `SELECT id FROM `+t+` ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// forget drops the local state of record k: its outbox entries, conflict, stale mark and
// base.
func forget(ctx context.Context, tx *wcTx, k store.RecordKey) error {
	for _, q := range []string{
		`DELETE FROM wc_outbox WHERE kind = ? AND record_id = ?`,
		`DELETE FROM wc_conflicts WHERE kind = ? AND record_id = ?`,
		`DELETE FROM wc_stale WHERE kind = ? AND record_id = ?`,
		`DELETE FROM wc_base WHERE kind = ? AND record_id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, string(k.Kind), k.ID); err != nil {
			return err
		}
	}
	return nil
}

// repushRecord sets the copy's record k against the source's record of its id (theirs, nil
// when the source has none), base being what its local edits were made on (nil: none). It
// returns whether it queued the record's differences (q) or made it a conflict (c).
func (db *DB) repushRecord(ctx context.Context, tx *wcTx, k store.RecordKey, base store.Values, theirs *store.Record, actor string) (q, c int, err error) {
	local, err := db.findRecord(ctx, tx.Tx, k.Kind, k.ID)
	if err != nil {
		return 0, 0, err
	}
	mine := store.Values{}
	for _, f := range db.copyColumns(k.Kind) {
		mine[f.Name] = local.Fields[f.Name]
	}
	b := mine.Clone()
	maps.Copy(b, base)
	if err := forget(ctx, tx, k); err != nil {
		return 0, 0, err
	}
	if theirs == nil {
		return 0, 1, db.putConflict(ctx, tx, store.CopyConflict{Op: store.CopyCreate, Kind: k.Kind, ID: k.ID,
			Reason: store.RepushLostReason, Base: b, Mine: mine, Actor: actor})
	}
	if k.Kind == subtreeKind(db.Registry()) && k.ID == tx.subtree && theirs.Fields[store.ParentField] != nil {
		// The subtree's root: the copy holds it without its parent (putSource), which is
		// no difference from the source.
		r := *theirs
		r.Fields = theirs.Fields.Clone()
		delete(r.Fields, store.ParentField)
		theirs = &r
	}
	changed, conflict := db.Registry().RepushFields(k.Kind, b, mine, theirs.Fields)
	if err := applying(ctx, tx, true); err != nil {
		return 0, 0, err
	}
	if err := db.putSource(ctx, tx, theirs); err != nil {
		return 0, 0, err
	}
	if len(changed) == 0 && len(conflict) == 0 {
		return 0, 0, applying(ctx, tx, false)
	}
	write := store.Values{}
	for _, name := range append(changed, conflict...) {
		write[name] = mine[name]
	}
	if len(conflict) > 0 {
		// The local values stay, outside the outbox, until a person answers.
		if err := db.writeLocal(ctx, tx, k.Kind, k.ID, write, actor); err != nil {
			return 0, 0, err
		}
		if err := applying(ctx, tx, false); err != nil {
			return 0, 0, err
		}
		return 0, 1, db.putConflict(ctx, tx, store.CopyConflict{Op: store.CopySave, Kind: k.Kind, ID: k.ID, Reason: store.RepushReason,
			Fields: conflict, Base: b, Mine: mine, Theirs: theirs.Fields, BaseVersion: theirs.Version, TheirsVersion: theirs.Version, Actor: actor})
	}
	// Local edits on values the source still has: queued by the outbox triggers, on the
	// source's version, as a save here would be.
	if err := applying(ctx, tx, false); err != nil {
		return 0, 0, err
	}
	return 1, 0, db.writeLocal(ctx, tx, k.Kind, k.ID, write, actor)
}

// repushDelete sets the local delete e against the source's record of its id (theirs, nil
// when the source has none): gone on both sides, it is dropped; on a source that has the
// record as the delete found it, it is queued again on the source's version; on one that has
// it otherwise, it is a conflict (store.DeletedHere). It returns 1 for a conflict.
func (db *DB) repushDelete(ctx context.Context, tx *wcTx, e *store.OutboxEntry, theirs *store.Record) (int, error) {
	k := store.RecordKey{Kind: e.Kind, ID: e.ID}
	if err := forget(ctx, tx, k); err != nil {
		return 0, err
	}
	if theirs == nil {
		return 0, nil
	}
	if !db.Registry().DeleteStillHolds(e.Kind, e.Before, theirs.Fields) {
		return 1, db.putConflict(ctx, tx, store.CopyConflict{Op: store.CopyDelete, Kind: e.Kind, ID: e.ID, Reason: store.DeletedHere,
			Base: e.Before, Mine: e.Before, Theirs: theirs.Fields, BaseVersion: theirs.Version, TheirsVersion: theirs.Version, Actor: e.Actor, At: e.At})
	}
	before, err := db.encodeValues(e.Kind, e.Before)
	if err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO wc_outbox (op, kind, record_id, base_version, before, after, key, actor, at)
		VALUES (?, ?, ?, ?, ?, '{}', ?, ?, ?)`, copyDeleteOp, string(e.Kind), e.ID, theirs.Version, before,
		store.OriginKey+randomHex(16), e.Actor, formatTime(tx.now))
	return 0, err
}
