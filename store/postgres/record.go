package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// table returns the table of a kind.
func table(kind store.Kind) (string, error) {
	switch kind {
	case store.KindProduct:
		return "products", nil
	case store.KindDocument:
		return "documents", nil
	}
	return "", store.Errorf(store.EINVALID, "unknown kind %q (want product or document)", kind)
}

// ident quotes a column name taken from the registry.
func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// selectList is the column list every record query returns, in scanRecord's order.
func (db *DB) selectList(kind store.Kind) string {
	cols := []string{"id", "version", "updated_by", "updated_at"}
	for _, f := range db.reg.Fields(kind) {
		cols = append(cols, ident(f.Name))
	}
	return strings.Join(cols, ", ")
}

type scanner interface{ Scan(dest ...any) error }

// scanRecord reads one row of selectList.
func (db *DB) scanRecord(kind store.Kind, row scanner) (*store.Record, error) {
	fields := db.reg.Fields(kind)
	r := &store.Record{Kind: kind, Fields: make(store.Values, len(fields))}
	dest := []any{&r.ID, &r.Version, &r.UpdatedBy, &r.UpdatedAt}
	vals := make([]any, len(fields))
	for i, f := range fields {
		switch f.Type {
		case store.TypeString, store.TypeText, store.TypeEnum:
			vals[i] = new(string)
		case store.TypeInt, store.TypeMoney:
			vals[i] = new(int64)
		case store.TypeSet:
			vals[i] = new([]string)
		case store.TypeTime:
			vals[i] = new(*time.Time)
		case store.TypeRef:
			vals[i] = new(*int64)
		default:
			return nil, fmt.Errorf("field %s.%s: unknown type %s", kind, f.Name, f.Type)
		}
	}
	if err := row.Scan(append(dest, vals...)...); err != nil {
		return nil, err
	}
	r.UpdatedAt = r.UpdatedAt.UTC()
	for i, f := range fields {
		var v any
		switch p := vals[i].(type) {
		case *string:
			v = *p
		case *int64:
			v = *p
		case *[]string:
			v = store.NormalizeSet(*p)
		case **time.Time:
			if *p != nil {
				v = (*p).UTC()
			}
		case **int64:
			if *p != nil {
				v = **p
			}
		}
		r.Fields[f.Name] = v
	}
	return r, nil
}

// arg converts a field value into a query argument.
func arg(f *store.Field, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case []string:
		if x == nil {
			return []string{}
		}
	case time.Time:
		return x.UTC()
	}
	return v
}

