// Package exchange is tandem's file format for records: export writes records of one kind
// as CSV, JSON Lines or a JSON array, streaming; import reads such a file back row by row
// and applies each row to a store with the rules of a save (only differing fields, version
// check, leases, ownership, an idempotency key per row). The CLI's export and import
// commands are thin wrappers around it.
//
// The columns of a CSV export are kind, id and version, then the fields (registry order, or
// the order asked for), then, with base columns, base.<field> for each field, then updated_by
// and updated_at. JSON rows are objects with the same members, fields under "fields" and
// base values under "base". Values are written as the CLI writes them: money as a decimal
// ("29.99"), sets as "a,b" in one CSV cell (an array in JSON), times in RFC 3339, an unset
// time or ref as an empty cell (null in JSON).
package exchange

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Format is a file format of export and import.
type Format string

// The formats.
const (
	CSV   Format = "csv"   // RFC 4180, one header line, one record per row
	JSONL Format = "jsonl" // one JSON object per line
	JSON  Format = "json"  // one JSON array of objects
)

// ParseFormat returns the format named s. EINVALID for another name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case CSV, JSONL, JSON:
		return f, nil
	case "ndjson":
		return JSONL, nil
	}
	return "", store.Errorf(store.EINVALID, "unknown format %q (want csv, jsonl or json)", s)
}

// FormatOf guesses the format of a file from its name's extension; CSV when it says nothing.
func FormatOf(path string) Format {
	f, _ := FormatOfExt(path)
	return f
}

// FormatOfExt returns the format a file name's extension names (.csv, .jsonl, .ndjson,
// .json, in any case), and false with CSV when it names none.
func FormatOfExt(path string) (Format, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return CSV, true
	case ".jsonl", ".ndjson":
		return JSONL, true
	case ".json":
		return JSON, true
	}
	return CSV, false
}

// Column names besides the fields.
const (
	colKind      = "kind"
	colID        = "id"
	colVersion   = "version"
	colUpdatedBy = "updated_by"
	colUpdatedAt = "updated_at"
	basePrefix   = "base."
)

// MaxRowBytes is the longest row import reads (a document's body may hold 16 MiB, and CSV
// quoting or JSON escaping makes it longer). A longer row stops the import before anything
// is written.
var MaxRowBytes int64 = 64 << 20

// exportFields returns the fields of kind named by names (all of them, in registry order,
// when names is empty). EINVALID for an unknown name or one named twice.
func exportFields(reg *store.Registry, kind store.Kind, names []string) ([]*store.Field, error) {
	if len(names) == 0 {
		return reg.Fields(kind), nil
	}
	out := make([]*store.Field, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		f, err := reg.Field(kind, n)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, store.Errorf(store.EINVALID, "--fields names %s twice", n)
		}
		seen[n] = true
		out = append(out, f)
	}
	return out, nil
}

// cell is a value's text in a CSV cell: Field.Format, with times to the nanosecond so that
// a round trip keeps them exactly.
func cell(f *store.Field, v any) string {
	if t, ok := v.(time.Time); ok {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return f.Format(v)
}

// kindChoice names the kinds of reg as a choice, in schema order: "product or document"
// for the sample schema.
func kindChoice(reg *store.Registry) string {
	kinds := reg.Kinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	switch len(names) {
	case 0:
		return "a kind of this store (it has none)"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// fileErrorf is a problem of the whole file (bad input): nothing of it is imported.
func fileErrorf(line int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	return &store.Error{Code: store.EINVALID, Message: msg}
}

// rowErrorf is a problem of one row (bad input): the row is reported and not applied.
func rowErrorf(format string, args ...any) error {
	return store.Errorf(store.EINVALID, format, args...)
}
