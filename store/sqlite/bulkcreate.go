package sqlite

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/store"
)

var _ store.BulkCreator = (*DB)(nil)

// A bulk create (store.BulkCreator) in a batch: the leading records of a call that need no
// read of their own (no id asked for, no parent) are planned as CreateRecord plans them
// (Registry.PlanCreate), checked set-wise in the batch's transaction (their keys, unique
// values and refs, each a statement for the run), and written many to a statement: the
// records' rows with the ids SQLite would have given them one by one, their history
// versions (a new id has no history tail to read), their changes in order, and their keys.
// Their search folds wait for the batch's end as a create's do (flushFolds). The first
// record a check refuses ends the run: the caller creates it with CreateRecord, which
// refuses it in its usual words, or creates it (a unique value taken by a record created
// just before it in the same run, which the one-by-one check then finds).

// bulkLookup is how many values one look-up statement of a bulk create's checks names.
const bulkLookup = 500

// CreateRecords creates the leading records of recs in one write of the batch ctx carries
// (store.BulkCreator). EINVALID without a batch of db.
func (db *DB) CreateRecords(ctx context.Context, recs []store.NewRecord) ([]*store.Record, error) {
	b := batchOf(ctx, db)
	if b == nil {
		return nil, store.Errorf(store.EINVALID, "create records: not in a write batch")
	}
	reg := db.Registry()
	plans := reg.PlanBulk(ctx, recs)
	if len(plans) == 0 {
		return nil, nil
	}
	var created []*store.Record
	err := b.savepoint(context.WithValue(ctx, createKey{}, true), db, func(t *tx) error {
		created = nil
		ok, err := db.bulkAllowed(ctx, t, reg, plans[0].Kind)
		if err != nil || !ok {
			return err
		}
		created, err = store.CreateInRuns(plans, func(run []*store.CreatePlan) ([]*store.Record, error) {
			n, err := db.bulkChecked(ctx, t, reg, run)
			if err != nil {
				return nil, err
			}
			return db.bulkInsert(ctx, t, reg, run[:n])
		})
		return err
	})
	if err != nil {
		return nil, mapErr("create records", err)
	}
	return created, nil
}

// bulkAllowed reports whether a bulk create may run in t: not in a working copy (whose
// creates CheckCopyCreate decides), nor when the store's schema is newer than reg (whose
// creates the store's schema decides).
func (db *DB) bulkAllowed(ctx context.Context, t *tx, reg *store.Registry, kind store.Kind) (bool, error) {
	if !t.batch.notCopy {
		copied, err := db.isCopy(ctx, t)
		if err != nil || copied {
			return false, err
		}
		t.batch.notCopy = true
	}
	newer, err := reg.StoreSchemaNewer(parentSteps{ctx, db, t, kind})
	return !newer, err
}

// bulkChecked returns how many of the leading plans (all of one kind) pass the checks a
// create makes in its transaction, made set-wise in t (checkedPrefix).
func (db *DB) bulkChecked(ctx context.Context, t *tx, reg *store.Registry, plans []*store.CreatePlan) (int, error) {
	return db.checkedPrefix(txPresence{ctx, t}, reg, plans)
}

// presence answers the set-wise questions of a bulk create's checks on one connection: a
// transaction of the store's (txPresence) or a load connection of its own (loadPresence).
type presence interface {
	// strings returns which of vals the query finds: query ends with "IN ", the list of
	// values follows it, lead are the arguments before them.
	strings(query string, lead, vals []any) (map[string]bool, error)
	// ids is strings for a query of ids.
	ids(query string, vals []any) (map[int64]bool, error)
	// exists runs a SELECT EXISTS query.
	exists(query string, args ...any) (bool, error)
}

// txPresence is presence in a transaction of the store's.
type txPresence struct {
	ctx context.Context
	t   *tx
}

func (p txPresence) strings(query string, lead, vals []any) (map[string]bool, error) {
	return presentAmong[string](p.ctx, p.t, query, lead, vals)
}

func (p txPresence) ids(query string, vals []any) (map[int64]bool, error) {
	return presentAmong[int64](p.ctx, p.t, query, nil, vals)
}

func (p txPresence) exists(query string, args ...any) (bool, error) {
	var ok bool
	err := p.t.QueryRowContext(p.ctx, query, args...).Scan(&ok)
	return ok, err
}

