package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/store"
)

const leaseColumns = "kind, record_id, grp, holder, token_hash, fence, acquired_at, expires_at, released"

type leaseRow struct {
	store.Lease
	tokenHash string
}

func scanLease(sc scanner) (*leaseRow, error) {
	var (
		l        leaseRow
		kind     string
		acq, exp string
	)
	if err := sc.Scan(&kind, &l.RecordID, &l.Group, &l.Holder, &l.tokenHash, &l.Fence, &acq, &exp, &l.Released); err != nil {
		return nil, err
	}
	l.Kind = store.Kind(kind)
	var err error
	if l.AcquiredAt, err = parseTime(acq); err != nil {
		return nil, err
	}
	if l.ExpiresAt, err = parseTime(exp); err != nil {
		return nil, err
	}
	return &l, nil
}

// findLease returns the current lease row of one scope, or nil.
func findLease(ctx context.Context, q querier, kind store.Kind, id int64, group string) (*leaseRow, error) {
	l, err := scanLease(q.QueryRowContext(ctx, "SELECT "+leaseColumns+
		" FROM leases WHERE kind = ? AND record_id = ? AND grp = ?", string(kind), id, group))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return l, err
}

// grant is a token's entry in lease_grants.
type grant struct {
	kind  store.Kind
	id    int64
	group string
	fence int64
}

func findGrant(ctx context.Context, q querier, token string) (*grant, error) {
	var (
		g    grant
		kind string
	)
	err := q.QueryRowContext(ctx, `SELECT kind, record_id, grp, fence FROM lease_grants WHERE token_hash = ?`,
		store.LeaseTokenHash(token)).Scan(&kind, &g.id, &g.group, &g.fence)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	g.kind = store.Kind(kind)
	return &g, err
}

// tokenState reads the current lease of a presented grant's scope and returns it, or the
// *LeaseError (Lost) of store.LeaseLost saying why the grant is no longer valid at now.
func tokenState(ctx context.Context, q querier, g *grant, now time.Time) (*leaseRow, error) {
	cur, err := findLease(ctx, q, g.kind, g.id, g.group)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, store.Errorf(store.EINTERNAL, "lease of %s %d (%s) is missing", g.kind, g.id, g.group)
	}
	if err := store.LeaseLost(cur.Lease, g.fence, now); err != nil {
		return nil, err
	}
	return cur, nil
}

