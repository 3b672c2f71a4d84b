package sqlite

import (
	"context"
	"fmt"

	"github.com/tandem-editor/tandem/store"
)

// nowSQL is the database clock in the stored time format.
const nowSQL = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`

// Announce records or refreshes the actor's editor session on a record until the database
// clock's now + r.TTL, and removes presence rows long expired. One short write transaction;
// it takes no row of any record.
func (db *DB) Announce(ctx context.Context, r store.PresenceRequest) error {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return err
	}
	if err := db.Registry().CheckPresence(r); err != nil {
		return err
	}
	ttl := fmt.Sprintf("+%.3f seconds", r.TTL.Seconds())
	purge := fmt.Sprintf("-%.3f seconds", store.PresencePurgeAfter.Seconds())
	what := fmt.Sprintf("announce %s %d", r.Kind, r.RecordID)
	return mapErr(what, db.inTx(ctx, what, func(tx *tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM presence WHERE expires_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)`, purge); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO presence (session, kind, record_id, holder, since, expires_at)
			VALUES (?, ?, ?, ?, `+nowSQL+`, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?))
			ON CONFLICT (session) DO UPDATE SET
				since = CASE WHEN presence.kind = excluded.kind AND presence.record_id = excluded.record_id
					THEN presence.since ELSE excluded.since END,
				kind = excluded.kind, record_id = excluded.record_id, holder = excluded.holder,
				expires_at = excluded.expires_at
			WHERE presence.holder = excluded.holder`,
			r.Session, string(r.Kind), r.RecordID, actor.Name, ttl)
		return err
	}))
}

// Leave removes a session's presence: the actor's own, or any without an actor.
func (db *DB) Leave(ctx context.Context, session string) error {
	holder := store.ActorName(ctx)
	return mapErr("leave", db.inTx(ctx, "leave", func(tx *tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM presence WHERE session = ? AND (? = '' OR holder = ?)`, session, holder, holder)
		return err
	}))
}

// FindPresence returns the live presences f selects, by record, then oldest first.
func (db *DB) FindPresence(ctx context.Context, f store.PresenceFilter) ([]store.Presence, error) {
	if err := db.Registry().CheckPresenceFilter(f); err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT kind, record_id, session, holder, since, expires_at FROM presence
		WHERE kind = ? AND (? = 0 OR record_id = ?) AND expires_at > `+nowSQL+`
		ORDER BY record_id, since, session`, string(f.Kind), f.RecordID, f.RecordID)
	if err != nil {
		return nil, mapErr("find presence", err)
	}
	defer rows.Close()
	out := []store.Presence{}
	for rows.Next() {
		var (
			p            store.Presence
			kind         string
			since, until string
		)
		if err := rows.Scan(&kind, &p.RecordID, &p.Session, &p.User, &since, &until); err != nil {
			return nil, mapErr("find presence", err)
		}
		p.Kind = store.Kind(kind)
		if p.Since, err = parseTime(since); err != nil {
			return nil, err
		}
		if p.ExpiresAt, err = parseTime(until); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, mapErr("find presence", rows.Err())
}