// checkedPrefix returns how many of the leading plans (all of one kind) pass the checks a
// create makes in its transaction, asked of p set-wise: the key not held, each unique value
// free in the table and among the plans before, each ref to an existing record. It is 0
// when the kind's unique keys wait to be refolded (checkUnique refolds them first).
func (db *DB) checkedPrefix(p presence, reg *store.Registry, plans []*store.CreatePlan) (int, error) {
	kind := plans[0].Kind
	n, err := keysFree(p, plans)
	if err != nil || n == 0 {
		return n, err
	}
	if len(reg.UniqueFields(kind)) > 0 {
		queued, err := p.exists("SELECT EXISTS (SELECT 1 FROM outside_refold WHERE kind = ?)", string(kind))
		if err != nil || queued {
			return 0, err
		}
	}
	for _, f := range reg.UniqueFields(kind) {
		if n, err = db.uniqueFree(p, f.Name, plans[:n]); err != nil || n == 0 {
			return n, err
		}
	}
	return db.refsExist(p, reg, plans[:n])
}

// keysFree returns how many of the leading plans have a key the store does not hold (of
// any status: a held one is CreateRecord's to replay or refuse) and no plan before has.
func keysFree(p presence, plans []*store.CreatePlan) (int, error) {
	keys := make([]any, 0, len(plans))
	for _, pl := range plans {
		if pl.Key != "" {
			keys = append(keys, pl.Key)
		}
	}
	held, err := p.strings("SELECT key FROM idempotency WHERE scope = ? AND key IN ", []any{store.ScopeAPI}, keys)
	if err != nil {
		return 0, fmt.Errorf("read idempotency keys: %w", err)
	}
	return store.FirstTaken(plans, held, store.KeyOf), nil
}

// uniqueFree returns how many of the leading plans have a value of the unique field whose
// key (store.SKUKey) no record of the kind and no plan before has.
func (db *DB) uniqueFree(p presence, field string, plans []*store.CreatePlan) (int, error) {
	tbl, err := db.table(plans[0].Kind)
	if err != nil {
		return 0, err
	}
	col := quoteIdent(store.UniqueKeyColumn(field))
	keys := make([]any, len(plans))
	for i, pl := range plans {
		keys[i] = store.SKUKey(pl.Unique[field])
	}
	held, err := p.strings("SELECT "+col+" FROM "+tbl+" WHERE "+col+" IN ", nil, keys)
	if err != nil {
		return 0, fmt.Errorf("read unique %s: %w", field, err)
	}
	return store.FirstTaken(plans, held, store.UniqueKeyOf(field)), nil
}

// refsExist returns how many of the leading plans have refs (a tree's parent aside) to
// records that exist, as Registry.CheckRefs asks.
func (db *DB) refsExist(p presence, reg *store.Registry, plans []*store.CreatePlan) (int, error) {
	found := map[store.Kind]map[int64]bool{}
	for k, ids := range reg.RefTargets(plans) {
		tbl, err := db.table(k)
		if err != nil {
			return 0, err
		}
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		if found[k], err = p.ids("SELECT id FROM "+tbl+" WHERE id IN ", args); err != nil {
			return 0, fmt.Errorf("read %ss: %w", k, err)
		}
	}
	return reg.FirstMissingRef(plans, found), nil
}

// presentAmong returns which of vals the query finds: query ends with "IN ", the list of
// values follows it, lead are the arguments before them. A few hundred values a statement.
func presentAmong[T comparable](ctx context.Context, q querier, query string, lead []any, vals []any) (map[T]bool, error) {
	found := map[T]bool{}
	for len(vals) > 0 {
		n := min(len(vals), bulkLookup)
		rows, err := q.QueryContext(ctx, query+"("+placeholders(n)+")", append(append([]any{}, lead...), vals[:n]...)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var v T
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return nil, err
			}
			found[v] = true
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		vals = vals[n:]
	}
	return found, nil
}

// rowsOf returns n groups of k placeholders each, for a multi-row VALUES.
func rowsOf(n, k int) string {
	one := "(" + placeholders(k) + ")"
	return strings.TrimSuffix(strings.Repeat(one+", ", n), ", ")
}

