package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// queryer is what reads need: the read pool or a write transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// FindRecord returns one record. ENOTFOUND if there is none.
func (db *DB) FindRecord(ctx context.Context, kind store.Kind, id int64) (*store.Record, error) {
	r, err := db.findRecord(ctx, db.read, kind, id)
	if err != nil {
		return nil, mapErr(fmt.Sprintf("find %s %d", kind, id), err)
	}
	return r, nil
}

func (db *DB) findRecord(ctx context.Context, q queryer, kind store.Kind, id int64) (*store.Record, error) {
	t, err := table(kind)
	if err != nil {
		return nil, err
	}
	row := q.QueryRowContext(ctx, "SELECT "+db.columns(kind)+" FROM "+t+" WHERE id = ?", id)
	r, err := db.scanRecord(kind, row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.ENOTFOUND, "%s %d not found", kind, id)
	}
	return r, err
}

// FindRecords returns the records matching f, ordered by id.
func (db *DB) FindRecords(ctx context.Context, f store.Filter) ([]*store.Record, error) {
	t, err := table(f.Kind)
	if err != nil {
		return nil, err
	}
	var (
		where []string
		args  []any
	)
	if f.Search != "" {
		var ors []string
		for _, col := range []string{"sku", "name", "title"} {
			if _, err := db.reg.Field(f.Kind, col); err == nil {
				ors = append(ors, "instr(lower("+col+"), lower(?)) > 0")
				args = append(args, f.Search)
			}
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	if len(f.IDs) > 0 {
		where = append(where, "id IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(f.IDs)), ", ")+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	if f.AfterID > 0 {
		where = append(where, "id > ?")
		args = append(args, f.AfterID)
	}
	q := "SELECT " + db.columns(f.Kind) + " FROM " + t
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr("find "+string(f.Kind)+"s", err)
	}
	defer rows.Close()
	var out []*store.Record
	for rows.Next() {
		r, err := db.scanRecord(f.Kind, rows)
		if err != nil {
			return nil, mapErr("find "+string(f.Kind)+"s", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr("find "+string(f.Kind)+"s", err)
	}
	return out, nil
}

// CountRecords returns how many records of kind exist.
func (db *DB) CountRecords(ctx context.Context, kind store.Kind) (int, error) {
	t, err := table(kind)
	if err != nil {
		return 0, err
	}
	var n int
	if err := db.read.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
		return 0, mapErr("count "+string(kind)+"s", err)
	}
	return n, nil
}

// CreateRecord inserts a record at version 1 and returns it. Editor creates add history
// version 1 (unless inside WithoutHistory); every create adds a "created" change.
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
	written := make([]string, 0, len(vals))
	for name := range vals {
		written = append(written, name)
	}
	slices.Sort(written)
	keep := store.KeepsHistory(ctx, actor)

	fields := db.reg.Fields(kind)
	cols := make([]string, 0, len(fields)+3)
	args := make([]any, 0, len(fields)+3)
	for _, f := range fields {
		v, err := encodeColumn(f, full[f.Name])
		if err != nil {
			return nil, err
		}
		cols = append(cols, f.Name)
		args = append(args, v)
	}
	cols = append(cols, "version", "updated_at", "updated_by")
	q := "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") VALUES (" +
		strings.Repeat("?, ", len(cols)-1) + "?) RETURNING " + db.columns(kind)

	var rec *store.Record
	err = db.writeTx(ctx, "create "+string(kind), func(tx *tx) error {
		if err := db.checkUnique(ctx, tx, kind, 0, full); err != nil {
			return err
		}
		if kind == store.KindDocument {
			if p, ok := full["parent_id"].(int64); ok {
				if err := db.checkNewChild(ctx, tx, p); err != nil {
					return err
				}
			}
		}
		a := append(slices.Clone(args), int64(1), formatTime(tx.now), actor.Name)
		var err error
		if rec, err = db.scanRecord(kind, tx.QueryRowContext(ctx, q, a...)); err != nil {
			return err
		}
		return db.logWrite(ctx, tx, rec, store.EventCreated, actor, keep, written, nil, nil)
	})
	if err != nil {
		return nil, mapErr("create "+string(kind), err)
	}
	return rec, nil
}

// checkUnique refuses a sku that another product already has, with a message naming it.
func (db *DB) checkUnique(ctx context.Context, tx *tx, kind store.Kind, id int64, vals store.Values) error {
	sku, ok := vals["sku"].(string)
	if kind != store.KindProduct || !ok {
		return nil
	}
	var other int64
	err := tx.QueryRowContext(ctx, "SELECT id FROM products WHERE sku = ? AND id <> ?", sku, id).Scan(&other)
	switch {
	case err == nil:
		return store.Errorf(store.EINVALID, "sku %s already exists (product %d)", sku, other)
	case errors.Is(err, sql.ErrNoRows):
		return nil
	}
	return err
}

// UpdateRecord applies a partial, version-checked update in one transaction: lease check,
// idempotency key, one UPDATE of the changed fields, history version or operation-log entry,
// change-log entry, idempotency result.
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
	what := fmt.Sprintf("update %s %d", kind, id)
	err = db.writeTx(ctx, what, func(tx *tx) error {
		var err error
		res, err = db.updateTx(ctx, tx, kind, id, u, actor, keep)
		return err
	})
	if err != nil {
		return nil, mapErr(what, err)
	}
	return res, nil
}

// LockedUpdate reads the record inside a BEGIN IMMEDIATE transaction (which holds SQLite's
// write lock), calls fn, and applies its update checked against the version read.
func (db *DB) LockedUpdate(ctx context.Context, kind store.Kind, id int64, fn func(*store.Record) (store.Update, error)) (*store.UpdateResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	keep := store.KeepsHistory(ctx, actor)
	var res *store.UpdateResult
	what := fmt.Sprintf("locked update %s %d", kind, id)
	err = db.writeTx(ctx, what, func(tx *tx) error {
		res = nil
		cur, err := db.findRecord(ctx, tx, kind, id)
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
		return nil, mapErr(what, err)
	}
	return res, nil
}

// updateTx is the body of every save, inside the caller's write transaction. u has passed
// Registry.CheckUpdate, so every field name in it is a registry column.
func (db *DB) updateTx(ctx context.Context, tx *tx, kind store.Kind, id int64, u store.Update, actor store.Actor, keep bool) (*store.UpdateResult, error) {
	t, err := table(kind)
	if err != nil {
		return nil, err
	}
	if err := db.checkLeases(ctx, tx, kind, id, db.reg.UpdateGroups(kind, u), u.LeaseToken); err != nil {
		return nil, err
	}
	var hash string
	if u.IdempotencyKey != "" {
		hash = store.RequestHash(kind, id, u)
		replay, err := db.checkUpdateKey(ctx, tx, u.IdempotencyKey, hash)
		if err != nil {
			return nil, err
		}
		if replay {
			cur, err := db.findRecord(ctx, tx, kind, id)
			if err != nil {
				return nil, err
			}
			return &store.UpdateResult{Record: cur, Replayed: true}, nil
		}
	}
	if err := db.checkUnique(ctx, tx, kind, id, u.Set); err != nil {
		return nil, err
	}

	pre, err := db.preImage(ctx, tx, kind, id, u, keep)
	if err != nil {
		return nil, err
	}
	// One UPDATE: the changed fields only, the relative changes as expressions, the version.
	var (
		sets []string
		args []any
	)
	for _, name := range sortedKeys(u.Set) {
		f, err := db.reg.Field(kind, name)
		if err != nil {
			return nil, err
		}
		v, err := encodeColumn(f, u.Set[name])
		if err != nil {
			return nil, err
		}
		sets = append(sets, name+" = ?")
		args = append(args, v)
	}
	for _, name := range sortedKeys(u.Add) {
		if _, err := db.reg.Field(kind, name); err != nil {
			return nil, err
		}
		sets = append(sets, name+" = "+name+" + ?")
		args = append(args, u.Add[name])
	}
	sets = append(sets, "version = version + 1", "updated_at = ?", "updated_by = ?")
	args = append(args, formatTime(tx.now), actor.Name, id)
	q := "UPDATE " + t + " SET " + strings.Join(sets, ", ") + " WHERE id = ?"
	if !u.Relative() {
		q += " AND version = ?"
		args = append(args, u.BaseVersion)
	}
	q += " RETURNING " + db.columns(kind)
	rec, err := db.scanRecord(kind, tx.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, db.conflict(ctx, tx, kind, id, u.BaseVersion)
	}
	if err != nil {
		return nil, err
	}
	if err := db.logWrite(ctx, tx, rec, store.EventSaved, actor, keep, u.FieldNames(), u.Add, pre); err != nil {
		return nil, err
	}
	if u.IdempotencyKey != "" {
		if err := db.completeUpdateKey(ctx, tx, u.IdempotencyKey, hash, rec, actor); err != nil {
			return nil, err
		}
	}
	return &store.UpdateResult{Record: rec}, nil
}

// conflict explains a save that matched no row: the record is gone (ENOTFOUND) or has moved
// past the base version (*ConflictError with the current record and the writes since).
func (db *DB) conflict(ctx context.Context, tx *tx, kind store.Kind, id, base int64) error {
	cur, err := db.findRecord(ctx, tx, kind, id)
	if err != nil {
		return err
	}
	since, err := db.changesSince(ctx, tx, kind, id, base)
	if err != nil {
		return err
	}
	return &store.ConflictError{Kind: kind, ID: id, BaseVersion: base, Current: cur, Since: since}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
