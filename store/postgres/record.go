package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/tandem-editor/tandem/store"
)

// table returns the table of kind in the store's schema, quoted. Table and column names in
// SQL come only from here and from the registry, never from input. EINVALID for a kind the
// store does not have.
func (db *DB) table(kind store.Kind) (string, error) { return db.state().table(kind) }

// table is db.table in the schema of st.
func (st *schemaState) table(kind store.Kind) (string, error) {
	t, err := st.reg.Table(kind)
	if err != nil {
		return "", err
	}
	return ident(t), nil
}

// migratedSchema is the schema of the tables migrations 0001 to 0011 create (products and
// documents): the Go parts of those migrations fill columns of these tables, whatever schema
// the store records afterwards.
var migratedSchema = store.SampleRegistry()

// ident quotes a column name taken from the registry.
func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// selectList is the column list every record query returns, in scanRecord's order. It is
// made once per kind, at Open (selectLists): every save sends it.
// A caller takes the list and scans with the same schemaState (db.state()), so that a schema
// change between the two cannot make them disagree.
func (st *schemaState) selectList(kind store.Kind) string {
	if l, ok := st.selects[kind]; ok {
		return l
	}
	return selectList(st.reg, kind)
}

// state returns the store's registry with what is derived from it, as one value.
func (db *DB) state() *schemaState { return db.regState.Load() }

// selectLists makes selectList's lists of every kind of reg.
func selectLists(reg *store.Registry) map[store.Kind]string {
	m := make(map[store.Kind]string, len(reg.Kinds()))
	for _, k := range reg.Kinds() {
		m[k] = selectList(reg, k)
	}
	return m
}

func selectList(reg *store.Registry, kind store.Kind) string {
	cols := []string{"id", "version", "updated_by", "updated_at"}
	for _, f := range reg.Fields(kind) {
		cols = append(cols, ident(f.Name))
	}
	return strings.Join(cols, ", ")
}

type scanner interface{ Scan(dest ...any) error }

// scanRecord reads one row of st's selectList.
func (st *schemaState) scanRecord(kind store.Kind, row scanner) (*store.Record, error) {
	fields := st.reg.Fields(kind)
	r := &store.Record{Kind: kind, Fields: make(store.Values, len(fields))}
	dest := []any{&r.ID, &r.Version, &r.UpdatedBy, &r.UpdatedAt}
	vals := make([]any, len(fields))
	for i, f := range fields {
		var err error
		if vals[i], err = scanTarget(f); err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
	}
	if err := row.Scan(append(dest, vals...)...); err != nil {
		return nil, err
	}
	r.UpdatedAt = r.UpdatedAt.UTC()
	for i, f := range fields {
		r.Fields[f.Name] = scannedValue(vals[i])
	}
	return r, nil
}

// scanTarget returns what a column of field f is scanned into.
func scanTarget(f *store.Field) (any, error) {
	switch f.Type {
	case store.TypeString, store.TypeText, store.TypeEnum:
		return new(string), nil
	case store.TypeInt, store.TypeMoney:
		return new(int64), nil
	case store.TypeSet:
		return new([]string), nil
	case store.TypeTime:
		return new(*time.Time), nil
	case store.TypeRef:
		return new(*int64), nil
	}
	return nil, fmt.Errorf("field %s: unknown type %s", f.Name, f.Type)
}