// bulkInsert writes the records plans describe (all of one kind, checked), with the ids
// SQLite gives new rows one by one, their history versions, changes and keys, and queues
// their folds for the batch's end; it returns the records.
func (db *DB) bulkInsert(ctx context.Context, t *tx, reg *store.Registry, plans []*store.CreatePlan) ([]*store.Record, error) {
	if len(plans) == 0 {
		return nil, nil
	}
	kind := plans[0].Kind
	first, err := db.nextID(ctx, t, kind)
	if err != nil {
		return nil, err
	}
	var old bool
	if err := t.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM history WHERE kind = ? AND record_id >= ?)", string(kind), first).Scan(&old); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	if old {
		// History left by records of these ids (deleted, and the table's sequence reset
		// by another program): the ids' history tails are CreateRecord's to read.
		return nil, nil
	}
	recs := make([]*store.Record, 0, len(plans))
	for done := 0; done < len(plans); {
		n := chunkOf(len(plans) - done)
		rs, err := db.insertRecords(ctx, t, reg, first+int64(done), plans[done:done+n])
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
		done += n
	}
	if err := db.insertLogs(ctx, t, reg, recs, plans); err != nil {
		return nil, err
	}
	if err := db.completeKeys(ctx, t, recs, plans); err != nil {
		return nil, err
	}
	queueFolds(t.batch, reg, recs, plans)
	return recs, nil
}

// chunkOf returns how many of left rows one statement of a bulk create writes: bulkRows at
// most (as a clone's), a power of two, so that the statement cache holds a few sizes.
func chunkOf(left int) int {
	n := min(left, bulkRows)
	return 1 << (bits.Len(uint(n)) - 1)
}

// nextID returns the id SQLite gives the next new record of kind (its table is
// AUTOINCREMENT): one past the larger of the table's sequence and its largest id.
func (db *DB) nextID(ctx context.Context, t *tx, kind store.Kind) (int64, error) {
	name, err := db.Registry().Table(kind)
	if err != nil {
		return 0, err
	}
	var last int64
	err = t.QueryRowContext(ctx, "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?), 0), coalesce((SELECT max(id) FROM "+
		quoteIdent(name)+"), 0))", name).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("read the next id of %s: %w", kind, err)
	}
	return last + 1, nil
}

// insertRecords writes the records plans describe with ids first, first+1…, in one
// statement, and returns them as the database holds them.
func (db *DB) insertRecords(ctx context.Context, t *tx, reg *store.Registry, first int64, plans []*store.CreatePlan) ([]*store.Record, error) {
	q, args, err := db.recordsInsert(reg, first, plans, t.now)
	if err != nil {
		return nil, err
	}
	rows, err := t.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[int64]*store.Record, len(plans))
	for rows.Next() {
		r, err := db.scanRecord(reg, plans[0].Kind, rows)
		if err != nil {
			return nil, err
		}
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*store.Record, len(plans))
	for i := range plans {
		if out[i] = byID[first+int64(i)]; out[i] == nil {
			return nil, fmt.Errorf("create %s %d: not returned by its insert", plans[0].Kind, first+int64(i))
		}
	}
	return out, nil
}

// recordsInsert returns the INSERT … RETURNING, and its arguments, that writes the records
// plans describe with ids first, first+1…, written at now.
func (db *DB) recordsInsert(reg *store.Registry, first int64, plans []*store.CreatePlan, now time.Time) (q string, args []any, err error) {
	at := formatTime(now)
	var cols int
	for i, p := range plans {
		var a []any
		if i == 0 {
			stmt, a0, _, err := db.insertStatement(reg, p.Kind, first+int64(i), p.Values, p.Extra)
			if err != nil {
				return "", nil, err
			}
			a, cols = a0, len(a0)+3
			head, _, _ := strings.Cut(stmt, " VALUES ")
			_, ret, _ := strings.Cut(stmt, " RETURNING ")
			q = head + " VALUES " + rowsOf(len(plans), cols) + " RETURNING " + ret
			args = make([]any, 0, cols*len(plans))
		} else if a, _, err = insertValues(reg, p.Kind, first+int64(i), p.Values, p.Extra); err != nil {
			return "", nil, err
		}
		if len(a)+3 != cols {
			// The statement is the first record's: every record must have its columns.
			return "", nil, fmt.Errorf("create %s %d: %d columns where the first of its bulk insert has %d", p.Kind, first+int64(i), len(a)+3, cols)
		}
		args = append(args, a...)
		args = append(args, int64(1), at, p.Actor.Name)
	}
	return q, args, nil
}

