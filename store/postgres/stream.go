package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// streamPage is how many rows one query of StreamRecords reads without a search: large
// enough that the per-query cost (a round trip, planning) vanishes, small enough that a slow
// consumer holds a pooled connection and its snapshot only briefly. A search is read in one
// query (pgx hands rows over as they arrive): its lookup would find every match above the
// page's start again for each page.
var streamPage = 5000

// errStreamStop carries fn's error out of db.read, which must not retry or map it.
var errStreamStop = errors.New("stream stopped by its consumer")

// StreamRecords calls fn with every record of f.Kind matching f.Search above f.AfterID, in id
// order (store.RecordStreamer). The record, its Fields map and the scan targets are reused
// from one call to the next. A page whose connection fails is read again from after the last
// record handed to fn, so no record is handed over twice.
func (db *DB) StreamRecords(ctx context.Context, f store.Filter, names []string, fn func(*store.Record) error) error {
	fields, err := db.reg.StreamFields(f, names)
	if err != nil {
		return err
	}
	t, err := table(f.Kind)
	if err != nil {
		return err
	}
	cols := []string{"id", "version", "updated_by", "updated_at"}
	for _, fd := range fields {
		cols = append(cols, ident(fd.Name))
	}
	selectList := strings.Join(cols, ", ")
	r := &store.Record{Kind: f.Kind, Fields: make(store.Values, len(fields))}
	dest := []any{&r.ID, &r.Version, &r.UpdatedBy, &r.UpdatedAt}
	vals := make([]any, len(fields))
	for i, fd := range fields {
		if vals[i], err = scanTarget(fd); err != nil {
			return err
		}
	}
	dest = append(dest, vals...)
	limit := streamPage
	if f.Search != "" {
		limit = 0
	}
	var fnErr error
	after := f.AfterID
	for {
		n := 0
		err := db.read(ctx, "stream "+string(f.Kind)+"s", func(q querier) error {
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
				if err := rows.Scan(dest...); err != nil {
					return err
				}
				r.UpdatedAt = r.UpdatedAt.UTC()
				for i, fd := range fields {
					r.Fields[fd.Name] = scannedValue(vals[i])
				}
				n++
				if fnErr = fn(r); fnErr != nil {
					return errStreamStop
				}
				after = r.ID
			}
			return rows.Err()
		})
		if fnErr != nil {
			return fnErr
		}
		if err != nil {
			return err
		}
		if limit == 0 || n < limit {
			return nil
		}
	}
}
