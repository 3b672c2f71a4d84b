package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/internal/jsonenc"
)

// The JSON form of stored history: snapshots and the values of deltas use tandem's export form
// (Field.Export: money as "29.99", times as RFC 3339), so other programs can read history
// without knowing tandem's Go types. Decoding also accepts what older SQLite databases wrote
// (money as a number of cents, times with milliseconds), so their snapshots stay readable.

// EncodeSnapshot returns every field of kind in vals as a JSON object.
func (r *Registry) EncodeSnapshot(kind Kind, vals Values) ([]byte, error) {
	// The bytes json.Marshal writes for a map of the exported values (members in name
	// order), as snapshots were written, without its reflection: a load writes a snapshot
	// per record.
	var buf [32]*Field
	fields := append(buf[:0], r.Fields(kind)...)
	slices.SortFunc(fields, func(a, b *Field) int { return strings.Compare(a.Name, b.Name) })
	b := append(make([]byte, 0, 256), '{')
	var err error
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, f.Name)
		b = append(b, ':')
		if b, err = jsonenc.AppendValue(b, f.Export(vals[f.Name])); err != nil {
			return nil, fmt.Errorf("encode snapshot: %w", err)
		}
	}
	return append(b, '}'), nil
}

// DecodeSnapshot reads a snapshot back into Go values, every field of kind present (a field
// the snapshot lacks gets its zero value). Limits are not re-checked: a value that was valid
// when written stays readable when a registry file tightens a limit later.
func (r *Registry) DecodeSnapshot(kind Kind, data []byte) (Values, error) {
	var raw map[string]any
	if err := unmarshalNumbers(data, &raw); err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	out := make(Values, len(r.Fields(kind)))
	for _, f := range r.Fields(kind) {
		x, ok := raw[f.Name]
		if !ok {
			out[f.Name] = f.Zero()
			continue
		}
		v, err := f.decodeStored(x)
		if err != nil {
			return nil, fmt.Errorf("decode snapshot field %s: %w", f.Name, err)
		}
		out[f.Name] = v
	}
	return out, nil
}

// unmarshalNumbers decodes JSON keeping numbers as json.Number, so int64 values above 2^53
// come back exact.
func unmarshalNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// decodeStored converts one stored JSON value (decoded with UseNumber) into the field's Go value.
func (f *Field) decodeStored(x any) (any, error) {
	if x == nil {
		if f.Type == TypeTime || f.Type == TypeRef {
			return nil, nil
		}
		return f.Zero(), nil
	}
	switch f.Type {
	case TypeString, TypeText, TypeEnum:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %T", x)
		}
		return s, nil
	case TypeInt, TypeRef:
		n, ok := x.(json.Number)
		if !ok {
			return nil, fmt.Errorf("want a number, got %T", x)
		}
		return strconv.ParseInt(n.String(), 10, 64)
	case TypeMoney:
		switch m := x.(type) {
		case string:
			return ParseMoney(m)
		case json.Number: // cents, as older SQLite databases wrote them
			return strconv.ParseInt(m.String(), 10, 64)
		}
		return nil, fmt.Errorf("want an amount, got %T", x)
	case TypeSet:
		items, ok := x.([]any)
		if !ok {
			return nil, fmt.Errorf("want an array, got %T", x)
		}
		ss := make([]string, 0, len(items))
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("want strings, got %T", it)
			}
			ss = append(ss, s)
		}
		return NormalizeSet(ss), nil
	case TypeTime:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("want a time, got %T", x)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC(), err
	}
	return nil, fmt.Errorf("unknown type %s", f.Type)
}
