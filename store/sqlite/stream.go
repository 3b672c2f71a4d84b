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

// streamPage is how many rows one query of StreamRecords reads: large enough that the
// per-query cost (planning, the search lookup) vanishes, small enough that a slow consumer
// holds one read transaction (and the WAL checkpoint it delays) only briefly.
var streamPage = 5000

// StreamRecords calls fn with every record of f.Kind matching f.Search above f.AfterID, in id
// order (store.RecordStreamer). The record and its Fields map are reused from one call to
// the next; the columns are scanned into typed, reused targets rather than through
// FindRecords' per-row allocations.
func (db *DB) StreamRecords(ctx context.Context, f store.Filter, fn func(*store.Record) error) error {
	if err := store.CheckStreamFilter(f); err != nil {
		return err
	}
	fields := db.reg.Fields(f.Kind)
	sc := newStreamScan(f.Kind, fields)
	for {
		page := store.Filter{Kind: f.Kind, Search: f.Search, AfterID: f.AfterID, Limit: streamPage}
		n, last, err := db.streamPage(ctx, page, sc, fn)
		if err != nil {
			return err
		}
		if n < streamPage {
			return nil
		}
		f.AfterID = last
	}
}

// streamPage reads one page of f (AfterID, Limit) and calls fn per record: how many rows it
// read and the last id.
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
	q := "SELECT " + db.selectList(f.Kind) + " FROM " + t
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id LIMIT ?"
	args = append(args, f.Limit)
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

// streamScan holds the reused scan targets of one kind's select list (selectList) and the
// record they are decoded into.
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
