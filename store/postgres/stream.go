package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
)

// streamPage is how many rows one query of StreamRecords reads without a search: large
// enough that the per-query cost (a round trip, planning) vanishes, small enough that a slow
// consumer holds a pooled connection and its snapshot only briefly. A search is read in one
// query (pgx hands rows over as they arrive): its lookup would find every match above the
// page's start again for each page.
var streamPage = 5000

// pagePlan is run in the read-only transaction of each page of a stream without a search:
// it leaves the planner the primary key's index scan alone for "id > $1 ORDER BY id LIMIT
// n" (a sequential scan or a sort costs more than any plan without one). Chosen by the
// statistics, a page of a table they do not know yet (a large import, not analyzed since:
// autovacuum is off, or has not come round) was a sequential scan of the whole table and a
// sort, for every page: an export of 100,000 products read the table twenty times.
const pagePlan = "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true)"

// StreamRecords calls fn with every record of f.Kind matching f.Search above f.AfterID, in id
// order (store.RecordStreamer). The record and its Fields map are reused from one call to
// the next. A page whose connection fails is read again from after the last row read, so no
// record is handed over twice.
//
// Two goroutines share the work: one receives and scans the rows into batches (streamRead),
// the caller's turns each into the record and calls fn, so that pgx's decoding and the
// consumer's formatting run on two cores at once (PostgreSQL itself runs in its own
// process). fn is always called on the caller's goroutine, one record after the other.
func (db *DB) StreamRecords(ctx context.Context, f store.Filter, names []string, fn func(*store.Record) error) error {
	fields, err := db.Registry().StreamFields(f, names)
	if err != nil {
		return err
	}
	if _, err := db.table(f.Kind); err != nil {
		return err
	}
	if f.Search != "" {
		if err := db.refoldOutside(ctx); err != nil {
			return err
		}
	}
	batches := make([]*rowBatch, store.PipeBatches)
	for i := range batches {
		if batches[i], err = newRowBatch(fields); err != nil {
			return err
		}
	}
	r := &store.Record{Kind: f.Kind, Fields: make(store.Values, len(fields))}
	return store.RunPipe(ctx, batches, func(ctx context.Context, p *store.Pipe[*rowBatch]) error {
		return db.streamRead(ctx, f, fields, p)
	}, func(b *rowBatch) error {
		for i := range b.n {
			row := &b.rows[i]
			r.ID, r.Version, r.UpdatedBy, r.UpdatedAt = row.id, row.version, row.by, row.at.UTC()
			for j, fd := range fields {
				r.Fields[fd.Name] = scannedValue(row.vals[j])
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// streamRead runs the queries of a stream (in pages of streamPage rows without a search, each
// in a read-only transaction of its own that fixes its plan, pagePlan; in one query with a
// search) and sends the scanned rows to the pipe in batches taken from it.
func (db *DB) streamRead(ctx context.Context, f store.Filter, fields []*store.Field, p *store.Pipe[*rowBatch]) error {
	t, _ := db.table(f.Kind) // checked by StreamRecords
	cols := []string{"id", "version", "updated_by", "updated_at"}
	for _, fd := range fields {
		cols = append(cols, ident(fd.Name))
	}
	selectList := strings.Join(cols, ", ")
	limit := streamPage
	if f.Search != "" {
		limit = 0
	}
	b, err := p.Take(ctx)
	if err != nil {
		return err
	}
	b.n = 0
	after := f.AfterID
	for {
		n := 0
		query := func(q querier) error {
			n = 0
			var (
				where []string
				args  []any
			)
			if f.Search != "" {
				cond, a, err := db.streamSearchCondition(ctx, q, store.Filter{Kind: f.Kind, Search: f.Search, AfterID: after})
				if err != nil {
					return err
				}
				where, args = append(where, cond), append(args, a...)
			}
			if after > 0 {
				args = append(args, after)
				where = append(where, "id > $"+strconv.Itoa(len(args)))
			}
			sql := "SELECT " + selectList + " FROM " + t
			if len(where) > 0 {
				sql += " WHERE " + strings.Join(where, " AND ")
			}
			sql += " ORDER BY id"
			if limit > 0 {
				sql += " LIMIT " + strconv.Itoa(limit)
			}
			if f.Search != "" {
				args = searchExecMode(args)
			}
			rows, err := q.Query(ctx, sql, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				row := &b.rows[b.n]
				if err := rows.Scan(row.dest...); err != nil {
					return err
				}
				n++
				after = row.id
				if b.n++; b.n == len(b.rows) {
					if err := p.Send(ctx, b); err != nil {
						return err
					}
					if b, err = p.Take(ctx); err != nil {
						return err
					}
					b.n = 0
				}
			}
			return rows.Err()
		}
		err := db.read(ctx, "stream "+string(f.Kind)+"s", func(q querier) error {
			if limit == 0 {
				return query(q)
			}
			tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
			if err != nil {
				return err
			}
			// After Commit a no-op; before, the end of a read-only transaction, whose error
			// changes nothing (the page's own error is returned).
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			if _, err := tx.Exec(ctx, pagePlan); err != nil {
				return err
			}
			if err := query(tx); err != nil {
				return err
			}
			return tx.Commit(ctx)
		})
		if err != nil {
			return err
		}
		if limit == 0 || n < limit {
			break
		}
	}
	if b.n > 0 {
		return p.Send(ctx, b)
	}
	return nil
}

// rowBatch is a batch of scanned rows handed from a stream's reading goroutine to its
// caller's; n rows are filled.
type rowBatch struct {
	rows []streamRow
	n    int
}

// streamRow holds one row of a stream's select list (id, version, updated_by, updated_at,
// the fields' scanTargets) and the scan targets pointing into it.
type streamRow struct {
	id, version int64
	by          string
	at          time.Time
	vals        []any
	dest        []any
}

func newRowBatch(fields []*store.Field) (*rowBatch, error) {
	b := &rowBatch{rows: make([]streamRow, store.PipeBatch)}
	for i := range b.rows {
		row := &b.rows[i]
		row.vals = make([]any, len(fields))
		for j, fd := range fields {
			var err error
			if row.vals[j], err = scanTarget(fd); err != nil {
				return nil, err
			}
		}
		row.dest = append([]any{&row.id, &row.version, &row.by, &row.at}, row.vals...)
	}
	return b, nil
}
