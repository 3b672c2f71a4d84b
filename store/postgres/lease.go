package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// Leases are rows of the leases table, one per scope (kind, record, group): the current grant.
// A takeover rewrites the row with a higher fence; every grant is also kept in lease_grants so
// that an old token is recognised ("taken over by bob") instead of being unknown. Only the
// SHA-256 of a token is stored. Every expiry decision uses clock_timestamp(), the database's
// clock, never the terminal's.

const leaseColumns = "kind, record_id, grp, holder, token_hash, fence, acquired_at, expires_at, released_at"

// leaseRow is a leases row.
type leaseRow struct {
	store.Lease
	hash string
}

func scanLease(row scanner, extra ...any) (leaseRow, error) {
	var l leaseRow
	var kind string
	var released *time.Time
	dest := append([]any{&kind, &l.RecordID, &l.Group, &l.Holder, &l.hash, &l.Fence, &l.AcquiredAt, &l.ExpiresAt, &released}, extra...)
	if err := row.Scan(dest...); err != nil {
		return l, err
	}
	l.Kind = store.Kind(kind)
	l.AcquiredAt, l.ExpiresAt = l.AcquiredAt.UTC(), l.ExpiresAt.UTC()
	if released != nil {
		l.Released = true
		if released.Before(l.ExpiresAt) {
			l.ExpiresAt = released.UTC() // a released lease ended when it was released
		}
	}
	return l, nil
}