// checkLeases is the lease check of a write, inside its transaction: it reads what
// store.CheckWriteLeases decides on (the presented token's grant and its scope's current
// lease; a live lease of another token on a written group) and asks it.
func (db *DB) checkLeases(ctx context.Context, tx *tx, kind store.Kind, id int64, groups []string, token string) error {
	var w store.WriteLeases
	if token != "" {
		now, err := tx.clock(ctx)
		if err != nil {
			return err
		}
		w.Now = now
		g, err := findGrant(ctx, tx, token)
		if err != nil {
			return err
		}
		if g != nil {
			w.Grant = &store.LeaseGrant{Kind: g.kind, RecordID: g.id, Group: g.group, Fence: g.fence}
			if g.kind == kind && g.id == id {
				cur, err := findLease(ctx, tx, g.kind, g.id, g.group)
				if err != nil {
					return err
				}
				if cur != nil {
					w.Current = &cur.Lease
				}
			}
		}
		if err := store.CheckWriteLeases(kind, id, token, w); err != nil {
			return err
		}
	}
	if len(groups) == 0 {
		return nil
	}
	// Liveness is judged by the database clock in SQL, so the common case (no lease) costs
	// one indexed lookup.
	args := []any{string(kind), id, store.LeaseTokenHash(token)}
	for _, g := range groups {
		args = append(args, g)
	}
	blocker, err := scanLease(tx.QueryRowContext(ctx, "SELECT "+leaseColumns+` FROM leases
		WHERE kind = ? AND record_id = ? AND released = 0 AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
		AND token_hash <> ? AND grp IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(groups)), ", ")+`)
		ORDER BY grp LIMIT 1`, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if w.Now, err = tx.clock(ctx); err != nil {
		return err
	}
	w.Others = []store.Lease{blocker.Lease}
	return store.CheckWriteLeases(kind, id, token, w)
}

// AcquireLease grants a lease to the actor, taking over an expired or released one.
func (db *DB) AcquireLease(ctx context.Context, r store.LeaseRequest) (*store.Lease, error) {
	actor, err := store.WriterFrom(ctx, "a lease")
	if err != nil {
		return nil, err
	}
	if err := db.Registry().CheckLeaseRequest(r); err != nil {
		return nil, err
	}
	if err := db.refuseOnCopy(ctx); err != nil {
		return nil, err
	}
	t, err := db.table(r.Kind)
	if err != nil {
		return nil, err
	}
	token := store.NewLeaseToken()
	var out *store.Lease
	what := fmt.Sprintf("acquire lease on %s %d (%s)", r.Kind, r.RecordID, r.Group)
	err = db.inTx(ctx, what, func(tx *tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+t+" WHERE id = ?", r.RecordID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return store.Errorf(store.ENOTFOUND, "%s %d not found", r.Kind, r.RecordID)
		} else if err != nil {
			return err
		}
		if err := store.CheckLeaseAccess(actor, r, store.AncestorsFunc(func(id int64) ([]int64, error) {
			return ancestors(ctx, tx, t, id)
		})); err != nil {
			return err
		}
		now, err := tx.clock(ctx)
		if err != nil {
			return err
		}
		cur, err := findLease(ctx, tx, r.Kind, r.RecordID, r.Group)
		if err != nil {
			return err
		}
		l := store.Lease{Kind: r.Kind, RecordID: r.RecordID, Group: r.Group, Holder: actor.Name, Token: token,
			Fence: 1, AcquiredAt: now, ExpiresAt: now.Add(r.TTL)}
		if cur != nil {
			if cur.Live(now) {
				return &store.LeaseError{Lease: cur.Lease, Now: now}
			}
			l.Fence = cur.Fence + 1
			if !cur.Released {
				if err := logLease(ctx, tx, store.EventLeaseExpired, cur.Lease, cur.Holder, ""); err != nil {
					return err
				}
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO leases (`+leaseColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)
			ON CONFLICT (kind, record_id, grp) DO UPDATE SET holder = excluded.holder, token_hash = excluded.token_hash,
				fence = excluded.fence, acquired_at = excluded.acquired_at, expires_at = excluded.expires_at, released = 0`,
			string(l.Kind), l.RecordID, l.Group, l.Holder, store.LeaseTokenHash(token), l.Fence, formatTime(l.AcquiredAt), formatTime(l.ExpiresAt))
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO lease_grants (token_hash, kind, record_id, grp, fence) VALUES (?, ?, ?, ?, ?)`,
			store.LeaseTokenHash(token), string(l.Kind), l.RecordID, l.Group, l.Fence); err != nil {
			return err
		}
		if err := logLease(ctx, tx, store.EventLeaseGranted, l, actor.Name, actor.Role); err != nil {
			return err
		}
		out = &l
		return nil
	})
	if err != nil {
		return nil, mapErr(what, err)
	}
	return out, nil
}

// ExtendLease moves a live lease's expiry to now + ttl (database clock).
func (db *DB) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	if err := store.CheckLeaseTTL(ttl); err != nil {
		return nil, err
	}
	var out *store.Lease
	err := db.inTx(ctx, "extend lease", func(tx *tx) error {
		g, err := findGrant(ctx, tx, token)
		if err != nil {
			return err
		}
		if g == nil {
			return store.Errorf(store.ENOTFOUND, "no lease has this token")
		}
		now, err := tx.clock(ctx)
		if err != nil {
			return err
		}
		cur, err := tokenState(ctx, tx, g, now)
		if err != nil {
			return err
		}
		l := cur.Lease
		l.Token = token
		l.ExpiresAt = now.Add(ttl)
		if _, err := tx.ExecContext(ctx, `UPDATE leases SET expires_at = ? WHERE kind = ? AND record_id = ? AND grp = ? AND fence = ?`,
			formatTime(l.ExpiresAt), string(l.Kind), l.RecordID, l.Group, l.Fence); err != nil {
			return err
		}
		if err := logLease(ctx, tx, store.EventLeaseRenewed, l, l.Holder, ""); err != nil {
			return err
		}
		out = &l
		return nil
	})
	if err != nil {
		return nil, mapErr("extend lease", err)
	}
	return out, nil
}