// insertLogs writes the history versions (editor creates that keep history) and the
// EventCreated changes of recs, in order, as logWrite writes a create's.
func (db *DB) insertLogs(ctx context.Context, t *tx, reg *store.Registry, recs []*store.Record, plans []*store.CreatePlan) error {
	hist, changes, err := logArgs(reg, recs, plans, t.now)
	if err != nil {
		return err
	}
	if err := execRows(ctx, t, historyInsert, 9, hist); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	if err := execRows(ctx, t, changesInsert, 10, changes); err != nil {
		return fmt.Errorf("write change log: %w", err)
	}
	return nil
}

// The inserts (ending "VALUES ") of a bulk create's history versions, changes and keys.
const (
	historyInsert = "INSERT INTO history (kind, record_id, version, actor, at, fields, base, snapshot, delta) VALUES "
	changesInsert = "INSERT INTO changes (event, kind, record_id, version, actor, role, fields, deltas, history, at) VALUES "
	keysInsert    = "INSERT INTO idempotency (scope, key, status, request_hash, result, owner, created_at, expires_at) VALUES "
)

// logArgs returns the values of the history rows (9 a row) and of the changes (10 a row)
// that insertLogs writes for recs, made at now.
func logArgs(reg *store.Registry, recs []*store.Record, plans []*store.CreatePlan, now time.Time) (hist, changes []any, err error) {
	at := formatTime(now)
	for i, r := range recs {
		p := plans[i]
		history := p.Keep && p.Actor.Role == store.RoleEditor
		fields := p.Written
		if fields == nil {
			fields = []string{}
		}
		if history {
			h, err := reg.NewHistoryRow(r, p.Actor.HistoryName(), now, fields, store.HistoryTail{}, nil)
			if err != nil {
				return nil, nil, err
			}
			hist = append(hist, historyArgs(r.Kind, r.ID, h)...)
		}
		changes = append(changes, string(store.EventCreated), string(r.Kind), r.ID, r.Version, p.Actor.Name,
			string(p.Actor.Role), jsonText(fields), jsonText(map[string]int64{}), history, at)
	}
	return hist, changes, nil
}

// completeKeys records the keys of plans as COMPLETED with the records created, as
// completeUpdateKey does one.
func (db *DB) completeKeys(ctx context.Context, t *tx, recs []*store.Record, plans []*store.CreatePlan) error {
	now, err := t.clock(ctx)
	if err != nil {
		return err
	}
	if err := execRows(ctx, t, keysInsert, 8, keyArgs(recs, plans, now)); err != nil {
		return fmt.Errorf("record idempotency keys: %w", err)
	}
	return nil
}

// keyArgs returns the values (8 a row) of the COMPLETED keys of plans that completeKeys
// records, at now by the database's clock.
func keyArgs(recs []*store.Record, plans []*store.CreatePlan, now time.Time) []any {
	created, expires := formatTime(now), formatTime(now.Add(store.DefaultCompletedTTL))
	var args []any
	for i, p := range plans {
		if p.Key != "" {
			args = append(args, store.ScopeAPI, p.Key, "COMPLETED", p.Hash, store.CreatedResult(recs[i]).Encode(), p.Actor.Name, created, expires)
		}
	}
	return args
}

// execRows runs insert (ending "VALUES ") for the rows in args, k values a row, many rows
// a statement.
func execRows(ctx context.Context, t *tx, insert string, k int, args []any) error {
	for len(args) > 0 {
		n := chunkOf(len(args) / k)
		if _, err := t.ExecContext(ctx, insert+rowsOf(n, k), args[:n*k]...); err != nil {
			return err
		}
		args = args[n*k:]
	}
	return nil
}

// queueFolds leaves the search folds of the records created in bulk to the batch's end
// (flushFolds), as a create in a batch does.
func queueFolds(b *batch, reg *store.Registry, recs []*store.Record, plans []*store.CreatePlan) {
	for i, r := range recs {
		_, folds := splitFolds(reg, r.Kind, plans[i].Extra)
		b.folds = append(b.folds, pendingFolds{reg, r.Kind, r.ID, folds})
	}
}