// checkLeases is the lease check of a write, inside the write's transaction: it reads what
// store.CheckWriteLeases decides on and asks it. The lease rows of the written groups (and
// the presented token's row) are locked FOR SHARE, so a takeover waits until this write has
// committed: a holder whose lease ended can never write after the new holder got it. token
// is the presented lease token ("" for none).
func (db *DB) checkLeases(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64, groups []string, token string) error {
	hash := ""
	if token != "" {
		hash = store.LeaseTokenHash(token)
	}
	var now time.Time
	rows, err := tx.Query(ctx, "SELECT "+leaseColumns+`, clock_timestamp() FROM leases
		WHERE (kind = $1 AND record_id = $2 AND grp = ANY($3)) OR token_hash = $4
		ORDER BY kind, record_id, grp FOR SHARE`, string(kind), id, groups, hash)
	if err != nil {
		return err
	}
	var ls []leaseRow
	for rows.Next() {
		l, err := scanLease(rows, &now)
		if err != nil {
			rows.Close()
			return err
		}
		ls = append(ls, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	w := store.WriteLeases{Now: now.UTC()}
	if token != "" {
		if i := slices.IndexFunc(ls, func(l leaseRow) bool { return l.hash == hash }); i >= 0 {
			mine := ls[i]
			w.Grant = &store.LeaseGrant{Kind: mine.Kind, RecordID: mine.RecordID, Group: mine.Group, Fence: mine.Fence}
			w.Current = &mine.Lease
		} else {
			// Not the current lease of any scope: the grant says which scope it was.
			g, cur, at, err := db.findGrant(ctx, tx, hash)
			if err != nil {
				return err
			}
			if w.Grant = g; g != nil && g.Kind == kind && g.RecordID == id {
				w.Current = cur
			}
			if !at.IsZero() {
				w.Now = at.UTC()
			}
		}
	}
	for _, l := range ls {
		if l.Kind == kind && l.RecordID == id && slices.Contains(groups, l.Group) && l.hash != hash {
			w.Others = append(w.Others, l.public())
		}
	}
	return store.CheckWriteLeases(kind, id, token, w)
}

// public returns the lease without anything secret.
func (l leaseRow) public() store.Lease {
	p := l.Lease
	p.Token = ""
	return p
}

// findGrant returns the grant of the token whose hash is hash (nil when no lease was ever
// granted with it), the current lease of the grant's scope (nil when missing) and the
// database's time it was read at.
func (db *DB) findGrant(ctx context.Context, q querier, hash string) (*store.LeaseGrant, *store.Lease, time.Time, error) {
	var (
		gkind string
		g     store.LeaseGrant
		now   time.Time
	)
	err := q.QueryRow(ctx, `SELECT kind, record_id, grp, fence FROM lease_grants WHERE token_hash = $1`, hash).
		Scan(&gkind, &g.RecordID, &g.Group, &g.Fence)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, now, nil
	}
	if err != nil {
		return nil, nil, now, err
	}
	g.Kind = store.Kind(gkind)
	cur, err := scanLease(q.QueryRow(ctx, "SELECT "+leaseColumns+`, clock_timestamp() FROM leases
		WHERE kind = $1 AND record_id = $2 AND grp = $3`, gkind, g.RecordID, g.Group), &now)
	if errors.Is(err, pgx.ErrNoRows) {
		return &g, nil, now, nil
	}
	if err != nil {
		return nil, nil, now, err
	}
	return &g, &cur.Lease, now, nil
}

// lostLease explains a token that is not the current grant of its scope: ELEASE (Lost,
// "taken over by bob") for a token that was granted once, EINVALID when it belongs to another
// record than kind/id (kind "" skips that check), ENOTFOUND "no lease has this token" for a
// token never granted.
func (db *DB) lostLease(ctx context.Context, q querier, hash string, kind store.Kind, id int64) error {
	g, cur, now, err := db.findGrant(ctx, q, hash)
	if err != nil {
		return err
	}
	if g == nil {
		return store.Errorf(store.ENOTFOUND, "no lease has this token")
	}
	if kind != "" && (g.Kind != kind || g.RecordID != id) {
		return store.Errorf(store.EINVALID, "the lease token belongs to %s %d, not %s %d", g.Kind, g.RecordID, kind, id)
	}
	if cur == nil {
		return store.Errorf(store.EINTERNAL, "lease of %s %d (%s) is missing", g.Kind, g.RecordID, g.Group)
	}
	if err := store.LeaseLost(*cur, g.Fence, now.UTC()); err != nil {
		return err
	}
	return store.Errorf(store.EINTERNAL, "lease of %s %d (%s) is at fence %d, and its token is not the current one", g.Kind, g.RecordID, g.Group, g.Fence)
}

// AcquireLease grants a lease to the actor, taking over an expired or released one with a
// higher fencing number. See store.Leases for the error codes.
func (db *DB) AcquireLease(ctx context.Context, r store.LeaseRequest) (*store.Lease, error) {
	actor, err := store.WriterFrom(ctx, "a lease")
	if err != nil {
		return nil, err
	}
	if err := db.Registry().CheckLeaseRequest(r); err != nil {
		return nil, err
	}
	t, err := db.table(r.Kind)
	if err != nil {
		return nil, err
	}
	token := store.NewLeaseToken()
	hash := store.LeaseTokenHash(token)
	var out *store.Lease
	what := fmt.Sprintf("acquire lease on %s %d (%s)", r.Kind, r.RecordID, r.Group)
	err = db.inTx(ctx, what, false, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+" WHERE id = $1)", r.RecordID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return store.Errorf(store.ENOTFOUND, "%s %d not found", r.Kind, r.RecordID)
		}
		if err := store.CheckLeaseAccess(actor, r, store.AncestorsFunc(func(id int64) ([]int64, error) {
			return db.placedAncestors(ctx, tx, t, id)
		})); err != nil {
			return err
		}
		var now time.Time
		old, err := scanLease(tx.QueryRow(ctx, "SELECT "+leaseColumns+`, clock_timestamp() FROM leases
			WHERE kind = $1 AND record_id = $2 AND grp = $3 FOR UPDATE`, string(r.Kind), r.RecordID, r.Group), &now)
		found := err == nil
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var l leaseRow
		if found {
			if old.Live(now) {
				return &store.LeaseError{Lease: old.public(), Now: now.UTC()}
			}
			l, err = scanLease(tx.QueryRow(ctx, `UPDATE leases SET holder = $4, token_hash = $5, fence = fence + 1,
				acquired_at = clock_timestamp(), expires_at = clock_timestamp() + $6 * interval '1 microsecond', released_at = NULL
				WHERE kind = $1 AND record_id = $2 AND grp = $3 RETURNING `+leaseColumns,
				string(r.Kind), r.RecordID, r.Group, actor.Name, hash, r.TTL.Microseconds()))
			if err != nil {
				return err
			}
			if !old.Released {
				if _, err := db.insertChange(ctx, tx, store.Change{Event: store.EventLeaseExpired, Kind: r.Kind, RecordID: r.RecordID,
					Actor: old.Holder, Group: r.Group, Fence: old.Fence, At: db.txNow()}); err != nil {
					return err
				}
			}
		} else {
			l, err = scanLease(tx.QueryRow(ctx, `INSERT INTO leases (kind, record_id, grp, holder, token_hash, fence, acquired_at, expires_at)
				VALUES ($1, $2, $3, $4, $5, 1, clock_timestamp(), clock_timestamp() + $6 * interval '1 microsecond')
				ON CONFLICT (kind, record_id, grp) DO NOTHING RETURNING `+leaseColumns,
				string(r.Kind), r.RecordID, r.Group, actor.Name, hash, r.TTL.Microseconds()))
			if errors.Is(err, pgx.ErrNoRows) {
				return errRetry // a concurrent acquire inserted the scope first; look again
			}
			if err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO lease_grants (token_hash, kind, record_id, grp, holder, fence, acquired_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, hash, string(r.Kind), r.RecordID, r.Group, actor.Name, l.Fence, l.AcquiredAt); err != nil {
			return err
		}
		if _, err := db.insertChange(ctx, tx, store.Change{Event: store.EventLeaseGranted, Kind: r.Kind, RecordID: r.RecordID,
			Actor: actor.Name, Role: actor.Role, Group: r.Group, Fence: l.Fence, At: db.txNow()}); err != nil {
			return err
		}
		lease := l.public()
		lease.Token = token
		out = &lease
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// currentLeaseTx returns the current grant for token, locked FOR UPDATE, and the database
// clock. A token that is not current is explained by lostLease (ELEASE or unknown).
func (db *DB) currentLeaseTx(ctx context.Context, tx pgx.Tx, hash string) (leaseRow, time.Time, error) {
	var now time.Time
	l, err := scanLease(tx.QueryRow(ctx, "SELECT "+leaseColumns+", clock_timestamp() FROM leases WHERE token_hash = $1 FOR UPDATE", hash), &now)
	return l, now.UTC(), err
}

// ExtendLease moves a live lease's expiry to now + ttl on the database clock. ELEASE (Lost)
// when the lease expired, was released or taken over; ENOTFOUND for an unknown token.
func (db *DB) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	if err := store.CheckLeaseTTL(ttl); err != nil {
		return nil, err
	}
	hash := store.LeaseTokenHash(token)
	var out *store.Lease
	err := db.inTx(ctx, "extend lease", true, func(tx pgx.Tx) error {
		l, now, err := db.currentLeaseTx(ctx, tx, hash)
		if errors.Is(err, pgx.ErrNoRows) {
			return db.lostLease(ctx, tx, hash, "", 0)
		}
		if err != nil {
			return err
		}
		if err := store.LeaseLost(l.Lease, l.Fence, now); err != nil {
			return err
		}
		l, err = scanLease(tx.QueryRow(ctx, `UPDATE leases SET expires_at = clock_timestamp() + $2 * interval '1 microsecond'
			WHERE token_hash = $1 RETURNING `+leaseColumns, hash, ttl.Microseconds()))
		if err != nil {
			return err
		}
		if _, err := db.insertChange(ctx, tx, store.Change{Event: store.EventLeaseRenewed, Kind: l.Kind, RecordID: l.RecordID,
			Actor: l.Holder, Group: l.Group, Fence: l.Fence, At: db.txNow()}); err != nil {
			return err
		}
		lease := l.public()
		lease.Token = token
		out = &lease
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReleaseLease ends a lease. Releasing an already ended lease is not an error, and the
// answer says why it had ended; ENOTFOUND for an unknown token.
func (db *DB) ReleaseLease(ctx context.Context, token string) (*store.LeaseRelease, error) {
	hash := store.LeaseTokenHash(token)
	var out *store.LeaseRelease
	err := db.inTx(ctx, "release lease", true, func(tx pgx.Tx) error {
		l, now, err := db.currentLeaseTx(ctx, tx, hash)
		if errors.Is(err, pgx.ErrNoRows) {
			err := db.lostLease(ctx, tx, hash, "", 0)
			var le *store.LeaseError
			if errors.As(err, &le) {
				out = &store.LeaseRelease{Lease: le.Lease, Ended: le.Reason} // taken over: it ended already
				return nil
			}
			return err
		}
		if err != nil {
			return err
		}
		var le *store.LeaseError
		if err := store.LeaseLost(l.Lease, l.Fence, now); errors.As(err, &le) {
			out = &store.LeaseRelease{Lease: le.Lease, Ended: le.Reason}
			return nil
		}
		out = &store.LeaseRelease{Lease: l.public()}
		if _, err := tx.Exec(ctx, `UPDATE leases SET released_at = clock_timestamp(), expires_at = least(expires_at, clock_timestamp())
			WHERE token_hash = $1`, hash); err != nil {
			return err
		}
		_, err = db.insertChange(ctx, tx, store.Change{Event: store.EventLeaseReleased, Kind: l.Kind, RecordID: l.RecordID,
			Actor: l.Holder, Group: l.Group, Fence: l.Fence, At: db.txNow()})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BreakLease ends another's live lease on group of kind id (store.LeaseBreaker).
func (db *DB) BreakLease(ctx context.Context, kind store.Kind, id int64, group string) (*store.LeaseRelease, error) {
	actor, err := store.CheckBreakLease(ctx, kind, id)
	if err != nil {
		return nil, err
	}
	var out *store.LeaseRelease
	err = db.inTx(ctx, "break lease", true, func(tx pgx.Tx) error {
		var now time.Time
		l, err := scanLease(tx.QueryRow(ctx, "SELECT "+leaseColumns+`, clock_timestamp() FROM leases
			WHERE kind = $1 AND record_id = $2 AND grp = $3 FOR UPDATE`, string(kind), id, group), &now)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !l.Live(now)) {
			return store.NoLiveLease(kind, id, group)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE leases SET released_at = clock_timestamp(), expires_at = least(expires_at, clock_timestamp())
			WHERE token_hash = $1`, l.hash); err != nil {
			return err
		}
		out = &store.LeaseRelease{Lease: l.public()}
		_, err = db.insertChange(ctx, tx, store.Change{Event: store.EventLeaseReleased, Kind: kind, RecordID: id,
			Actor: actor.Name, Role: actor.Role, Group: group, Fence: l.Fence, At: db.txNow()})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindLeases returns live leases, and those that ended within f.Expired, without their
// tokens, with the database clock's now.
func (db *DB) FindLeases(ctx context.Context, f store.LeaseFilter) ([]store.Lease, time.Time, error) {
	var out []store.Lease
	var now time.Time
	err := db.read(ctx, "find leases", func(q querier) error {
		out = out[:0]
		if err := q.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&now); err != nil {
			return err
		}
		rows, err := q.Query(ctx, "SELECT "+leaseColumns+` FROM leases
			WHERE ($1 = '' OR kind = $1) AND ($2 = 0 OR record_id = $2)
			AND expires_at > $3::timestamptz - $4 * interval '1 microsecond' AND ($4 > 0 OR released_at IS NULL)
			ORDER BY kind, record_id, grp`, string(f.Kind), f.RecordID, now, max(f.Expired, 0).Microseconds())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			l, err := scanLease(rows)
			if err != nil {
				return err
			}
			out = append(out, l.public())
		}
		return rows.Err()
	})
	return out, now.UTC(), err
}
