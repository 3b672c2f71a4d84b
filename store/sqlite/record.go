package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// querier is what reads need: the read pool or a write transaction.
type querier interface {
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

func (db *DB) findRecord(ctx context.Context, q querier, kind store.Kind, id int64) (*store.Record, error) {
	t, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	reg := db.Registry()
	row := q.QueryRowContext(ctx, "SELECT "+db.selectList(reg, kind)+" FROM "+t+" WHERE id = ?", id)
	r, err := db.scanRecord(reg, kind, row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.ENOTFOUND, "%s %d not found", kind, id)
	}
	return r, err
}

// FindRecords returns the records matching f, ordered by id or by f.Sort.
func (db *DB) FindRecords(ctx context.Context, f store.Filter) ([]*store.Record, error) {
	if f.Search != "" {
		if err := db.refoldOutside(ctx); err != nil {
			return nil, err
		}
	}
	reg := db.Registry()
	q, args, err := db.findQuery(reg, f)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr("find "+string(f.Kind)+"s", err)
	}
	defer rows.Close()
	var out []*store.Record
	for rows.Next() {
		r, err := db.scanRecord(reg, f.Kind, rows)
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

// findQuery returns the query FindRecords runs for f, and its arguments.
func (db *DB) findQuery(reg *store.Registry, f store.Filter) (string, []any, error) {
	t, err := db.table(f.Kind)
	if err != nil {
		return "", nil, err
	}
	var (
		where []string
		args  []any
	)
	if f.Search != "" {
		cond, a, err := db.searchCondition(f)
		if err != nil {
			return "", nil, err
		}
		where, args = append(where, cond), append(args, a...)
	}
	if len(f.IDs) > 0 {
		where = append(where, "id IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(f.IDs)), ", ")+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	if err := db.Registry().CheckFilter(f); err != nil {
		return "", nil, err
	}
	order := "id"
	switch {
	case f.Sort != "":
		// f.Sort is one of the registry's sort fields (CheckSort): a column with an index on
		// (column, id), read forwards or backwards (sku's is its UNIQUE constraint's, which
		// holds id as every index holds the rowid). Text compares byte by byte (BINARY).
		// TestSort_ReadsAnIndex checks SQLite's plan of each.
		cmpOp, dir := ">", ""
		if f.Desc {
			cmpOp, dir = "<", " DESC"
		}
		order = quoteIdent(f.Sort) + dir + ", id" + dir
		if f.AfterValue != nil {
			where = append(where, "("+quoteIdent(f.Sort)+", id) "+cmpOp+" (?, ?)")
			args = append(args, f.AfterValue, f.AfterID)
		}
	case f.AfterID > 0:
		where = append(where, "id > ?")
		args = append(args, f.AfterID)
	}
	q := "SELECT " + db.selectList(reg, f.Kind) + " FROM " + t
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY " + order
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return q, args, nil
}

// CountRecords returns how many records of kind exist.
func (db *DB) CountRecords(ctx context.Context, kind store.Kind) (int, error) {
	t, err := db.table(kind)
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
// version 1 (unless inside WithoutHistory); every create adds a "created" change. In a
// working copy, EINVALID for what store.CheckCopyCreate refuses.
func (db *DB) CreateRecord(ctx context.Context, kind store.Kind, vals store.Values, opts ...store.CreateOptions) (*store.Record, error) {
	p, err := db.Registry().PlanCreate(ctx, kind, vals, opts)
	if err != nil {
		return nil, err
	}
	reg := db.Registry()
	q, args, folds, err := db.insertStatement(reg, kind, p.ID, p.Values, p.Extra)
	if err != nil {
		return nil, err
	}

	var rec *store.Record
	if batchOf(ctx, db) != nil {
		ctx = context.WithValue(ctx, createKey{}, true) // its folds may wait for the batch's end
	}
	err = db.inTx(ctx, "create "+string(kind), func(tx *tx) error {
		if err := db.checkCopyCreateIn(ctx, tx, kind, p.ID); err != nil {
			return err
		}
		if p.Key != "" {
			replay, err := db.checkUpdateKey(ctx, tx, p.Key, p.Hash)
			if err != nil {
				return err
			}
			if replay != nil {
				rec, err = db.findRecord(ctx, tx, kind, replay.ID)
				return err
			}
		}
		var err error
		if rec, err = db.Registry().RunCreate(p, createSteps{parentSteps{ctx, db, tx, kind}, kind, q, args, folds, reg}); err != nil {
			return err
		}
		if p.Key != "" {
			return db.completeUpdateKey(ctx, tx, p.Key, p.Hash, store.CreatedResult(rec), p.Actor)
		}
		return nil
	})
	if err != nil {
		return nil, mapErr("create "+string(kind), err)
	}
	return rec, nil
}

// parentSteps are the checks of a new document's parent inside a write's transaction
// (store.ParentSteps). The transaction holds SQLite's one writer lock, so the tree needs no
// lock of its own.
type parentSteps struct {
	ctx  context.Context
	db   *DB
	tx   *tx
	kind store.Kind
}

func (s parentSteps) LockTree() error { return nil }

func (s parentSteps) Ancestors(id int64) ([]int64, error) {
	return s.db.ancestorsOf(s.ctx, s.tx, s.kind, id)
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
	kind  store.Kind
	q     string // the INSERT (insertStatement), made before the transaction
	args  []any
	folds map[string]string
	reg   *store.Registry // the schema q was made with
}

func (s createSteps) CheckFreeID(id int64) error { return s.db.checkFreeID(s.ctx, s.tx, s.kind, id) }

func (s createSteps) CheckUnique(field, value string) error {
	return s.db.checkUnique(s.ctx, s.tx, s.kind, 0, field, value)
}

func (s createSteps) RecordExists(kind store.Kind, id int64) (bool, error) {
	return s.db.recordExists(s.ctx, s.tx, kind, id)
}

// recordExists reports whether a record of kind with id exists.
func (db *DB) recordExists(ctx context.Context, tx *tx, kind store.Kind, id int64) (bool, error) {
	t, err := db.table(kind)
	if err != nil {
		return false, err
	}
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM "+t+" WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (s createSteps) Insert(p *store.CreatePlan) (*store.Record, error) {
	a := append(slices.Clone(s.args), int64(1), formatTime(s.tx.now), p.Actor.Name)
	rec, err := s.db.scanRecord(s.reg, s.kind, s.tx.QueryRowContext(s.ctx, s.q, a...))
	if err != nil {
		return nil, err
	}
	if b := s.tx.batch; b != nil {
		b.folds = append(b.folds, pendingFolds{s.reg, s.kind, rec.ID, s.folds})
	} else if err := writeFolds(s.ctx, s.tx, s.reg, s.kind, rec.ID, s.folds); err != nil {
		return nil, err
	}
	return rec, s.db.logWrite(s.ctx, s.tx, rec, store.EventCreated, p.Actor, p.Keep, p.Written, nil, nil)
}

// checkFreeID refuses a create with an id a record of kind already has.
func (db *DB) checkFreeID(ctx context.Context, tx *tx, kind store.Kind, id int64) error {
	t, err := db.table(kind)
	if err != nil {
		return err
	}
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM "+t+" WHERE id = ?", id).Scan(&one)
	switch {
	case err == nil:
		return store.IDTakenError(kind, id)
	case errors.Is(err, sql.ErrNoRows):
		return nil
	}
	return err
}

// insertStatement returns the INSERT of a record of kind with the values vals (every field)
// and the derived columns extra (store.ExtraColumns), RETURNING the row, and its arguments
// but the last three, which the caller appends: version, updated_at and updated_by. id 0
// lets SQLite choose the id. The folded columns among extra are not the row's: they are
// returned as folds, which the caller writes with writeFolds once the row has its id. It is
// made outside the transaction where it can be.
func (db *DB) insertStatement(reg *store.Registry, kind store.Kind, id int64, vals store.Values, extra []store.Column) (string, []any, map[string]string, error) {
	t, err := db.table(kind)
	if err != nil {
		return "", nil, nil, err
	}
	args, folds, err := insertValues(reg, kind, id, vals, extra)
	if err != nil {
		return "", nil, nil, err
	}
	fields := reg.Fields(kind)
	cols := make([]string, 0, len(args)+3)
	if id != 0 {
		cols = append(cols, "id")
	}
	for _, f := range fields {
		cols = append(cols, quoteIdent(f.Name))
	}
	for _, c := range extra {
		if !isFoldColumn(reg, kind, c.Name) {
			cols = append(cols, quoteIdent(c.Name))
		}
	}
	cols = append(cols, "version", "updated_at", "updated_by")
	q := "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") VALUES (" +
		strings.Repeat("?, ", len(cols)-1) + "?) RETURNING " + db.selectList(reg, kind)
	return q, args, folds, nil
}

// insertValues returns the arguments of insertStatement's INSERT and the folds, without
// the statement: a bulk create makes the statement once and the arguments per record.
func insertValues(reg *store.Registry, kind store.Kind, id int64, vals store.Values, extra []store.Column) ([]any, map[string]string, error) {
	extra, folds := splitFolds(reg, kind, extra)
	fields := reg.Fields(kind)
	args := make([]any, 0, len(fields)+len(extra)+4)
	if id != 0 {
		args = append(args, id)
	}
	for _, f := range fields {
		v, err := encodeColumn(f, vals[f.Name])
		if err != nil {
			return nil, nil, err
		}
		args = append(args, v)
	}
	for _, c := range extra {
		args = append(args, c.Value)
	}
	return args, folds, nil
}

// checkUnique refuses a value of kind's unique field whose key (store.SKUKey) another record
// (not id) has, with a message naming that record. The unique index on the key column is the
// guarantee; writers are serialized (BEGIN IMMEDIATE), so this check sees every earlier one.
// Keys that other programs' writes left stale are written first (refoldKind); the same
// query tells whether there are any.
func (db *DB) checkUnique(ctx context.Context, tx *tx, kind store.Kind, id int64, field, value string) error {
	t, err := db.table(kind)
	if err != nil {
		return err
	}
	if _, err := db.Registry().Field(kind, field); err != nil {
		return err
	}
	q := "SELECT EXISTS (SELECT 1 FROM outside_refold WHERE kind = ?), o.id, o.v FROM (SELECT 1) LEFT JOIN (SELECT id, " +
		quoteIdent(field) + " AS v FROM " + t + " WHERE " + quoteIdent(store.UniqueKeyColumn(field)) + " = ? AND id <> ? LIMIT 1) o ON 1"
	for refolded := false; ; refolded = true {
		var (
			queued     bool
			other      sql.NullInt64
			otherValue sql.NullString
		)
		if err := tx.QueryRowContext(ctx, q, string(kind), store.SKUKey(value), id).Scan(&queued, &other, &otherValue); err != nil {
			return err
		}
		if queued && !refolded {
			if err := db.refoldKind(ctx, tx, kind); err != nil {
				return err
			}
			continue
		}
		if other.Valid {
			return store.DuplicateKeyError(kind, field, value, other.Int64, otherValue.String)
		}
		return nil
	}
}

// UpdateRecord applies a partial, version-checked update in one transaction, in
// store.RunUpdate's sequence with the steps below (updateSteps); a relative save runs as
// one UPDATE first where the request allows it (relativeSave).
func (db *DB) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	p, err := db.Registry().NewUpdateRequest(ctx, kind, id, u)
	if err != nil {
		return nil, err
	}
	if wc, err := db.copyWriter(ctx, p.Actor); err != nil {
		return nil, err
	} else if wc != nil {
		if err := db.Registry().CheckCopySave(wc, kind, p.Actor, u); err != nil {
			return nil, err
		}
	}
	var rel *relativeSave
	if p.OneStatement {
		rel = db.newRelativeSave(p)
	}
	var res *store.UpdateResult
	what := fmt.Sprintf("update %s %d", kind, id)
	err = db.inTx(ctx, what, func(tx *tx) (err error) {
		res, err = db.Registry().RunUpdate(p, db.updateSteps(ctx, tx, p, rel))
		return err
	})
	if err != nil {
		return nil, mapErr(what, err)
	}
	if res.Record == nil {
		// The relative save's, whose record is decoded after the commit.
		if res.Record, err = rel.record(db); err != nil {
			// Committed: a caller that tried again would apply the change twice.
			return nil, mapErr(what, fmt.Errorf("saved as version %d, but the record it returned cannot be read: %w", res.Version, err))
		}
	}
	return res, nil
}

// relativeSave is the short form of the commonest save: relative changes only, without a
// lease token or a history version (store.UpdateRequest.OneStatement), in the caller's
// write transaction: the step store.RunUpdate runs first (updateSteps.SaveRelative). The
// decisions the sequence makes from what it reads are conditions of one UPDATE here, given
// the database clock: it matches nothing when a live lease on a written group exists (then
// the sequence checks it), when the key has a row (the sequence replays or refuses), or when
// a counter would leave its range (store.CheckAdd's bounds, so the sequence explains). Then the
// change row and the key's row, made from what the UPDATE returned. So a save costs three
// statements instead of four, and no read of the row before the write. Under SQLite's
// write lock nothing changes between the conditions and the inserts. The statements'
// arguments (driver values: the statements run below database/sql, rawstmt.go) are made
// before the transaction (newRelativeSave), so that a writer's Go work is not done while
// it holds the write lock; the transaction fills in only what it alone knows. For the same
// reason the record is decoded from the row the UPDATE returned after the commit, by the
// caller (record), not under the lock: the lock needs only the version.
type relativeSave struct {
	kind   store.Kind
	id     int64
	u      store.Update
	actor  store.Actor
	names  []string // the written fields, sorted
	query  string   // the UPDATE
	update []driver.NamedValue
	at     int                 // the index in update of updated_at, which the transaction's time fills in
	clock  int                 // the index in update of the clock the lease check compares with
	cols   int                 // the columns the UPDATE returns
	change []driver.NamedValue // insertChange's, but the version and the time
	key    []driver.NamedValue // completeKey's, but the result and the times; nil without a key
	reg    *store.Registry     // the schema the UPDATE's select list is of
	result []byte              // the key's result (store.KeyResult's JSON) up to the version
	row    rawRow              // what the last run's UPDATE returned; nil when it matched nothing
}

// The arguments of insertChange and completeKey that a relative save fills in the
// transaction.
const (
	changeVersion = 3
	changeAt      = 9
	keyResult     = 3
	keyCreated    = 5
	keyExpires    = 6
)

// namedValues returns args as the driver's positional arguments.
func namedValues(args ...any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

// newRelativeSave returns the relative save of p (which p.OneStatement allows), or nil when
// it cannot be made (RunUpdate's sequence answers it then).
func (db *DB) newRelativeSave(p *store.UpdateRequest) *relativeSave {
	kind, id, u, actor := p.Kind, p.ID, p.Update, p.Actor
	t, err := db.table(kind)
	if err != nil {
		return nil
	}
	s := &relativeSave{kind: kind, id: id, u: u, actor: actor, names: sortedKeys(u.Add), reg: db.Registry()}
	groups := p.Groups
	keyed := u.IdempotencyKey != ""
	args := make([]any, 0, 2*len(s.names)+len(groups)+8)
	for _, n := range s.names {
		args = append(args, u.Add[n])
	}
	s.at = len(args)
	args = append(args, "", actor.Name, id)
	for _, n := range s.names {
		d := u.Add[n]
		f, err := db.Registry().Field(kind, n)
		if err != nil {
			return nil
		}
		if d > 0 {
			args = append(args, int64(math.MaxInt64)-d)
		} else {
			args = append(args, int64(math.MinInt64)-d)
		}
		if f.Type == store.TypeMoney {
			args = append(args, -d)
		}
	}
	args = append(args, string(kind), id)
	s.clock = len(args)
	args = append(args, "")
	for _, g := range groups {
		args = append(args, g)
	}
	if keyed {
		args = append(args, store.ScopeAPI, u.IdempotencyKey)
	}
	args = append(args, s.reg.Version())
	if keyed {
		s.key = namedValues(store.ScopeAPI, u.IdempotencyKey, p.Hash, nil, actor.Name, "", "")
		s.result = keyResultPrefix(kind, id)
	}
	s.query, s.update = db.relativeQuery(s.reg, kind, t, s.names, u.Add, len(groups), keyed), namedValues(args...)
	s.cols = len(s.reg.Fields(kind)) + 4 // id, the fields, version, updated_at, updated_by
	s.change = namedValues(string(store.EventSaved), string(kind), id, int64(0), actor.Name, string(actor.Role),
		jsonText(s.names), jsonText(u.Add), false, "")
	return s
}

// relativeQuery returns the UPDATE of a relative save of the fields names (sorted) of kind,
// in table t, with deltas add (only their signs shape it), groups written groups and a key
// or not: the statement newRelativeSave's arguments fill. The text depends on nothing
// else, so it is made once per shape (relQueries).
func (db *DB) relativeQuery(reg *store.Registry, kind store.Kind, t string, names []string, add map[string]int64, groups int, keyed bool) string {
	var k strings.Builder
	k.WriteString(string(kind))
	for _, n := range names {
		k.WriteByte(0)
		k.WriteString(n)
		if add[n] > 0 {
			k.WriteByte('+')
		}
	}
	k.WriteByte(0)
	k.WriteString(strconv.Itoa(groups))
	if keyed {
		k.WriteString("k")
	}
	// The select list is of one schema (a schema change swaps it).
	key := relShape{reg, k.String()}
	if q, ok := db.relQueries.Load(key); ok {
		return q.(string)
	}
	var q strings.Builder
	q.WriteString("UPDATE " + t + " SET ")
	for _, n := range names {
		q.WriteString(quoteIdent(n) + " = " + quoteIdent(n) + " + ?, ")
	}
	q.WriteString("version = version + 1, updated_at = ?, updated_by = ? WHERE id = ?")
	for _, n := range names {
		if add[n] > 0 {
			q.WriteString(" AND " + quoteIdent(n) + " <= ?")
		} else {
			q.WriteString(" AND " + quoteIdent(n) + " >= ?")
		}
		if f, err := db.Registry().Field(kind, n); err == nil && f.Type == store.TypeMoney {
			q.WriteString(" AND " + quoteIdent(n) + " >= ?")
		}
	}
	q.WriteString(` AND NOT EXISTS (SELECT 1 FROM leases WHERE kind = ? AND record_id = ? AND released = 0
		AND expires_at > ? AND grp IN (` +
		strings.TrimSuffix(strings.Repeat("?, ", groups), ", ") + "))")
	if keyed {
		q.WriteString(" AND NOT EXISTS (SELECT 1 FROM idempotency WHERE scope = ? AND key = ?)")
	}
	// The store's schema is the one the save was checked against; else the sequence
	// checks it against the store's.
	q.WriteString(" AND " + schemaVersionSQL + " = ?")
	q.WriteString(" RETURNING " + db.selectList(reg, kind))
	db.relQueries.Store(key, q.String())
	return q.String()
}

// relShape is the key of a relative save's UPDATE in relQueries: the schema its select
// list is of, and the kind, fields, signs, groups and key that shape its text.
type relShape struct {
	reg   *store.Registry
	shape string
}

// run runs the save in tx. It returns nil, nil when the UPDATE matched nothing, having
// written nothing: store.RunUpdate then decides and explains, in the same transaction. Otherwise
// its result has the version but not the record yet, which record decodes once the
// transaction has committed. It may run more than once (a group that runs again), so it
// fills its arguments in every time.
func (s *relativeSave) run(ctx context.Context, tx *tx) (*store.UpdateResult, error) {
	var res *store.UpdateResult
	s.row = nil
	err := tx.raw(func(c *rawConn) error {
		// The database clock of an embedded SQLite is this process's: strftime('now')
		// reads the system clock time.Now reads, here under the write lock, in Go, where
		// formatting it costs less than SQLite's strftime, and to the millisecond as
		// strftime gives it.
		now := time.Now().UTC().Truncate(time.Millisecond)
		at, clock := formatTime(tx.now), formatTime(now)
		s.update[s.at].Value, s.update[s.clock].Value = at, clock
		row := make(rawRow, s.cols)
		found, err := c.queryRow(ctx, s.query, s.update, row)
		if err != nil || !found {
			return err
		}
		// The row is id, the fields, version, updated_at and updated_by.
		version, ok := row[s.cols-3].(int64)
		if !ok {
			return fmt.Errorf("%s %d: version %T is not an integer", s.kind, s.id, row[s.cols-3])
		}
		tx.dbNow = now
		s.change[changeVersion].Value, s.change[changeAt].Value = version, at
		if err := c.exec(ctx, insertChange, s.change); err != nil {
			return fmt.Errorf("write change log: %w", err)
		}
		if s.key != nil {
			s.key[keyResult].Value = append(strconv.AppendInt(slices.Clip(s.result), version, 10), '}')
			s.key[keyCreated].Value = clock
			s.key[keyExpires].Value = formatTime(now.Add(store.DefaultCompletedTTL))
			if err := c.exec(ctx, completeKey, s.key); err != nil {
				return fmt.Errorf("record idempotency key: %w", err)
			}
		}
		s.row = row
		res = &store.UpdateResult{Version: version}
		return nil
	})
	return res, err
}

// record decodes the record the last run's UPDATE returned, once its transaction has
// committed.
func (s *relativeSave) record(db *DB) (*store.Record, error) {
	if s.row == nil {
		return nil, fmt.Errorf("%s %d: no row of the relative save to decode", s.kind, s.id)
	}
	return db.scanRecord(s.reg, s.kind, s.row)
}

// keyResultPrefix returns store.KeyResult's JSON of a save of kind id that changed the
// record, up to its version: the relative save appends the version and the closing brace in
// the transaction, without encoding the whole result there.
func keyResultPrefix(kind store.Kind, id int64) []byte {
	b := []byte(`{"kind":`)
	b = append(b, jsonText(string(kind))...)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, `,"version":`...)
}

// LockedUpdate reads the record inside a BEGIN IMMEDIATE transaction (which holds SQLite's
// write lock), calls fn, and applies its update checked against the version read, in
// store.RunUpdate's sequence.
func (db *DB) LockedUpdate(ctx context.Context, kind store.Kind, id int64, fn func(*store.Record) (store.Update, error)) (*store.UpdateResult, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	wc, err := db.copyWriter(ctx, actor)
	if err != nil {
		return nil, err
	}
	var res *store.UpdateResult
	what := fmt.Sprintf("locked update %s %d", kind, id)
	err = db.inTx(ctx, what, func(tx *tx) error {
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
		p, err := db.Registry().NewUpdateRequest(ctx, kind, id, u)
		if err != nil {
			return err
		}
		if wc != nil {
			if err := db.Registry().CheckCopySave(wc, kind, actor, u); err != nil {
				return err
			}
		}
		res, err = db.Registry().RunUpdate(p, db.updateSteps(ctx, tx, p, nil))
		return err
	})
	if err != nil {
		return nil, mapErr(what, err)
	}
	return res, nil
}

// updateSteps are a save's steps inside its write transaction (store.UpdateSteps), which
// holds SQLite's write lock, so what they read stays true until the commit. rel, when not
// nil, is the relative save store.RunUpdate runs first (store.RelativeSaver).
type updateSteps struct {
	saveChecks
	rel *relativeSave
}

func (db *DB) updateSteps(ctx context.Context, tx *tx, p *store.UpdateRequest, rel *relativeSave) updateSteps {
	return updateSteps{saveChecks{ctx, db, tx, p.Kind, p.ID}, rel}
}

func (s updateSteps) SaveRelative(p *store.UpdateRequest) (*store.UpdateResult, error) {
	if s.rel == nil {
		return nil, nil
	}
	return s.rel.run(s.ctx, s.tx)
}

// Read reads the version and the named fields with findFields, which also learns whether a
// lease row concerns the write and whether the key has a row.
func (s updateSteps) Read(p *store.UpdateRequest) (store.UpdateRead, error) {
	cur, seen, err := s.db.findFields(s.ctx, s.tx, p.Kind, p.ID, p.Update.FieldNames(), p.Groups, p.Update.IdempotencyKey)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return store.UpdateRead{}, nil
	}
	if err != nil {
		return store.UpdateRead{}, err
	}
	return store.UpdateRead{Current: cur, KeyFree: !seen.key, Leased: seen.lease, Schema: seen.schema}, nil
}

func (s updateSteps) TakeKey(p *store.UpdateRequest) (*store.KeyResult, error) {
	return s.db.checkUpdateKey(s.ctx, s.tx, p.Update.IdempotencyKey, p.Hash)
}

func (s updateSteps) Find(id int64) (*store.Record, error) {
	return s.db.findRecord(s.ctx, s.tx, s.kind, id)
}

func (s updateSteps) CheckLeases(id int64, groups []string, token string) error {
	return s.db.checkLeases(s.ctx, s.tx, s.kind, id, groups, token)
}

func (s updateSteps) Conflict(id, base int64) error {
	return s.db.conflict(s.ctx, s.tx, s.kind, id, base)
}

// Write is the one UPDATE: the changed fields only, the relative changes as expressions, the
// version; then the folds, the logs and the key. The request has passed
// Registry.CheckUpdate, so every field name in it is a registry column.
func (s updateSteps) Write(p *store.UpdateRequest, cur *store.Record, plan *store.SavePlan, done store.KeyResult) (*store.UpdateResult, error) {
	ctx, db, tx, kind, id := s.ctx, s.db, s.tx, s.kind, s.id
	t, err := db.table(kind)
	if err != nil {
		return nil, err
	}
	var (
		sets []string
		args []any
	)
	for _, name := range sortedKeys(plan.Set) {
		f, err := db.Registry().Field(kind, name)
		if err != nil {
			return nil, err
		}
		v, err := encodeColumn(f, plan.Set[name])
		if err != nil {
			return nil, err
		}
		sets = append(sets, quoteIdent(name)+" = ?")
		args = append(args, v)
	}
	for _, field := range sortedKeys(plan.Keys) {
		sets = append(sets, quoteIdent(store.UniqueKeyColumn(field))+" = ?")
		args = append(args, plan.Keys[field])
	}
	for _, name := range sortedKeys(plan.Add) {
		if _, err := db.Registry().Field(kind, name); err != nil {
			return nil, err
		}
		sets = append(sets, quoteIdent(name)+" = "+quoteIdent(name)+" + ?")
		args = append(args, plan.Add[name])
	}
	sets = append(sets, "version = version + 1", "updated_at = ?", "updated_by = ?")
	args = append(args, formatTime(tx.now), p.Actor.Name, id, cur.Version)
	// The version condition cannot fail under the write lock; it stays as the guard that
	// nothing changed between the read and this write.
	reg := db.Registry()
	q := "UPDATE " + t + " SET " + strings.Join(sets, ", ") + " WHERE id = ? AND version = ? RETURNING " + db.selectList(reg, kind)
	rec, err := db.scanRecord(reg, kind, tx.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, db.conflict(ctx, tx, kind, id, cur.Version)
	}
	if err != nil {
		return nil, err
	}
	// The folds of the written fields, and only theirs, in their side tables.
	if err := writeFolds(ctx, tx, reg, kind, id, plan.Folds); err != nil {
		return nil, err
	}
	var deltas map[string]int64
	if len(plan.Add) > 0 {
		deltas = plan.Add
	}
	if err := db.logWrite(ctx, tx, rec, store.EventSaved, p.Actor, p.Keep, plan.FieldNames(), deltas,
		reg.PreImage(kind, store.Update{Set: plan.Set}, cur, p.Keep)); err != nil {
		return nil, err
	}
	if p.Update.IdempotencyKey != "" {
		if err := s.CompleteKey(p, done); err != nil {
			return nil, err
		}
	}
	return &store.UpdateResult{Record: rec, Version: rec.Version}, nil
}

func (s updateSteps) CompleteKey(p *store.UpdateRequest, done store.KeyResult) error {
	return s.db.completeUpdateKey(s.ctx, s.tx, p.Update.IdempotencyKey, p.Hash, done, p.Actor)
}

// probed is what findFields saw besides the record.
type probed struct {
	lease bool // a live lease on one of the written groups
	key   bool // a row of the idempotency key
	// schema is the version of the store's schema (store.UpdateRead.Schema).
	schema int64
}

// findFields reads the version and the named fields of a record: what store's PlanUpdate
// needs, without the rest of the row (a body may be megabytes). ENOTFOUND if there is none.
// In the same statement it reads the database clock (into tx) and whether a live lease on
// one of groups or a row of key (scope api) exists: each statement is Go-side work inside
// the write lock, and a save without a lease on its record or a replayed key needs neither
// the lease check nor the key lookup. Under the write lock both answers stay true.
func (db *DB) findFields(ctx context.Context, tx *tx, kind store.Kind, id int64, names []string, groups []string, key string) (*store.Record, probed, error) {
	var seen probed
	t, err := db.table(kind)
	if err != nil {
		return nil, seen, err
	}
	fields := make([]*store.Field, len(names))
	for i, name := range names {
		if fields[i], err = db.Registry().Field(kind, name); err != nil {
			return nil, seen, err
		}
	}
	r := &store.Record{Kind: kind, ID: id, Fields: make(store.Values, len(names))}
	raw := make([]any, len(names))
	var clock string
	dest := []any{&r.Version}
	for i := range raw {
		dest = append(dest, &raw[i])
	}
	var schema sql.NullInt64
	dest = append(dest, &clock, &schema, &seen.lease, &seen.key)
	var q strings.Builder
	var args []any
	q.WriteString("SELECT version")
	for _, name := range names {
		q.WriteString(", " + quoteIdent(name))
	}
	q.WriteString(", strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), " + schemaVersionSQL + ", ")
	if len(groups) == 0 {
		q.WriteString("0")
	} else {
		q.WriteString(`EXISTS (SELECT 1 FROM leases WHERE kind = ? AND record_id = ? AND released = 0
			AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AND grp IN (` +
			strings.TrimSuffix(strings.Repeat("?, ", len(groups)), ", ") + "))")
		args = append(args, string(kind), id)
		for _, g := range groups {
			args = append(args, g)
		}
	}
	if key == "" {
		q.WriteString(", 0")
	} else {
		q.WriteString(", EXISTS (SELECT 1 FROM idempotency WHERE scope = ? AND key = ?)")
		args = append(args, store.ScopeAPI, key)
	}
	q.WriteString(" FROM " + t + " WHERE id = ?")
	args = append(args, id)
	err = tx.QueryRowContext(ctx, q.String(), args...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, seen, store.Errorf(store.ENOTFOUND, "%s %d not found", kind, id)
	}
	if err != nil {
		return nil, seen, err
	}
	seen.schema = schema.Int64
	if tx.dbNow.IsZero() {
		if tx.dbNow, err = parseTime(clock); err != nil {
			return nil, seen, err
		}
	}
	for i, f := range fields {
		if r.Fields[f.Name], err = decodeColumn(f, raw[i]); err != nil {
			return nil, seen, fmt.Errorf("%s %d: %w", kind, id, err)
		}
	}
	return r, seen, nil
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

// afterMigration runs the part of the migration named name that SQL cannot do, in the
// migration's transaction; recorded is the schema the store keeps (the sample's until it
// keeps one). It goes by the name, not the number, so that renumbering the migrations keeps
// it attached to its script.
func afterMigration(ctx context.Context, tx *sql.Tx, name string, recorded *store.Registry) error {
	switch {
	case strings.HasSuffix(name, "_sku_key.sql"):
		return fillSKUKeys(ctx, tx)
	case strings.HasSuffix(name, "_search_per_kind.sql"):
		return mergeSearchTables(ctx, tx, recorded)
	case store.AddsFoldedColumns(name):
		return afterSearchMigration(ctx, tx, name)
	}
	return nil
}

// fillSKUKeys gives every product its store.SKUKey (migration sku_key). Products whose SKUs
// already collide by key keep them: the oldest keeps the plain key, each later one gets the
// key joined to its id by store.SKUKeySeparator (no typed sku has such a key), so the database
// opens, nothing is renamed behind anyone's back, and no new sku can join the collision.
func fillSKUKeys(ctx context.Context, tx *sql.Tx) error {
	type product struct {
		id  int64
		sku string
	}
	rows, err := tx.QueryContext(ctx, "SELECT id, sku FROM products ORDER BY id")
	if err != nil {
		return err
	}
	var ps []product
	for rows.Next() {
		var p product
		if err := rows.Scan(&p.id, &p.sku); err != nil {
			rows.Close()
			return err
		}
		ps = append(ps, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	seen := make(map[string]bool, len(ps))
	for _, p := range ps {
		key := store.SKUKey(p.sku)
		if seen[key] {
			key += store.SKUKeySeparator + strconv.FormatInt(p.id, 10)
		}
		seen[key] = true
		if _, err := tx.ExecContext(ctx, "UPDATE products SET sku_key = ? WHERE id = ?", key, p.id); err != nil {
			return err
		}
	}
	return nil
}

// saveChecks are a save's reads of other records inside its transaction (store.SaveChecks).
type saveChecks struct {
	ctx  context.Context
	db   *DB
	tx   *tx
	kind store.Kind
	id   int64 // the record saved, whose own value of a unique field is no clash
}

func (s saveChecks) Ancestors(id int64) ([]int64, error) {
	return s.db.ancestorsOf(s.ctx, s.tx, s.kind, id)
}

func (s saveChecks) CheckUnique(field, value string) error {
	return s.db.checkUnique(s.ctx, s.tx, s.kind, s.id, field, value)
}

func (s saveChecks) RecordExists(kind store.Kind, id int64) (bool, error) {
	return s.db.recordExists(s.ctx, s.tx, kind, id)
}
