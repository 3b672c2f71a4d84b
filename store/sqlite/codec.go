package sqlite

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/internal/jsonenc"
	"github.com/tandem-editor/tandem/store"
)

// table returns the table of kind in the store's schema, quoted for SQL. Table and column
// names in SQL come only from here and from the registry, never from input.
func (db *DB) table(kind store.Kind) (string, error) {
	t, err := db.Registry().Table(kind)
	if err != nil {
		return "", err
	}
	return quoteIdent(t), nil
}

// sampleTable returns the table of a kind of the sample schema, as it is (not quoted): the
// working-copy code (workcopy*.go), which knows only the sample's kinds, and the
// migrations of the sample tables.
func sampleTable(kind store.Kind) (string, error) { return sampleSchema.Table(kind) }

// sampleSchema is the sample schema: what working copies (workcopy*.go) and the numbered
// migrations of the sample tables know.
var sampleSchema = store.SampleRegistry()

// quoteIdent quotes a table or column name from the schema for SQL ("name"), so that a
// name that is an SQL keyword (a field named order) is still a name.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// selectList returns the select list of a kind in reg: id, every field, and the metadata.
// A statement's select list and the scan of its rows (scanRecord) take the same registry,
// which a schema change may swap between the two (ApplySchema).
func (db *DB) selectList(reg *store.Registry, kind store.Kind) string {
	var b strings.Builder
	b.WriteString("id")
	for _, f := range reg.Fields(kind) {
		b.WriteString(", ")
		b.WriteString(quoteIdent(f.Name))
	}
	b.WriteString(", version, updated_at, updated_by")
	return b.String()
}

type scanner interface{ Scan(dest ...any) error }

// scanRecord reads one row selected with selectList(reg, kind).
func (db *DB) scanRecord(reg *store.Registry, kind store.Kind, sc scanner) (*store.Record, error) {
	fields := reg.Fields(kind)
	raw := make([]any, len(fields))
	r := &store.Record{Kind: kind, Fields: make(store.Values, len(fields))}
	var at string
	dest := make([]any, 0, len(fields)+4)
	dest = append(dest, &r.ID)
	for i := range raw {
		dest = append(dest, &raw[i])
	}
	dest = append(dest, &r.Version, &at, &r.UpdatedBy)
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	var err error
	if r.UpdatedAt, err = parseTime(at); err != nil {
		return nil, err
	}
	for i, f := range fields {
		if r.Fields[f.Name], err = decodeColumn(f, raw[i]); err != nil {
			return nil, fmt.Errorf("%s %d: %w", kind, r.ID, err)
		}
	}
	return r, nil
}

// encodeColumn converts a field value to its column value: sets as JSON arrays, times as
// millisecond UTC text, nil as NULL.
func encodeColumn(f *store.Field, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch f.Type {
	case store.TypeSet:
		items, _ := v.([]string)
		return marshalSet(items)
	case store.TypeTime:
		t, ok := v.(time.Time)
		if !ok {
			return nil, fmt.Errorf("%s: want a time, got %T", f.Name, v)
		}
		return formatTime(t), nil
	}
	return v, nil
}

// decodeColumn converts a column value read by the driver into the field's Go value.
func decodeColumn(f *store.Field, v any) (any, error) {
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	if v == nil {
		switch f.Type {
		case store.TypeTime, store.TypeRef:
			return nil, nil
		}
		return f.Zero(), nil
	}
	bad := func() error { return fmt.Errorf("column %s holds %T %v, not a %s", f.Name, v, v, f.Type) }
	switch f.Type {
	case store.TypeString, store.TypeText, store.TypeEnum:
		s, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		return s, nil
	case store.TypeInt, store.TypeMoney, store.TypeRef:
		n, ok := v.(int64)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case store.TypeSet:
		s, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		items, err := unmarshalSet(s)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		return store.NormalizeSet(items), nil
	case store.TypeTime:
		s, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		return parseTime(s)
	}
	return nil, bad()
}

// jsonText returns v, a name, a list of names or a map of deltas, as the JSON encoding/json
// writes, without reflection (jsonenc): the change log's row of every save has a list and
// a map.
func jsonText(v any) string {
	switch v := v.(type) {
	case string:
		return string(jsonenc.AppendString(nil, v))
	case []string:
		if v == nil {
			return "null"
		}
		return string(jsonenc.AppendStrings(nil, v))
	case map[string]int64:
		return string(jsonenc.AppendInts(nil, v))
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only string slices and int maps come here
	}
	return string(b)
}

// unmarshalSet reads a set's column, a JSON array of strings, as encoding/json does. What
// marshalSet writes without escaping (every record read decodes its sets) is split here
// without reflection; anything else (spaces, escapes, bytes beyond printable ASCII, not an
// array of strings) goes to encoding/json.
func unmarshalSet(s string) ([]string, error) {
	if items, ok := splitPlainSet(s); ok {
		return items, nil
	}
	var items []string
	err := json.Unmarshal([]byte(s), &items)
	return items, err
}

// splitPlainSet returns the items of s when s is an array of strings in marshalSet's plain
// form: no space, no escape, printable ASCII; ok is false otherwise.
func splitPlainSet(s string) (items []string, ok bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	if body == "" {
		return []string{}, true
	}
	items = make([]string, 0, strings.Count(body, ",")+1)
	for {
		if len(body) < 2 || body[0] != '"' {
			return nil, false
		}
		end := 1
		for end < len(body) && body[end] != '"' {
			if c := body[end]; c < 0x20 || c > 0x7e || c == '\\' {
				return nil, false
			}
			end++
		}
		if end == len(body) {
			return nil, false
		}
		items = append(items, body[1:end])
		body = body[end+1:]
		if body == "" {
			return items, true
		}
		if body[0] != ',' {
			return nil, false
		}
		body = body[1:]
	}
}

// marshalSet returns a set's items as the JSON array its column holds: what json.Marshal
// writes (an empty array for none), without reflection (jsonenc).
func marshalSet(items []string) (string, error) {
	return string(jsonenc.AppendStrings(nil, items)), nil
}
