package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// streamPage is how many rows one query of StreamRecords reads without a search: large
// enough that the per-query cost vanishes, small enough that a slow consumer holds one read
// transaction (and the WAL checkpoint it delays) only briefly. A search is read in one query:
// its full-text lookup finds every match above the page's start again for each page, which
// made a paged search of 100,000 matches cost a multiple of reading them once.
var streamPage = 5000

// StreamRecords calls fn with every record of f.Kind matching f.Search above f.AfterID, in id
// order (store.RecordStreamer). The record and its Fields map are reused from one call to
// the next; each row is read as one packed text value (packedColumns) rather than a value
// per column, and decoded into the record.
//
// Two goroutines share the work: one steps SQLite and scans the columns into batches of
// rows (streamRead), the caller's decodes each row into the record and calls fn, so that
// SQLite's stepping and the consumer's formatting run on two cores at once. fn is always
// called on the caller's goroutine, one record after the other.
func (db *DB) StreamRecords(ctx context.Context, f store.Filter, names []string, fn func(*store.Record) error) error {
	fields, err := db.Registry().StreamFields(f, names)
	if err != nil {
		return err
	}
	if _, err := db.table(f.Kind); err != nil {
		return err
	}
	var (
		cond string
		args []any
	)
	if f.Search != "" {
		if err := db.refoldOutside(ctx); err != nil {
			return err
		}
		if cond, args, err = db.streamSearchCondition(ctx, f); err != nil {
			return mapErr("stream "+string(f.Kind)+"s", err)
		}
	}
	bufs := make([]*rowBatch, store.PipeBatches)
	for i := range bufs {
		bufs[i] = newRowBatch(fields)
	}
	sc := newStreamScan(f.Kind, fields)
	return store.RunPipe(ctx, bufs, func(ctx context.Context, p *store.Pipe[*rowBatch]) error {
		return db.streamRead(ctx, f, fields, cond, args, p)
	}, func(b *rowBatch) error {
		for i := range b.n {
			r, err := sc.record(&b.rows[i])
			if err == nil {
				err = fn(r)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// streamRead runs the queries of a stream (f's rows above f.AfterID matching cond, in pages
// of streamPage rows without a search, in one query with one) and sends the scanned rows to
// the pipe in batches taken from it.
func (db *DB) streamRead(ctx context.Context, f store.Filter, fields []*store.Field, cond string, args []any, p *store.Pipe[*rowBatch]) error {
	what := "stream " + string(f.Kind) + "s"
	t, _ := db.table(f.Kind) // checked by StreamRecords
	selectList := packedColumns(streamColumns(fields))
	limit := streamPage
	if cond != "" {
		limit = 0
	}
	b, err := p.Take(ctx)
	if err != nil {
		return err
	}
	b.n = 0
	after := f.AfterID
	for {
		q := "SELECT " + selectList + " FROM " + t + " WHERE id > ?"
		where := append([]any{after}, args...)
		if cond != "" {
			q += " AND " + cond
		}
		q += " ORDER BY id"
		if limit > 0 {
			q += " LIMIT ?"
			where = append(where, limit)
		}
		n, err := func() (int, error) {
			rows, err := db.read.QueryContext(ctx, q, where...)
			if err != nil {
				return 0, err
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				row := &b.rows[b.n]
				if err := rows.Scan(row.dest...); err != nil {
					return 0, err
				}
				if after, err = packedID(row.packed[0]); err != nil {
					return 0, err
				}
				n++
				if b.n++; b.n == len(b.rows) {
					if err := p.Send(ctx, b); err != nil {
						return 0, err
					}
					if b, err = p.Take(ctx); err != nil {
						return 0, err
					}
					b.n = 0
				}
			}
			return n, rows.Err()
		}()
		if err != nil {
			return mapErr(what, err)
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

// streamRow is one row of a stream as scanned: its packed columns (packedColumns) and the
// scan targets pointing at them.
type streamRow struct {
	packed []string
	dest   []any
}

func newRowBatch(fields []*store.Field) *rowBatch {
	groups := (len(streamColumns(fields)) + packGroup - 1) / packGroup
	b := &rowBatch{rows: make([]streamRow, store.PipeBatch)}
	for i := range b.rows {
		row := &b.rows[i]
		row.packed = make([]string, groups)
		row.dest = make([]any, groups)
		for j := range row.packed {
			row.dest[j] = &row.packed[j]
		}
	}
	return b
}

// A stream reads each row as one text value (or one per packGroup columns) instead of a
// value per column: modernc.org/sqlite makes three calls into SQLite for each text column of
// each row (its type, its text, its length), each of which takes and releases the
// connection's mutex, and that cost more than SQLite's stepping itself. packedColumns
// builds the select list: each text column as its length in bytes (octet_length, which
// counts every byte, NUL included), a colon and its text, each integer column as its
// decimal and a comma, in one concat() call; a NULL column is the colon or comma alone
// (concat() takes NULL as ''). The caller's goroutine cuts the values out again
// (packedReader), so the reading goroutine mostly steps.

// packGroup is how many columns one concat() call packs: up to three arguments each, within
// SQLite's default limit of 127 arguments to a function.
var packGroup = 40

// streamColumn is a column a stream reads: its name (the registry's) and whether it holds
// an integer.
type streamColumn struct {
	name string
	num  bool
}

// streamColumns returns the columns a stream reads, in the order record takes them: id,
// version, updated_at, updated_by, then fields.
func streamColumns(fields []*store.Field) []streamColumn {
	cols := make([]streamColumn, 0, len(fields)+4)
	cols = append(cols, streamColumn{"id", true}, streamColumn{"version", true}, streamColumn{"updated_at", false}, streamColumn{"updated_by", false})
	for _, fd := range fields {
		cols = append(cols, streamColumn{quoteIdent(fd.Name), numeric(fd)})
	}
	return cols
}

// numeric reports whether f's column holds an integer.
func numeric(f *store.Field) bool {
	switch f.Type {
	case store.TypeInt, store.TypeMoney, store.TypeRef:
		return true
	}
	return false
}

// packedColumns returns the select list that reads cols packed, packGroup columns a value.
func packedColumns(cols []streamColumn) string {
	var groups []string
	for len(cols) > 0 {
		n := min(len(cols), packGroup)
		args := make([]string, n)
		for i, c := range cols[:n] {
			if c.num {
				args[i] = c.name + ", ','"
			} else {
				args[i] = "octet_length(" + c.name + "), ':', " + c.name
			}
		}
		groups = append(groups, "concat("+strings.Join(args, ", ")+")")
		cols = cols[n:]
	}
	return strings.Join(groups, ", ")
}

// packedReader cuts the values out of a row's packed columns, one after the other.
type packedReader struct {
	groups []string
	s      string // what is left of the current group
}

// next returns the next column, a text one, as text; ok false for NULL.
func (p *packedReader) next() (v string, ok bool, err error) {
	if p.s == "" && len(p.groups) > 0 {
		p.s, p.groups = p.groups[0], p.groups[1:]
	}
	colon := strings.IndexByte(p.s, ':')
	if colon < 0 {
		return "", false, errors.New("packed row: no length")
	}
	if colon == 0 {
		p.s = p.s[1:]
		return "", false, nil
	}
	n, err := strconv.Atoi(p.s[:colon])
	if err != nil || n < 0 || n > len(p.s)-colon-1 {
		return "", false, fmt.Errorf("packed row: bad length %q", p.s[:colon])
	}
	v, p.s = p.s[colon+1:colon+1+n], p.s[colon+1+n:]
	return v, true, nil
}

// int returns the next column, an integer one, as an integer; ok false for NULL.
func (p *packedReader) int() (int64, bool, error) {
	if p.s == "" && len(p.groups) > 0 {
		p.s, p.groups = p.groups[0], p.groups[1:]
	}
	comma := strings.IndexByte(p.s, ',')
	if comma < 0 {
		return 0, false, errors.New("packed row: no end of an integer")
	}
	v := p.s[:comma]
	p.s = p.s[comma+1:]
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("not an integer: %q", v)
	}
	return n, true, nil
}

// packedID returns the id a packed row starts with.
func packedID(first string) (int64, error) {
	p := packedReader{s: first}
	id, _, err := p.int()
	return id, err
}

// streamScan decodes a stream's scanned rows into one reused record.
//
// A value stored in the record's Fields is boxed in an interface, which allocates for a
// string, a set, an integer above 255: an export's garbage, and its collections, are
// mostly these. So a text value is boxed once (not passed through decodeColumn's any and
// boxed again), and an enum's values and the empty set, which most rows repeat, are boxed
// once per stream and shared by every row (a string and an empty slice cannot be changed
// through the value, so a consumer that keeps one sees it as it was).
type streamScan struct {
	fields   []*store.Field
	rec      store.Record
	items    []string // a set's items while decoding, reused
	enums    [][]any  // per field, an enum's values boxed (nil for other fields)
	emptySet any      // []string{}, boxed
}

func newStreamScan(kind store.Kind, fields []*store.Field) *streamScan {
	sc := &streamScan{fields: fields, rec: store.Record{Kind: kind, Fields: make(store.Values, len(fields))},
		enums: make([][]any, len(fields)), emptySet: []string{}}
	for i, f := range fields {
		if f.Type == store.TypeEnum {
			for _, v := range f.Values {
				sc.enums[i] = append(sc.enums[i], v)
			}
		}
	}
	return sc
}

// record decodes the scanned row into the reused record, as decodeColumn does.
func (sc *streamScan) record(row *streamRow) (*store.Record, error) {
	r := &sc.rec
	p := packedReader{groups: row.packed}
	var (
		at  string
		err error
	)
	if r.ID, _, err = p.int(); err == nil {
		if r.Version, _, err = p.int(); err == nil {
			if at, _, err = p.next(); err == nil {
				r.UpdatedBy, _, err = p.next()
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s %d: %w", r.Kind, r.ID, err)
	}
	if r.UpdatedAt, err = parseTime(at); err != nil {
		return nil, fmt.Errorf("%s %d: updated_at: %w", r.Kind, r.ID, err)
	}
	for i, f := range sc.fields {
		var v any
		switch {
		case numeric(f):
			var (
				n  int64
				ok bool
			)
			if n, ok, err = p.int(); err == nil {
				if ok {
					v = n
				} else {
					v, err = decodeColumn(f, nil)
				}
			}
		default:
			var (
				s  string
				ok bool
			)
			if s, ok, err = p.next(); err == nil {
				switch {
				case !ok:
					v, err = decodeColumn(f, nil)
				case f.Type == store.TypeSet:
					v, err = sc.decodeSet(s)
				case f.Type == store.TypeEnum:
					v = sc.enum(i, s)
				case f.Type == store.TypeString || f.Type == store.TypeText:
					v = s // what decodeColumn returns, boxed once
				default:
					v, err = decodeColumn(f, s)
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s %d: column %s: %w", r.Kind, r.ID, f.Name, err)
		}
		r.Fields[f.Name] = v
	}
	return r, nil
}

// enum returns the value s of the enum field fields[i], boxed: one of the stream's boxed
// values, or s itself when it is none of them (as decodeColumn returns it).
func (sc *streamScan) enum(i int, s string) any {
	for j, v := range sc.fields[i].Values {
		if v == s {
			return sc.enums[i][j]
		}
	}
	return s
}

// decodeSet decodes a set column (a JSON array of strings, as encodeColumn writes it) into a
// sorted set without duplicates, as decodeColumn does, boxed (the empty set: the stream's
// one). Items without escapes are cut out of the text directly; anything else goes through
// encoding/json.
func (sc *streamScan) decodeSet(s string) (any, error) {
	items, ok := sc.cutSet(s)
	if !ok {
		items = nil
		if err := json.Unmarshal([]byte(s), &items); err != nil {
			return nil, err
		}
	}
	if len(items) == 0 {
		return sc.emptySet, nil
	}
	return store.NormalizeSet(items), nil
}

// cutSet splits `["a","b"]` into a reused slice of substrings of s; false when s holds
// anything else (escapes, spaces, other values), which the caller leaves to encoding/json.
func (sc *streamScan) cutSet(s string) ([]string, bool) {
	sc.items = sc.items[:0]
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	rest := s[1 : len(s)-1]
	for len(rest) > 0 {
		if rest[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, false
		}
		item := rest[1 : 1+end]
		if strings.IndexByte(item, '\\') >= 0 || !validJSONText(item) {
			return nil, false
		}
		sc.items = append(sc.items, item)
		rest = rest[2+end:]
		if len(rest) == 0 {
			break
		}
		if rest[0] != ',' || len(rest) == 1 {
			return nil, false
		}
		rest = rest[1:]
	}
	return slices.Clip(sc.items), true
}

// validJSONText reports whether s may stand unescaped in a JSON string: no control
// characters (invalid UTF-8 is left to encoding/json, which replaces it).
func validJSONText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x80 {
			return false
		}
	}
	return true
}
