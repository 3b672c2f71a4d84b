package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// Announce records or refreshes the actor's editor session on a record until the database
// clock's now + r.TTL, and removes presence rows long expired. It locks only its own
// presence row (and expired ones it removes, SKIP LOCKED), never a record's.
func (db *DB) Announce(ctx context.Context, r store.PresenceRequest) error {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return err
	}
	if err := db.Registry().CheckPresence(r); err != nil {
		return err
	}
	what := fmt.Sprintf("announce %s %d", r.Kind, r.RecordID)
	return db.inTx(ctx, what, true, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM presence WHERE session IN (SELECT session FROM presence
			WHERE expires_at < clock_timestamp() - $1 * interval '1 microsecond' FOR UPDATE SKIP LOCKED)`,
			store.PresencePurgeAfter.Microseconds()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO presence (session, kind, record_id, holder, since, expires_at)
			VALUES ($1, $2, $3, $4, clock_timestamp(), clock_timestamp() + $5 * interval '1 microsecond')
			ON CONFLICT (session) DO UPDATE SET
				since = CASE WHEN presence.kind = excluded.kind AND presence.record_id = excluded.record_id
					THEN presence.since ELSE excluded.since END,
				kind = excluded.kind, record_id = excluded.record_id, holder = excluded.holder,
				expires_at = excluded.expires_at
			WHERE presence.holder = excluded.holder`,
			r.Session, string(r.Kind), r.RecordID, actor.Name, r.TTL.Microseconds())
		return err
	})
}

// Leave removes a session's presence: the actor's own, or any without an actor.
func (db *DB) Leave(ctx context.Context, session string) error {
	holder := store.ActorName(ctx)
	return db.inTx(ctx, "leave", true, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM presence WHERE session = $1 AND ($2 = '' OR holder = $2)`, session, holder)
		return err
	})
}

// FindPresence returns the live presences f selects, by record, then oldest first.
func (db *DB) FindPresence(ctx context.Context, f store.PresenceFilter) ([]store.Presence, error) {
	if err := db.Registry().CheckPresenceFilter(f); err != nil {
		return nil, err
	}
	out := []store.Presence{}
	err := db.read(ctx, "find presence", func(q querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, `SELECT kind, record_id, session, holder, since, expires_at FROM presence
			WHERE kind = $1 AND ($2 = 0 OR record_id = $2) AND expires_at > clock_timestamp()
			ORDER BY record_id, since, session`, string(f.Kind), f.RecordID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p store.Presence
			var kind string
			if err := rows.Scan(&kind, &p.RecordID, &p.Session, &p.User, &p.Since, &p.ExpiresAt); err != nil {
				return err
			}
			p.Kind = store.Kind(kind)
			p.Since, p.ExpiresAt = p.Since.UTC(), p.ExpiresAt.UTC()
			out = append(out, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