// findRecordTx reads one record, locking it FOR UPDATE when lock is set. ENOTFOUND if none.
func (db *DB) findRecordTx(ctx context.Context, q querier, kind store.Kind, id int64, lock bool) (*store.Record, error) {
	t, err := table(kind)
	if err != nil {
		return nil, err
	}
	sql := "SELECT " + db.selectList(kind) + " FROM " + t + " WHERE id = $1"
	if lock {
		sql += " FOR UPDATE"
	}
	r, err := db.scanRecord(kind, q.QueryRow(ctx, sql, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.Errorf(store.ENOTFOUND, "%s %d not found", kind, id)
	}
	return r, err
}

// FindRecord returns one record. ENOTFOUND if there is none.
func (db *DB) FindRecord(ctx context.Context, kind store.Kind, id int64) (*store.Record, error) {
	var r *store.Record
	err := db.read(ctx, fmt.Sprintf("find %s %d", kind, id), func(q querier) (err error) {
		r, err = db.findRecordTx(ctx, q, kind, id, false)
		return err
	})
	return r, err
}

// FindRecords returns the records matching f, ordered by id.
func (db *DB) FindRecords(ctx context.Context, f store.Filter) ([]*store.Record, error) {
	t, err := table(f.Kind)
	if err != nil {
		return nil, err
	}
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	if f.Search != "" {
		cols := []string{"title"}
		if f.Kind == store.KindProduct {
			cols = []string{"sku", "name"}
		}
		var ors []string
		for _, c := range cols {
			ors = append(ors, ident(c)+` ILIKE $? ESCAPE '\'`)
		}
		add("("+strings.Join(ors, " OR ")+")", "%"+likeEscape(f.Search)+"%")
	}
	if len(f.IDs) > 0 {
		add("id = ANY($?)", f.IDs)
	}
	if f.AfterID > 0 {
		add("id > $?", f.AfterID)
	}
	sql := "SELECT " + db.selectList(f.Kind) + " FROM " + t
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY id"
	if f.Limit > 0 {
		sql += " LIMIT " + strconv.Itoa(f.Limit)
	}
	var out []*store.Record
	err = db.read(ctx, "find "+string(f.Kind)+"s", func(q querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := db.scanRecord(f.Kind, rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// CountRecords returns how many records of kind exist.
func (db *DB) CountRecords(ctx context.Context, kind store.Kind) (int, error) {
	t, err := table(kind)
	if err != nil {
		return 0, err
	}
	var n int
	err = db.read(ctx, "count "+string(kind)+"s", func(q querier) error {
		return q.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n)
	})
	return n, err
}

// CreateRecord inserts a record at version 1 and returns it. EINVALID for bad values or a
// duplicate sku, EFORBIDDEN for fields the actor's role may not write, ENOTFOUND for a
// missing parent document, EINVALID when the parent sits at the deepest level already.
func (db *DB) CreateRecord(ctx context.Context, kind store.Kind, vals store.Values) (*store.Record, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	t, err := table(kind)
	if err != nil {
		return nil, err
	}
	full, err := db.reg.CheckCreate(kind, actor.Role, vals)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	slices.Sort(names)
	keep := store.KeepsHistory(ctx, actor)
	var rec *store.Record
	what := "create " + string(kind)
	err = db.inTx(ctx, what, false, func(tx pgx.Tx) error {
		now := db.txNow()
		if err := db.checkUnique(ctx, tx, kind, 0, full); err != nil {
			return err
		}
		if parent, ok := full["parent_id"].(int64); ok && kind == store.KindDocument {
			if err := db.checkNewChild(ctx, tx, parent); err != nil {
				return err
			}
		}
		var cols, ph []string
		var args []any
		for _, f := range db.reg.Fields(kind) {
			args = append(args, arg(f, full[f.Name]))
			cols = append(cols, ident(f.Name))
			ph = append(ph, "$"+strconv.Itoa(len(args)))
		}
		args = append(args, now, actor.Name)
		cols = append(cols, "version", "updated_at", "updated_by")
		ph = append(ph, "1", "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args)))
		sql := "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(ph, ", ") +
			") RETURNING " + db.selectList(kind)
		r, err := db.scanRecord(kind, tx.QueryRow(ctx, sql, args...))
		if err != nil {
			return err // a constraint race is mapped by mapErr
		}
		if keep {
			if err := db.insertVersion(ctx, tx, r, actor, names, now, nil); err != nil {
				return err
			}
		}
		_, err = db.insertChange(ctx, tx, store.Change{Event: store.EventCreated, Kind: kind, RecordID: r.ID,
			Version: r.Version, Actor: actor.Name, Role: actor.Role, Fields: names, History: keep, At: now})
		rec = r
		return err
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// UpdateRecord applies a partial, version-checked update in one transaction. See
// store.Records for the rules and error codes.
func (db *DB) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := table(kind); err != nil {
		return nil, err
	}
	if err := db.reg.CheckUpdate(kind, actor.Role, u); err != nil {
		return nil, err
	}
	keep := store.KeepsHistory(ctx, actor)
	var res *store.UpdateResult
	err = db.inTx(ctx, fmt.Sprintf("save %s %d", kind, id), u.IdempotencyKey != "", func(tx pgx.Tx) (err error) {
		res, err = db.updateTx(ctx, tx, kind, id, u, actor, keep)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// LockedUpdate is the system writer's read-modify-write under SELECT ... FOR UPDATE. See
// store.Records for the rules and error codes.
func (db *DB) LockedUpdate(ctx context.Context, kind store.Kind, id int64, fn func(*store.Record) (store.Update, error)) (*store.UpdateResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := table(kind); err != nil {
		return nil, err
	}
	keep := store.KeepsHistory(ctx, actor)
	var res *store.UpdateResult
	keyed := false
	err = db.inTxFlag(ctx, fmt.Sprintf("update %s %d", kind, id), &keyed, func(tx pgx.Tx) error {
		res = nil
		cur, err := db.findRecordTx(ctx, tx, kind, id, true)
		if err != nil {
			return err
		}
		u, err := fn(cur.Clone())
		if err != nil {
			return err
		}
		if len(u.Set) == 0 && len(u.Add) == 0 {
			return nil
		}
		keyed = u.IdempotencyKey != ""
		if u.BaseVersion == 0 {
			u.BaseVersion = cur.Version
		}
		if err := db.reg.CheckUpdate(kind, actor.Role, u); err != nil {
			return err
		}
		res, err = db.updateTx(ctx, tx, kind, id, u, actor, keep)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// updateTx is the save inside a transaction: idempotency key, lease check, the one
// version-checked UPDATE, history or operation log, change log and notification.
func (db *DB) updateTx(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64, u store.Update, actor store.Actor, keep bool) (*store.UpdateResult, error) {
	t, _ := table(kind)
	now := db.txNow()
	if err := db.checkLeasesTx(ctx, tx, kind, id, db.reg.UpdateGroups(kind, u), u.LeaseToken, ""); err != nil {
		return nil, err
	}
	if u.IdempotencyKey != "" {
		replay, err := db.claimSaveKey(ctx, tx, kind, id, u, actor)
		if err != nil {
			return nil, err
		}
		if replay {
			r, err := db.findRecordTx(ctx, tx, kind, id, false)
			if err != nil {
				return nil, err
			}
			return &store.UpdateResult{Record: r, Replayed: true}, nil
		}
	}
	if err := db.checkUnique(ctx, tx, kind, id, u.Set); err != nil {
		return nil, err
	}

	pre, err := db.preImage(ctx, tx, kind, id, u, keep)
	if err != nil {
		return nil, err
	}
	var sets []string
	args := []any{id}
	next := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	setNames := make([]string, 0, len(u.Set))
	for n := range u.Set {
		setNames = append(setNames, n)
	}
	slices.Sort(setNames)
	for _, n := range setNames {
		f, _ := db.reg.Field(kind, n)
		sets = append(sets, ident(n)+" = "+next(arg(f, u.Set[n])))
	}
	addNames := make([]string, 0, len(u.Add))
	for n := range u.Add {
		addNames = append(addNames, n)
	}
	slices.Sort(addNames)
	for _, n := range addNames {
		sets = append(sets, ident(n)+" = "+ident(n)+" + "+next(u.Add[n]))
	}
	sets = append(sets, "version = version + 1", "updated_at = "+next(now), "updated_by = "+next(actor.Name))
	where := "id = $1"
	if !u.Relative() {
		where += " AND version = " + next(u.BaseVersion)
	}
	sql := "UPDATE " + t + " SET " + strings.Join(sets, ", ") + " WHERE " + where + " RETURNING " + db.selectList(kind)
	r, err := db.scanRecord(kind, tx.QueryRow(ctx, sql, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		// Zero rows: the record is gone or its version moved on.
		return nil, db.conflict(ctx, tx, kind, id, u.BaseVersion)
	}
	if err != nil {
		return nil, err // constraint and range errors are mapped by mapErr
	}
	fields := u.FieldNames()
	if keep {
		if err := db.insertVersion(ctx, tx, r, actor, fields, now, pre); err != nil {
			return nil, err
		}
	}
	var deltas map[string]int64
	if len(u.Add) > 0 {
		deltas = u.Add
	}
	if _, err := db.insertChange(ctx, tx, store.Change{Event: store.EventSaved, Kind: kind, RecordID: id, Version: r.Version,
		Actor: actor.Name, Role: actor.Role, Fields: fields, Deltas: deltas, History: keep, At: now}); err != nil {
		return nil, err
	}
	if u.IdempotencyKey != "" {
		result, _ := json.Marshal(map[string]any{"kind": kind, "id": id, "version": r.Version})
		if _, err := tx.Exec(ctx, `UPDATE idempotency SET result = $3 WHERE scope = $1 AND key = $2`,
			store.ScopeAPI, u.IdempotencyKey, result); err != nil {
			return nil, err
		}
	}
	return &store.UpdateResult{Record: r}, nil
}

// conflict builds the answer to a version-checked UPDATE that matched no row: ENOTFOUND, or
// a *ConflictError with the current record and the writes since the base version.
func (db *DB) conflict(ctx context.Context, tx pgx.Tx, kind store.Kind, id, base int64) error {
	cur, err := db.findRecordTx(ctx, tx, kind, id, false)
	if err != nil {
		return err
	}
	since, err := db.changesSince(ctx, tx, kind, id, base)
	if err != nil {
		return err
	}
	return &store.ConflictError{Kind: kind, ID: id, BaseVersion: base, Current: cur, Since: since}
}

// claimSaveKey handles a save's idempotency key inside the save's transaction (scope api).
// It reports replay when the key was already applied with the same request. The key row is
// inserted first: a concurrent save with the same key blocks on the primary key until the
// first one ends, then (READ COMMITTED: each statement takes a new snapshot) sees its
// committed row and replays it, or inserts the key itself if the first one rolled back.
func (db *DB) claimSaveKey(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64, u store.Update, actor store.Actor) (replay bool, err error) {
	hash := store.RequestHash(kind, id, u)
	ttl := store.DefaultCompletedTTL.Microseconds()
	tag, err := tx.Exec(ctx, `INSERT INTO idempotency (scope, key, status, request_hash, owner, created_at, expires_at)
		VALUES ($1, $2, 'COMPLETED', $3, $4, clock_timestamp(), clock_timestamp() + $5 * interval '1 microsecond')
		ON CONFLICT (scope, key) DO NOTHING`,
		store.ScopeAPI, u.IdempotencyKey, hash, actor.Name, ttl)
	if err != nil {
		if pgCode(err) == sqlstateUniqueViolation {
			return false, errRetry
		}
		return false, err
	}
	if tag.RowsAffected() == 1 {
		return false, nil
	}
	var status, have string
	var expired bool
	err = tx.QueryRow(ctx, `SELECT status, request_hash, expires_at <= clock_timestamp() FROM idempotency
		WHERE scope = $1 AND key = $2 FOR UPDATE`, store.ScopeAPI, u.IdempotencyKey).Scan(&status, &have, &expired)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, errRetry // purged under us; start again
	}
	if err != nil {
		return false, err
	}
	if !expired {
		if have != hash {
			return false, store.Errorf(store.EINVALID, "idempotency key %s was already used for a different request", u.IdempotencyKey)
		}
		switch store.KeyStatus(status) {
		case store.KeyCompleted:
			return true, nil
		case store.KeyPending:
			return false, store.Errorf(store.EBUSY, "idempotency key %s is in progress elsewhere; try again later", u.IdempotencyKey)
		}
	}
	// Expired or FAILED: this save takes the key.
	_, err = tx.Exec(ctx, `UPDATE idempotency SET status = 'COMPLETED', request_hash = $3, result = NULL, owner = $4,
		created_at = clock_timestamp(), expires_at = clock_timestamp() + $5 * interval '1 microsecond'
		WHERE scope = $1 AND key = $2`,
		store.ScopeAPI, u.IdempotencyKey, hash, actor.Name, ttl)
	return false, err
}

// checkUnique refuses a sku that another product already has, with a message naming it.
// The unique constraint stays the guarantee; this only explains (as the SQLite store does).
func (db *DB) checkUnique(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64, vals store.Values) error {
	sku, ok := vals["sku"].(string)
	if kind != store.KindProduct || !ok {
		return nil
	}
	var other int64
	err := tx.QueryRow(ctx, "SELECT id FROM products WHERE sku = $1 AND id <> $2", sku, id).Scan(&other)
	switch {
	case err == nil:
		return store.Errorf(store.EINVALID, "sku %s already exists (product %d)", sku, other)
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	}
	return err
}