// scannedValue returns the field value held by a scanTarget after the scan.
func scannedValue(target any) any {
	switch p := target.(type) {
	case *string:
		return *p
	case *int64:
		return *p
	case *[]string:
		return store.NormalizeSet(*p)
	case **time.Time:
		if *p != nil {
			return (*p).UTC()
		}
	case **int64:
		if *p != nil {
			return **p
		}
	}
	return nil
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

// findRecord reads one record, locking it FOR UPDATE when lock is set. ENOTFOUND if none.
func (db *DB) findRecord(ctx context.Context, q querier, kind store.Kind, id int64, lock bool) (*store.Record, error) {
	st := db.state()
	t, err := st.table(kind)
	if err != nil {
		return nil, err
	}
	sql := "SELECT " + st.selectList(kind) + " FROM " + t + " WHERE id = $1"
	if lock {
		sql += " FOR UPDATE"
	}
	r, err := st.scanRecord(kind, q.QueryRow(ctx, sql, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.Errorf(store.ENOTFOUND, "%s %d not found", kind, id)
	}
	return r, err
}

// FindRecord returns one record. ENOTFOUND if there is none.
func (db *DB) FindRecord(ctx context.Context, kind store.Kind, id int64) (*store.Record, error) {
	var r *store.Record
	err := db.read(ctx, fmt.Sprintf("find %s %d", kind, id), func(q querier) (err error) {
		r, err = db.findRecord(ctx, q, kind, id, false)
		return err
	})
	return r, err
}

// FindRecords returns the records matching f, ordered by id.
func (db *DB) FindRecords(ctx context.Context, f store.Filter) ([]*store.Record, error) {
	t, err := db.table(f.Kind)
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
		if err := db.refoldOutside(ctx); err != nil {
			return nil, err
		}
		cond, a := db.searchCondition(f, len(args))
		where, args = append(where, cond), append(args, a...)
	}
	if len(f.IDs) > 0 {
		add("id = ANY($?)", f.IDs)
	}
	if err := db.Registry().CheckFilter(f); err != nil {
		return nil, err
	}
	order := "id"
	switch {
	case f.Sort != "":
		// f.Sort is one of the registry's sort fields (CheckSort): a column with an index on
		// (column COLLATE "C", id), read forwards or backwards. Text compares byte by byte
		// (COLLATE "C"), as SQLite's BINARY does, whatever the database's collation.
		fd, err := db.Registry().Field(f.Kind, f.Sort)
		if err != nil {
			return nil, err
		}
		col := sortColumn(fd)
		cmpOp, dir := ">", ""
		if f.Desc {
			cmpOp, dir = "<", " DESC"
		}
		order = col + dir + ", id" + dir
		if f.AfterValue != nil {
			args = append(args, f.AfterValue, f.AfterID)
			where = append(where, fmt.Sprintf("(%s, id) %s ($%d, $%d)", col, cmpOp, len(args)-1, len(args)))
		}
	case f.AfterID > 0:
		add("id > $?", f.AfterID)
	}
	st := db.state()
	sql := "SELECT " + st.selectList(f.Kind) + " FROM " + t
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY " + order
	if f.Limit > 0 {
		sql += " LIMIT " + strconv.Itoa(f.Limit)
	}
	if f.Search != "" {
		args = searchExecMode(args)
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
			r, err := st.scanRecord(f.Kind, rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// CountRecords returns how many records of kind exist.
func (db *DB) CountRecords(ctx context.Context, kind store.Kind) (int, error) {
	t, err := db.table(kind)
	if err != nil {
		return 0, err
	}
	var n int
	err = db.read(ctx, "count "+string(kind)+"s", func(q querier) error {
		return q.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n)
	})
	return n, err
}

// CreateRecord inserts a record at version 1 and returns it. EINVALID for bad values, a
// duplicate value of a unique field (also when a concurrent create took it first: the
// create runs again and names that record) or a ref to a missing record, EFORBIDDEN for
// fields the actor's role may not write, ENOTFOUND for a missing parent in a tree kind,
// EINVALID when the parent sits at the deepest level already.
func (db *DB) CreateRecord(ctx context.Context, kind store.Kind, vals store.Values, opts ...store.CreateOptions) (*store.Record, error) {
	p, err := db.Registry().PlanCreate(ctx, kind, vals, opts)
	if err != nil {
		return nil, err
	}
	st := db.state()
	sql, args, err := db.insertStatement(st, kind, p.ID, p.Values, p.Extra)
	if err != nil {
		return nil, err
	}
	var rec *store.Record
	what := "create " + string(kind)
	err = db.inTx(ctx, what, false, func(tx pgx.Tx) error {
		now := db.txNow()
		if p.Key != "" {
			// As a save: the key's row is inserted first, so a concurrent create with the
			// same key waits on it, then finds it and replays.
			tag, err := tx.Exec(ctx, claimKeySQL, store.ScopeAPI, p.Key, p.Hash, p.Actor.Name,
				store.DefaultCompletedTTL.Microseconds())
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				replay, err := db.takeSaveKey(ctx, tx, p.Key, p.Hash, p.Actor)
				if err != nil {
					return err
				}
				if replay != nil {
					rec, err = db.findRecord(ctx, tx, kind, replay.ID, false)
					return err
				}
			}
		}
		r, err := db.Registry().RunCreate(p, createSteps{parentSteps{ctx, db, tx, kind}, kind, sql, args, now, st})
		if err != nil {
			return err // a constraint race is mapped by mapErr
		}
		rec = r
		if p.Key != "" {
			_, err = tx.Exec(ctx, `UPDATE idempotency SET result = $3 WHERE scope = $1 AND key = $2`,
				store.ScopeAPI, p.Key, store.CreatedResult(r).Encode())
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// parentSteps are the checks of a new tree record's parent inside a write's transaction
// (store.ParentSteps).
type parentSteps struct {
	ctx  context.Context
	db   *DB
	tx   pgx.Tx
	kind store.Kind
}

// LockTree takes the tree lock: the parent's depth and lease are then checked on a tree no
// concurrent move can change before this write commits.
func (s parentSteps) LockTree() error { return s.db.lockTree(s.ctx, s.tx) }

func (s parentSteps) Ancestors(id int64) ([]int64, error) {
	return s.db.placedAncestorsOf(s.ctx, s.tx, s.kind, id)
}

func (s parentSteps) CheckNewChild(parent int64) error {
	return s.db.checkNewChild(s.ctx, s.tx, s.kind, parent)
}

func (s parentSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.ctx, s.tx, s.kind, id, groups, token)
}

// createSteps are a create's reads and writes inside its transaction (store.CreateSteps).
type createSteps struct {
	parentSteps
	kind store.Kind
	sql  string // the INSERT (insertStatement), made before the transaction
	args []any
	now  time.Time
	st   *schemaState // the schema sql was made with
}

func (s createSteps) CheckFreeID(id int64) error { return s.db.checkFreeID(s.ctx, s.tx, s.kind, id) }

func (s createSteps) CheckUnique(field, value string) error {
	return s.db.checkUnique(s.ctx, s.tx, s.kind, 0, field, value)
}

func (s createSteps) RecordExists(kind store.Kind, id int64) (bool, error) {
	return s.db.recordExists(s.ctx, s.tx, kind, id)
}

// recordExists reports whether a record of kind with id exists, and keeps it from being
// deleted until tx ends (FOR KEY SHARE, which a delete's FOR UPDATE waits for): a write that
// refers to it and a delete of it then meet in order, and the loser is told why in the
// store's words (the delete names its referrers, the write the missing record), never by
// the foreign key.
func (db *DB) recordExists(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64) (bool, error) {
	t, err := db.table(kind)
	if err != nil {
		return false, err
	}
	var one int
	err = tx.QueryRow(ctx, "SELECT 1 FROM "+t+" WHERE id = $1 FOR KEY SHARE", id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (s createSteps) Insert(p *store.CreatePlan) (*store.Record, error) {
	ctx, tx := s.ctx, s.tx
	r, err := s.st.scanRecord(s.kind, tx.QueryRow(ctx, s.sql, append(slices.Clone(s.args), int64(1), s.now, p.Actor.Name)...))
	if err != nil {
		return nil, err
	}
	if p.ID != 0 {
		// The identity sequence never hands out an id at or below one given here.
		t, _ := s.db.table(s.kind) // insertStatement checked the kind
		if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, 'id'),
			greatest(nextval(pg_get_serial_sequence($1, 'id')), $2))`, t, p.ID); err != nil {
			return nil, err
		}
	}
	if p.Keep {
		if err := s.db.insertVersion(ctx, tx, r, p.Actor, p.Written, s.now, nil); err != nil {
			return nil, err
		}
	}
	_, err = s.db.insertChange(ctx, tx, store.Change{Event: store.EventCreated, Kind: s.kind, RecordID: r.ID,
		Version: r.Version, Actor: p.Actor.Name, Role: p.Actor.Role, Fields: p.Written, History: p.Keep, At: s.now})
	return r, err
}

// insertStatement returns the INSERT of a record of kind with the values vals (every field)
// and the derived columns extra (store.ExtraColumns), RETURNING the row, and its arguments
// but the last three, which the caller appends: version, updated_at and updated_by. id 0
// lets the sequence choose the id.
func (db *DB) insertStatement(st *schemaState, kind store.Kind, id int64, vals store.Values, extra []store.Column) (string, []any, error) {
	t, err := st.table(kind)
	if err != nil {
		return "", nil, err
	}
	var cols, ph []string
	var args []any
	add := func(col string, v any) {
		args = append(args, v)
		cols, ph = append(cols, col), append(ph, "$"+strconv.Itoa(len(args)))
	}
	if id != 0 {
		add("id", id)
	}
	for _, f := range st.reg.Fields(kind) {
		add(ident(f.Name), arg(f, vals[f.Name]))
	}
	for _, c := range extra {
		add(ident(c.Name), c.Value)
	}
	for i, col := range []string{"version", "updated_at", "updated_by"} {
		cols, ph = append(cols, col), append(ph, "$"+strconv.Itoa(len(args)+i+1))
	}
	return "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(ph, ", ") +
		") RETURNING " + st.selectList(kind), args, nil
}

// UpdateRecord applies a partial, version-checked update in one transaction, in
// store.RunUpdate's sequence with the steps below (updateSteps); a save the request allows
// runs first as one statement of its own (relativeSave). See store.Records for the rules
// and error codes.
func (db *DB) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	p, err := db.Registry().NewUpdateRequest(ctx, kind, id, u)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("save %s %d", kind, id)
	// A batch's saves run in its transaction: the one-statement save is a transaction of its own.
	if p.OneStatement && batchOf(ctx, db) == nil {
		if res, done, err := db.relativeSave(ctx, what, p); done {
			return res, err
		}
	}
	var res *store.UpdateResult
	err = db.inTx(ctx, what, u.IdempotencyKey != "", func(tx pgx.Tx) (err error) {
		res, err = db.Registry().RunUpdate(p, db.updateSteps(ctx, tx, p))
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// LockedUpdate is the system writer's read-modify-write under SELECT ... FOR UPDATE, then
// store.RunUpdate's sequence. See store.Records for the rules and error codes.
func (db *DB) LockedUpdate(ctx context.Context, kind store.Kind, id int64, fn func(*store.Record) (store.Update, error)) (*store.UpdateResult, error) {
	if _, err := store.ActorFrom(ctx); err != nil {
		return nil, err
	}
	if _, err := db.table(kind); err != nil {
		return nil, err
	}
	var res *store.UpdateResult
	keyed := false
	err := db.inTxFlag(ctx, fmt.Sprintf("update %s %d", kind, id), &keyed, func(tx pgx.Tx) error {
		res = nil
		cur, err := db.findRecord(ctx, tx, kind, id, true)
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
		p, err := db.Registry().NewUpdateRequest(ctx, kind, id, u)
		if err != nil {
			return err
		}
		res, err = db.Registry().RunUpdate(p, db.updateSteps(ctx, tx, p))
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// updateSteps are a save's steps inside its transaction (store.UpdateSteps).
//
// The statements travel in two pipelined batches, since round trips, not the server's work,
// are a save's cost: Read sends the key claim, the locking read and a probe for lease rows;
// Write sends the UPDATE, the change row and the key's result. PostgreSQL runs a batch's
// statements one after the other, so the change row is still inserted after the row lock is
// held, and every check PlanUpdate makes is on values read under that lock. Everything else
// (a replay, a lease row, a unique or ref check, a history version) costs its own round
// trips.
type updateSteps struct {
	saveChecks
	st *schemaState // the schema the save's statements are made with
}

func (db *DB) updateSteps(ctx context.Context, tx pgx.Tx, p *store.UpdateRequest) updateSteps {
	return updateSteps{saveChecks{ctx, db, tx, p.Kind, p.ID}, db.state()}
}

// Read claims the key (a row of it that exists is TakeKey's to answer), reads the version
// and the named fields with the row locked (FOR NO KEY UPDATE: what PlanUpdate decides on
// stays true until the commit, and foreign-key checks of children are not blocked), and,
// without a token, probes for lease rows of the written groups: a write that no lease row
// concerns has nothing to check, which spares the check's round trip and row locks.
func (s updateSteps) Read(p *store.UpdateRequest) (store.UpdateRead, error) {
	ctx, db, tx, u := s.ctx, s.db, s.tx, p.Update
	b := &pgx.Batch{}
	if u.IdempotencyKey != "" {
		b.Queue(claimKeySQL, store.ScopeAPI, u.IdempotencyKey, p.Hash, p.Actor.Name, store.DefaultCompletedTTL.Microseconds())
	}
	read, err := db.queueFindFields(b, p.Kind, p.ID, u.FieldNames())
	if err != nil {
		return store.UpdateRead{}, err
	}
	// The store's schema version, after the row lock, which a schema change of the kind's
	// table waits for or makes this wait for (store.UpdateRead.Schema).
	if u.LeaseToken == "" {
		b.Queue(`SELECT EXISTS (SELECT 1 FROM leases WHERE kind = $1 AND record_id = $2 AND grp = ANY($3)), `+schemaVersionSQL,
			string(p.Kind), p.ID, p.Groups)
	} else {
		b.Queue(`SELECT ` + schemaVersionSQL)
	}
	br := tx.SendBatch(ctx, b)
	claimed, claimErr := true, error(nil)
	if u.IdempotencyKey != "" {
		var tag pgconn.CommandTag
		tag, claimErr = br.Exec()
		claimed = claimErr == nil && tag.RowsAffected() == 1
	}
	cur, curErr := read(br.QueryRow())
	leased := true
	var (
		leaseErr error
		schema   *int64
	)
	if u.LeaseToken == "" {
		leaseErr = br.QueryRow().Scan(&leased, &schema)
	} else {
		leaseErr = br.QueryRow().Scan(&schema)
	}
	if err := br.Close(); err != nil && claimErr == nil && curErr == nil && leaseErr == nil {
		return store.UpdateRead{}, err
	}
	if claimErr != nil {
		if pgCode(claimErr) == sqlstateUniqueViolation {
			return store.UpdateRead{}, errRetry
		}
		return store.UpdateRead{}, claimErr
	}
	if store.ErrorCode(curErr) == store.ENOTFOUND {
		cur, curErr = nil, nil
	}
	if curErr != nil {
		return store.UpdateRead{}, curErr
	}
	if leaseErr != nil {
		return store.UpdateRead{}, leaseErr
	}
	out := store.UpdateRead{Current: cur, KeyFree: claimed, Leased: leased}
	if schema != nil {
		out.Schema = *schema
	}
	return out, nil
}

func (s updateSteps) TakeKey(p *store.UpdateRequest) (*store.KeyResult, error) {
	return s.db.takeSaveKey(s.ctx, s.tx, p.Update.IdempotencyKey, p.Hash, p.Actor)
}

func (s updateSteps) Find(id int64) (*store.Record, error) {
	return s.db.findRecord(s.ctx, s.tx, s.kind, id, false)
}

func (s updateSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.ctx, s.tx, s.kind, id, groups, token)
}

func (s updateSteps) Conflict(id, base int64) error {
	return s.db.conflict(s.ctx, s.tx, s.kind, id, base)
}

// Write sends the UPDATE, the change row and the key's result in one batch; with a history
// version, the UPDATE goes first on its own, since the version is made from the record it
// returns.
func (s updateSteps) Write(p *store.UpdateRequest, cur *store.Record, plan *store.SavePlan, done store.KeyResult) (*store.UpdateResult, error) {
	ctx, db, tx, st, kind, id, actor := s.ctx, s.db, s.tx, s.st, s.kind, s.id, p.Actor
	t, err := st.table(kind)
	if err != nil {
		return nil, err
	}
	now := db.txNow()
	b := &pgx.Batch{}
	// The row is locked since the read, so the version condition cannot fail; it stays
	// as the guard that nothing changed between the read and this write.
	sql, args := updateStatement(st, t, kind, cur, plan, now, actor.Name)
	fields := plan.FieldNames()
	res := &store.UpdateResult{Version: cur.Version + 1}
	if p.Keep {
		// The history version is made from the record the UPDATE returns.
		if res.Record, err = st.scanRecord(kind, tx.QueryRow(ctx, sql, args...)); err != nil {
			return nil, db.missedUpdate(ctx, tx, kind, id, cur.Version, err)
		}
		if err := db.insertVersion(ctx, tx, res.Record, actor, fields, now, st.reg.PreImage(kind, store.Update{Set: plan.Set}, cur, p.Keep)); err != nil {
			return nil, err
		}
	} else {
		b.Queue(sql, args...)
	}
	var deltas map[string]int64
	if len(plan.Add) > 0 {
		deltas = plan.Add
	}
	// The version is known before the UPDATE answers: the row is locked at cur.Version.
	b.Queue(insertChangeSQL, changeArgs(store.Change{Event: store.EventSaved, Kind: kind, RecordID: id, Version: cur.Version + 1,
		Actor: actor.Name, Role: actor.Role, Fields: fields, Deltas: deltas, History: p.Keep, At: now})...)
	if p.Update.IdempotencyKey != "" {
		b.Queue(completeKeySQL, store.ScopeAPI, p.Update.IdempotencyKey, done.Encode())
	}
	br := tx.SendBatch(ctx, b)
	var upErr error
	if !p.Keep {
		res.Record, upErr = st.scanRecord(kind, br.QueryRow())
	}
	for range b.Len() - 1 {
		if upErr != nil {
			break
		}
		_, upErr = br.Exec()
	}
	closeErr := br.Close()
	if errors.Is(upErr, pgx.ErrNoRows) {
		// Cannot happen under the row lock; the change row queued behind it would be wrong.
		return nil, fmt.Errorf("save %s %d: the row locked at version %d was not updated", kind, id, cur.Version)
	}
	if upErr != nil {
		return nil, upErr
	}
	if closeErr != nil {
		return nil, closeErr
	}
	if res.Record.Version != res.Version {
		return nil, fmt.Errorf("save %s %d: wrote version %d, want %d", kind, id, res.Record.Version, res.Version)
	}
	return res, nil
}

// completeKeySQL writes a save's result to the key it claimed: scope, key, result.
const completeKeySQL = `UPDATE idempotency SET result = $3 WHERE scope = $1 AND key = $2`

func (s updateSteps) CompleteKey(p *store.UpdateRequest, done store.KeyResult) error {
	_, err := s.tx.Exec(s.ctx, completeKeySQL, store.ScopeAPI, p.Update.IdempotencyKey, done.Encode())
	return err
}

// relativeSave is the one-statement form of the commonest save, which
// store.UpdateRequest.OneStatement allows: relative changes only, without a lease token or
// a history version: the step store.RelativeSaver describes, run here before the save's
// transaction (and store.RunUpdate after it, when it wrote nothing), since it is a
// transaction of its own. One statement (a CTE) updates the record,
// inserts its change row and its idempotency key's row, as an implicit transaction, so the
// row lock is held for no round trip to the client, as a plain UPDATE's is. The decisions
// store.RunUpdate makes in Go are conditions of that statement here: the UPDATE matches nothing when
// a counter would leave its range (store.CheckAdd's bounds; PostgreSQL evaluates them again
// on the newest row version when it had to wait for the row), the change row and the key's
// row are made from what the UPDATE returned, so they exist only when it wrote, and the
// change row's INSERT reads the written row through no_lease_row() (migration 0010), which
// raises when a lease row concerns the write (any lease row of a written group, live or
// not). That function runs once the UPDATE holds the row lock, with a snapshot of its own, as
// the sequence's lease probe runs after its locking read. The change row takes its id straight
// from the sequence, after the row lock (see insertChange) and after hold_change_log() made
// the transaction one of the change log's writers that readers wait for (what
// next_change_id() does, see feed.go), without the cost of a SECURITY DEFINER call; a role
// without the right to use the sequence gets an error here, and store.RunUpdate saves.
//
// done is false when the save was not eligible, or wrote nothing and nothing was committed
// (no row matched, the key was taken, a lease row, any server error): store.RunUpdate then decides
// and explains, in a transaction of its own. done with an error means the connection was
// lost while the outcome was open (only for a save without a key: a keyed one is rerun and
// replays), or the context ended.
func (db *DB) relativeSave(ctx context.Context, what string, p *store.UpdateRequest) (res *store.UpdateResult, done bool, err error) {
	kind, id, u, actor := p.Kind, p.ID, p.Update, p.Actor
	if _, err := db.table(kind); err != nil {
		return nil, false, nil
	}
	names := sortedNames(u.Add)
	now := db.txNow()
	// The arguments, in the order of relativeSQL's placeholders.
	args := []any{id}
	for _, n := range names {
		d := u.Add[n]
		f, err := db.Registry().Field(kind, n)
		if err != nil {
			return nil, false, nil // the sequence answers it
		}
		if d > 0 {
			args = append(args, d, int64(math.MaxInt64)-d)
		} else {
			args = append(args, d, int64(math.MinInt64)-d)
		}
		if f.Type == store.TypeMoney {
			args = append(args, -d)
		}
	}
	args = append(args, now, actor.Name)
	plan := store.SavePlan{Add: u.Add}
	ca := changeArgs(store.Change{Event: store.EventSaved, Kind: kind, RecordID: id, Actor: actor.Name, Role: actor.Role,
		Fields: plan.FieldNames(), Deltas: u.Add, At: now})
	args = append(args, ca[:2]...) // event, kind
	args = append(args, ca[4:]...) // actor … at; record_id and version come from the UPDATE
	args = append(args, p.Groups)
	keyed := u.IdempotencyKey != ""
	if keyed {
		// The key's stored result is store's encoding with the written version put in.
		enc := store.KeyResult{Kind: kind, ID: id}.Encode()
		pre, post, ok := bytes.Cut(enc, []byte(`"version":0`))
		if !ok || bytes.Contains(post, []byte(`"version":0`)) {
			return nil, false, nil
		}
		args = append(args, store.ScopeAPI, u.IdempotencyKey, p.Hash, actor.Name,
			store.DefaultCompletedTTL.Microseconds(), string(pre)+`"version":`, string(post))
	}
	st := db.state()
	args = append(args, st.reg.Version())
	sql := db.relativeSQL(st, kind, names, u.Add, keyed)
	// One statement without BEGIN or COMMIT is a transaction of its own, committed before
	// the server's answer to it: an error here, the commit's included, is Scan's.
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, false, nil
	}
	defer conn.Release()
	r, err := st.scanRecord(kind, conn.QueryRow(ctx, sql, args...))
	switch {
	case err == nil:
		db.oneStatementSaves.Add(1)
		db.committed()
		return &store.UpdateResult{Record: r, Version: r.Version}, true, nil
	case err != nil && ctx.Err() != nil:
		return nil, true, db.mapErr(what, ctx.Err())
	case err != nil && isConnErr(err) && u.IdempotencyKey == "":
		// Everything was sent at once: the server may have run it all and committed.
		return nil, true, db.errLostDuringSave(what, err)
	}
	return nil, false, nil
}

// relativeSQL is relativeSave's statement for a save of the counters names (sorted) of
// kind, with a key or without, its placeholders in the order of relativeSave's arguments.
// The text depends only on that shape (and each counter's direction), so it is made once
// per shape and kept: pgx finds its prepared statement by the text.
func (db *DB) relativeSQL(st *schemaState, kind store.Kind, names []string, add map[string]int64, keyed bool) string {
	var shape strings.Builder
	shape.WriteString(string(kind))
	for _, n := range names {
		shape.WriteByte(' ')
		shape.WriteString(n)
		if add[n] > 0 {
			shape.WriteByte('+')
		} else {
			shape.WriteByte('-')
		}
	}
	if keyed {
		shape.WriteString(" keyed")
	}
	if sql, ok := st.relativeSQLs.Load(shape.String()); ok {
		return sql.(string)
	}
	t, _ := st.table(kind)
	n := 1 // $1 is the id
	next := func() string {
		n++
		return "$" + strconv.Itoa(n)
	}
	var sets, conds []string
	for _, name := range names {
		c := ident(name)
		sets = append(sets, c+" = "+c+" + "+next())
		if add[name] > 0 {
			conds = append(conds, c+" <= "+next())
		} else {
			conds = append(conds, c+" >= "+next())
		}
		if f, _ := st.reg.Field(kind, name); f != nil && f.Type == store.TypeMoney {
			conds = append(conds, c+" >= "+next())
		}
	}
	sets = append(sets, "version = version + 1", "updated_at = "+next(), "updated_by = "+next())
	// An INSERT … SELECT does not type its parameters from the columns, so each is cast.
	var ph []string
	for i, typ := range []string{"text", "text", "", "", "text", "text", "text[]", "jsonb", "boolean", "text", "bigint", "timestamptz"} {
		switch i {
		case 2:
			ph = append(ph, "u.id")
		case 3:
			ph = append(ph, "u.version") // the version the UPDATE wrote
		default:
			ph = append(ph, next()+"::"+typ)
		}
	}
	// The store's schema is the one the save was checked against (its placeholder, the
	// last, is filled in below); else the sequence checks the save against the store's.
	conds = append(conds, schemaVersionSQL+" = "+schemaMark)
	sql := "WITH u AS (UPDATE " + t + " SET " + strings.Join(sets, ", ") + " WHERE id = $1 AND " + strings.Join(conds, " AND ") +
		" RETURNING " + st.selectList(kind) + "), c AS (INSERT INTO changes (id, event, kind, record_id, version, actor, role, fields, deltas, history, grp, fence, at) SELECT nextval('changes_id_seq'), " +
		strings.Join(ph, ", ") + " FROM u WHERE hold_change_log() AND no_lease_row(" + ph[1] + ", u.id, " + next() + "::text[]))"
	if keyed {
		sql += `, k AS (INSERT INTO idempotency (scope, key, status, request_hash, owner, created_at, expires_at, result)
			SELECT ` + next() + "::text, " + next() + "::text, 'COMPLETED', " +
			next() + "::text, " + next() + "::text, clock_timestamp(), clock_timestamp() + " +
			next() + "::bigint * interval '1 microsecond', convert_to(" +
			next() + "::text || u.version || " + next() + "::text, 'UTF8') FROM u)"
	}
	sql += " SELECT " + st.selectList(kind) + " FROM u"
	sql = strings.Replace(sql, schemaMark, next()+"::bigint", 1)
	st.relativeSQLs.Store(shape.String(), sql)
	return sql
}

// missedUpdate explains an UPDATE of a save that failed: no row matched (a conflict, or the
// record is gone), or the error itself (constraint and range errors are mapped by mapErr).
func (db *DB) missedUpdate(ctx context.Context, tx pgx.Tx, kind store.Kind, id, base int64, err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return db.conflict(ctx, tx, kind, id, base)
	}
	return err
}

// queueFindFields queues the read of the version and the named fields of a record, locking
// its row FOR NO KEY UPDATE until the transaction ends: what store's PlanUpdate needs,
// without the rest of the row (a body may be megabytes). The returned function reads its
// answer; ENOTFOUND if there is none.
func (db *DB) queueFindFields(b *pgx.Batch, kind store.Kind, id int64, names []string) (func(pgx.Row) (*store.Record, error), error) {
	t, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	cols := []string{"version"}
	fields := make([]*store.Field, len(names))
	for i, name := range names {
		if fields[i], err = db.Registry().Field(kind, name); err != nil {
			return nil, err
		}
		cols = append(cols, ident(name))
	}
	b.Queue("SELECT "+strings.Join(cols, ", ")+" FROM "+t+" WHERE id = $1 FOR NO KEY UPDATE", id)
	return func(row pgx.Row) (*store.Record, error) {
		r := &store.Record{Kind: kind, ID: id, Fields: make(store.Values, len(names))}
		dest := []any{&r.Version}
		vals := make([]any, len(names))
		for i, f := range fields {
			var err error
			if vals[i], err = scanTarget(f); err != nil {
				return nil, err
			}
			dest = append(dest, vals[i])
		}
		err := row.Scan(dest...)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, store.Errorf(store.ENOTFOUND, "%s %d not found", kind, id)
		}
		if err != nil {
			return nil, err
		}
		for i, name := range names {
			r.Fields[name] = scannedValue(vals[i])
		}
		return r, nil
	}, nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// conflict builds the answer to a version-checked UPDATE that matched no row: ENOTFOUND, or
// a *ConflictError with the current record and the writes since the base version.
func (db *DB) conflict(ctx context.Context, tx pgx.Tx, kind store.Kind, id, base int64) error {
	cur, err := db.findRecord(ctx, tx, kind, id, false)
	if err != nil {
		return err
	}
	since, err := db.changesSince(ctx, tx, kind, id, base)
	if err != nil {
		return err
	}
	return &store.ConflictError{Kind: kind, ID: id, BaseVersion: base, Current: cur, Since: since}
}

// claimKeySQL claims a save's idempotency key inside the save's transaction (scope api); a
// save queues it first. The key row is inserted first: a concurrent save with the same key
// blocks on the primary key until the first one ends, then (READ COMMITTED: each statement
// takes a new snapshot) sees its committed row and replays it, or inserts the key itself if
// the first one rolled back. When a row is there already, takeSaveKey decides.
const claimKeySQL = `INSERT INTO idempotency (scope, key, status, request_hash, owner, created_at, expires_at)
		VALUES ($1, $2, 'COMPLETED', $3, $4, clock_timestamp(), clock_timestamp() + $5 * interval '1 microsecond')
		ON CONFLICT (scope, key) DO NOTHING`

// takeSaveKey handles a save's key that claimKeySQL found taken. It returns the stored
// result when the key was already applied with the same request (hash), however long ago;
// an ended PENDING key, or a FAILED one, is taken over by this save (store.CheckSaveKey).
func (db *DB) takeSaveKey(ctx context.Context, tx pgx.Tx, key, hash string, actor store.Actor) (*store.KeyResult, error) {
	var (
		k       store.KeyRecord
		status  string
		expired bool
	)
	err := tx.QueryRow(ctx, `SELECT status, request_hash, result, owner, created_at, expires_at <= clock_timestamp() FROM idempotency
		WHERE scope = $1 AND key = $2 FOR UPDATE`, store.ScopeAPI, key).Scan(&status, &k.RequestHash, &k.Result, &k.Owner, &k.CreatedAt, &expired)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errRetry // purged under us; start again
	}
	if err != nil {
		return nil, err
	}
	k.Scope, k.Key, k.Status = store.ScopeAPI, key, store.KeyStatus(status)
	replay, err := store.CheckSaveKey(k, !expired, hash)
	if err != nil {
		return nil, err
	}
	if replay {
		res, err := store.ReplayOf(k)
		if err != nil {
			return nil, err
		}
		return &res, nil
	}
	// An ended PENDING or a FAILED key: this save takes it.
	_, err = tx.Exec(ctx, `UPDATE idempotency SET status = 'COMPLETED', request_hash = $3, result = NULL, owner = $4,
		created_at = clock_timestamp(), expires_at = clock_timestamp() + $5 * interval '1 microsecond'
		WHERE scope = $1 AND key = $2`,
		store.ScopeAPI, key, hash, actor.Name, store.DefaultCompletedTTL.Microseconds())
	return nil, err
}

// checkFreeID refuses a create with an id a record of kind already has; the primary key
// stays the guarantee against a concurrent insert.
func (db *DB) checkFreeID(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64) error {
	t, err := db.table(kind)
	if err != nil {
		return err
	}
	var one int
	err = tx.QueryRow(ctx, "SELECT 1 FROM "+t+" WHERE id = $1", id).Scan(&one)
	switch {
	case err == nil:
		return store.IDTakenError(kind, id)
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	}
	return err
}

// checkUnique refuses a value of kind's unique field whose key (store.SKUKey) another record
// (not id) has, with a message naming that record. The unique index on the key column stays
// the guarantee against a concurrent insert; this only explains (as the SQLite store).
// Keys that other programs' writes left stale are written first (refoldKind); the same
// query tells whether there are any, so a check costs one round trip when there are none.
func (db *DB) checkUnique(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64, field, value string) error {
	t, err := db.table(kind)
	if err != nil {
		return err
	}
	if _, err := db.Registry().Field(kind, field); err != nil {
		return err
	}
	q := "SELECT EXISTS (SELECT 1 FROM outside_refold WHERE kind = $3), o.id, o.v FROM (SELECT 1) one LEFT JOIN (SELECT id, " +
		ident(field) + " AS v FROM " + t + " WHERE " + ident(store.UniqueKeyColumn(field)) + " = $1 AND id <> $2 LIMIT 1) o ON true"
	for refolded := false; ; refolded = true {
		var (
			queued     bool
			other      *int64
			otherValue *string
		)
		if err := tx.QueryRow(ctx, q, store.SKUKey(value), id, string(kind)).Scan(&queued, &other, &otherValue); err != nil {
			return err
		}
		if queued && !refolded {
			if err := db.refoldKind(ctx, tx, kind); err != nil {
				return err
			}
			continue
		}
		if other != nil && otherValue != nil {
			return store.DuplicateKeyError(kind, field, value, *other, *otherValue)
		}
		return nil
	}
}

// afterMigration runs the part of the migration named name that SQL cannot do, in the
// migration's transaction. It goes by the name, not the number, so that renumbering the
// migrations keeps it attached to its script.
func afterMigration(ctx context.Context, tx pgx.Tx, name string) error {
	switch {
	case strings.HasSuffix(name, "_sku_key.sql"):
		return fillSKUKeys(ctx, tx)
	case strings.HasSuffix(name, searchGoneMigration):
		return searchGone(ctx, tx)
	case store.AddsFoldedColumns(name):
		return afterSearchMigration(ctx, tx, name)
	}
	return nil
}

// fillSKUKeys gives every product its store.SKUKey (migration sku_key). Products whose SKUs
// already collide by key keep them: the oldest keeps the plain key, each later one gets the
// key joined to its id by store.SKUKeySeparator (no typed sku has such a key), so the database
// opens, nothing is renamed behind anyone's back, and no new sku can join the collision.
func fillSKUKeys(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, "SELECT id, sku FROM products ORDER BY id")
	if err != nil {
		return err
	}
	var (
		ids  []int64
		keys []string
	)
	seen := map[string]bool{}
	for rows.Next() {
		var (
			id  int64
			sku string
		)
		if err := rows.Scan(&id, &sku); err != nil {
			rows.Close()
			return err
		}
		key := store.SKUKey(sku)
		if seen[key] {
			key += store.SKUKeySeparator + strconv.FormatInt(id, 10)
		}
		seen[key] = true
		ids, keys = append(ids, id), append(keys, key)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// One statement for all rows: the keys travel as two parallel arrays.
	_, err = tx.Exec(ctx, `UPDATE products p SET sku_key = k.key
		FROM unnest($1::bigint[], $2::text[]) AS k(id, key) WHERE p.id = k.id`, ids, keys)
	return err
}

// saveChecks are a save's reads of other records inside its transaction (store.SaveChecks).
type saveChecks struct {
	ctx  context.Context
	db   *DB
	tx   pgx.Tx
	kind store.Kind
	id   int64 // the record saved, whose own value of a unique field is no clash
}

func (s saveChecks) Ancestors(id int64) ([]int64, error) {
	return s.db.placedAncestorsOf(s.ctx, s.tx, s.kind, id)
}

func (s saveChecks) CheckUnique(field, value string) error {
	return s.db.checkUnique(s.ctx, s.tx, s.kind, s.id, field, value)
}

func (s saveChecks) RecordExists(kind store.Kind, id int64) (bool, error) {
	return s.db.recordExists(s.ctx, s.tx, kind, id)
}