// ReleaseLease ends a lease; releasing an ended lease is not an error, and the answer says
// why it had ended.
func (db *DB) ReleaseLease(ctx context.Context, token string) (*store.LeaseRelease, error) {
	var out *store.LeaseRelease
	err := db.inTx(ctx, "release lease", func(tx *tx) error {
		g, err := findGrant(ctx, tx, token)
		if err != nil {
			return err
		}
		if g == nil {
			return store.Errorf(store.ENOTFOUND, "no lease has this token")
		}
		now, err := tx.clock(ctx)
		if err != nil {
			return err
		}
		cur, err := tokenState(ctx, tx, g, now)
		var le *store.LeaseError
		if errors.As(err, &le) {
			out = &store.LeaseRelease{Lease: le.Lease, Ended: le.Reason} // already ended or taken over: nothing to release
			return nil
		}
		if err != nil {
			return err
		}
		out = &store.LeaseRelease{Lease: cur.Lease}
		if _, err := tx.ExecContext(ctx, `UPDATE leases SET released = 1, expires_at = ? WHERE kind = ? AND record_id = ? AND grp = ? AND fence = ?`,
			formatTime(now), string(cur.Kind), cur.RecordID, cur.Group, cur.Fence); err != nil {
			return err
		}
		return logLease(ctx, tx, store.EventLeaseReleased, cur.Lease, cur.Holder, "")
	})
	if err != nil {
		return nil, mapErr("release lease", err)
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
	err = db.inTx(ctx, "break lease", func(tx *tx) error {
		cur, err := findLease(ctx, tx, kind, id, group)
		if err != nil {
			return err
		}
		now, err := tx.clock(ctx)
		if err != nil {
			return err
		}
		if cur == nil || !cur.Live(now) {
			return store.NoLiveLease(kind, id, group)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE leases SET released = 1, expires_at = ? WHERE kind = ? AND record_id = ? AND grp = ? AND fence = ?`,
			formatTime(now), string(kind), id, group, cur.Fence); err != nil {
			return err
		}
		out = &store.LeaseRelease{Lease: cur.Lease}
		return logLease(ctx, tx, store.EventLeaseReleased, cur.Lease, actor.Name, actor.Role)
	})
	if err != nil {
		return nil, mapErr("break lease", err)
	}
	return out, nil
}

// FindLeases returns live leases, and those that ended within f.Expired, without tokens,
// ordered by kind, record and group, with the database clock's now.
func (db *DB) FindLeases(ctx context.Context, f store.LeaseFilter) ([]store.Lease, time.Time, error) {
	var nowS string
	if err := db.read.QueryRowContext(ctx, `SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`).Scan(&nowS); err != nil {
		return nil, time.Time{}, mapErr("find leases", err)
	}
	now, err := parseTime(nowS)
	if err != nil {
		return nil, time.Time{}, mapErr("find leases", err)
	}
	// A released lease's expires_at is the moment it was released, so "ended at" is
	// expires_at for every lease.
	where := []string{"expires_at > ?"}
	args := []any{formatTime(now.Add(-f.Expired))}
	if f.Expired <= 0 {
		where = []string{"released = 0 AND expires_at > ?"}
		args = []any{formatTime(now)}
	}
	if f.Kind != "" {
		where = append(where, "kind = ?")
		args = append(args, string(f.Kind))
	}
	if f.RecordID != 0 {
		where = append(where, "record_id = ?")
		args = append(args, f.RecordID)
	}
	rows, err := db.read.QueryContext(ctx, "SELECT "+leaseColumns+" FROM leases WHERE "+strings.Join(where, " AND ")+
		" ORDER BY kind, record_id, grp", args...)
	if err != nil {
		return nil, now, mapErr("find leases", err)
	}
	defer rows.Close()
	var out []store.Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, now, mapErr("find leases", err)
		}
		out = append(out, l.Lease)
	}
	if err := rows.Err(); err != nil {
		return nil, now, mapErr("find leases", err)
	}
	return out, now, nil
}
