package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
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
// the next; the columns are scanned into typed, reused targets rather than through
// FindRecords' per-row allocations.
func (db *DB) StreamRecords(ctx context.Context, f store.Filter, names []string, fn func(*store.Record) error) error {
	fields, err := db.reg.StreamFields(f, names)
	if err != nil {
		return err
	}
	sc := newStreamScan(f.Kind, fields)
	limit := streamPage
	if f.Search != "" {
		limit = 0
	}
	for {
		page := store.Filter{Kind: f.Kind, Search: f.Search, AfterID: f.AfterID, Limit: limit}
		n, last, err := db.streamPage(ctx, page, sc, fn)
		if err != nil {
			return err
		}
		if limit == 0 || n < limit {
			return nil
		}
		f.AfterID = last
	}
}

// streamPage reads one page of f (AfterID, Limit; 0: to the end) and calls fn per record: how
// many rows it read and the last id.
func (db *DB) streamPage(ctx context.Context, f store.Filter, sc *streamScan, fn func(*store.Record) error) (int, int64, error) {
	t, err := table(f.Kind)
	if err != nil {
		return 0, 0, err
	}
	var (
		where []string
		args  []any
	)
	if f.Search != "" {
		cond, a, err := db.searchCondition(f)
		if err != nil {
			return 0, 0, err
		}
		where, args = append(where, cond), append(args, a...)
	}
	if f.AfterID > 0 {
		where = append(where, "id > ?")
		args = append(args, f.AfterID)
	}
	cols := make([]string, 0, len(sc.fields)+4)
	cols = append(cols, "id")
	for _, fd := range sc.fields {
		cols = append(cols, fd.Name)
	}
	q := "SELECT " + strings.Join(append(cols, "version", "updated_at", "updated_by"), ", ") + " FROM " + t
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	what := "stream " + string(f.Kind) + "s"
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, 0, mapErr(what, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := rows.Scan(sc.dest...); err != nil {
			return 0, 0, mapErr(what, err)
		}
		r, err := sc.record()
		if err != nil {
			return 0, 0, mapErr(what, err)
		}
		n++
		if err := fn(r); err != nil {
			return 0, 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, mapErr(what, err)
	}
	return n, sc.rec.ID, nil
}

// streamScan holds the reused scan targets of a stream's select list (id, its fields,
// version, updated_at, updated_by) and the record they are decoded into.
type streamScan struct {
	fields []*store.Field
	rec    store.Record
	dest   []any
	text   []sql.NullString // per field: the column of a text-like field (string, set, time)
	num    []sql.NullInt64  // per field: the column of an integer field
	at     string
	items  []string // a set's items while decoding, reused
}

func newStreamScan(kind store.Kind, fields []*store.Field) *streamScan {
	sc := &streamScan{fields: fields, rec: store.Record{Kind: kind, Fields: make(store.Values, len(fields))},
		text: make([]sql.NullString, len(fields)), num: make([]sql.NullInt64, len(fields))}
	sc.dest = append(sc.dest, &sc.rec.ID)
	for i, f := range fields {
		switch f.Type {
		case store.TypeInt, store.TypeMoney, store.TypeRef:
			sc.dest = append(sc.dest, &sc.num[i])
		default:
			sc.dest = append(sc.dest, &sc.text[i])
		}
	}
	sc.dest = append(sc.dest, &sc.rec.Version, &sc.at, &sc.rec.UpdatedBy)
	return sc
}

// record decodes the scanned row into the reused record, as decodeColumn does.
func (sc *streamScan) record() (*store.Record, error) {
	r := &sc.rec
	var err error
	if r.UpdatedAt, err = parseTime(sc.at); err != nil {
		return nil, err
	}
	for i, f := range sc.fields {
		var v any
		switch f.Type {
		case store.TypeInt, store.TypeMoney, store.TypeRef:
			if c := sc.num[i]; c.Valid {
				v = c.Int64
			} else {
				v, err = decodeColumn(f, nil)
			}
		case store.TypeSet:
			if c := sc.text[i]; c.Valid {
				v, err = sc.decodeSet(c.String)
			} else {
				v, err = decodeColumn(f, nil)
			}
		default:
			if c := sc.text[i]; c.Valid {
				v, err = decodeColumn(f, c.String)
			} else {
				v, err = decodeColumn(f, nil)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s %d: column %s: %w", r.Kind, r.ID, f.Name, err)
		}
		r.Fields[f.Name] = v
	}
	return r, nil
}

// decodeSet decodes a set column (a JSON array of strings, as encodeColumn writes it) into a
// sorted set without duplicates, as decodeColumn does. Items without escapes are cut out of
// the text directly; anything else goes through encoding/json.
func (sc *streamScan) decodeSet(s string) ([]string, error) {
	items, ok := sc.cutSet(s)
	if !ok {
		items = nil
		if err := json.Unmarshal([]byte(s), &items); err != nil {
			return nil, err
		}
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
