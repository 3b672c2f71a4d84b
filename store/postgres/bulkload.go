package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
)

var _ store.BulkLoader = (*DB)(nil)

// A load (store.Loader): an import's creates of new records, outside any batch, each call
// one transaction of its own on a connection of the pool, committed before the call
// returns. The checks and the writes are a bulk create's in a batch (bulkcreate.go): the
// plans checked set-wise (keys, unique values in their normalised form, refs held FOR KEY
// SHARE, no refold waiting, the store's schema not newer than the client's), ids taken
// from the kind's sequence in order, the records, their history versions, changes and
// keys loaded with COPY in that one transaction, so that a load killed at any point has
// either written a call's records and their keys or nothing of them. The connections are
// tandem's (outside.go): the outside-write triggers' WHEN is false for them, so no trigger
// writes a second history version or change for a load's rows.
//
// What a load saves over a batch is the batch's savepoint and its wait: a call commits on
// its own, and this process's feed subscribers are woken then.
//
// A call that a concurrent writer beats (a unique value taken between the check and the
// load, a deadlock, a serialization failure) is rolled back whole and creates nothing: the
// caller's batches then create or refuse those records one by one, as row by row would.

// loader is a DB's Loader.
type loader struct{ db *DB }

// OpenLoader returns the store's Loader (store.BulkLoader). It holds no connection: each
// call takes one from the pool for its transaction.
func (db *DB) OpenLoader(context.Context) (store.Loader, error) {
	return &loader{db: db}, nil
}

// Close lets the loader go; it holds nothing.
func (l *loader) Close() error { return nil }

// CreateRecords creates the leading records of recs in one transaction (store.Loader): the
// same records, checks and logs as DB.CreateRecords in a batch. EINVALID in a batch.
func (l *loader) CreateRecords(ctx context.Context, recs []store.NewRecord) ([]*store.Record, error) {
	db := l.db
	if batchOf(ctx, db) != nil {
		return nil, store.Errorf(store.EINVALID, "load records: in a write batch")
	}
	st := db.state()
	plans := st.reg.PlanBulk(ctx, recs)
	if len(plans) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, db.mapErr("load records", err)
	}
	created, err := db.loadTx(ctx, tx, st, plans)
	if err == nil {
		err = tx.Commit(ctx)
	}
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		if beaten(err) {
			return nil, nil
		}
		return nil, db.mapErr("load records", err)
	}
	if len(created) > 0 {
		db.committed()
	}
	return created, nil
}

// loadTx checks and writes plans in tx, a run of one kind at a time, as CreateRecords does
// in a batch's savepoint.
func (db *DB) loadTx(ctx context.Context, tx pgx.Tx, st *schemaState, plans []*store.CreatePlan) ([]*store.Record, error) {
	newer, err := st.reg.StoreSchemaNewer(parentSteps{ctx, db, tx, plans[0].Kind})
	if err != nil || newer {
		return nil, err
	}
	return store.CreateInRuns(plans, func(run []*store.CreatePlan) ([]*store.Record, error) {
		n, err := db.bulkChecked(ctx, tx, st.reg, run)
		if err != nil {
			return nil, err
		}
		return db.bulkInsert(ctx, tx, st, run[:n])
	})
}

// beaten reports whether err is a concurrent writer's doing, which rolled the whole load
// back: a unique value taken after the check read it free, a deadlock, a serialization
// failure.
func beaten(err error) bool {
	var se *store.Error
	if errors.As(err, &se) {
		return false
	}
	switch pgCode(err) {
	case sqlstateUniqueViolation, sqlstateSerialization, sqlstateDeadlock:
		return true
	}
	return false
}
