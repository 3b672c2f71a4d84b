package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// jsonRecord is the CLI's JSON form of a record (docs/commands.md's contract).
type jsonRecord struct {
	Kind      store.Kind     `json:"kind"`
	ID        int64          `json:"id"`
	Version   int64          `json:"version"`
	UpdatedBy string         `json:"updated_by"`
	UpdatedAt string         `json:"updated_at"`
	Fields    map[string]any `json:"fields"`
}

// exportRecord returns r in its JSON form, values through Field.Export.
func exportRecord(reg *store.Registry, r *store.Record) jsonRecord {
	fields := make(map[string]any, len(r.Fields))
	for _, f := range reg.Fields(r.Kind) {
		v, ok := r.Fields[f.Name]
		if !ok {
			continue
		}
		fields[f.Name] = f.Export(v)
	}
	return jsonRecord{
		Kind:      r.Kind,
		ID:        r.ID,
		Version:   r.Version,
		UpdatedBy: r.UpdatedBy,
		UpdatedAt: formatTime(r.UpdatedAt),
		Fields:    fields,
	}
}

// writeJSON writes v as indented JSON and a newline. Every JSON document tandem prints goes
// through writeJSON or writeJSONLine, so strings from the database reach a terminal with
// their control characters and bidi overrides as \u escapes (safe.JSON).
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = w.Write(append(safe.JSON(b), '\n'))
	return err
}

// writeJSONLine writes v as JSON on one line, for output read line by line (watch, lease).
func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = w.Write(append(safe.JSON(b), '\n'))
	return err
}

// formatTime formats a timestamp for output: RFC 3339 in UTC, "" for the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// printRecord writes r for a person: a header line, then one line per field; text fields
// that span several lines follow indented. Every database string goes through safe.
func printRecord(w io.Writer, reg *store.Registry, r *store.Record) {
	fmt.Fprintf(w, "%s %d  version %d  updated by %s at %s\n", r.Kind, r.ID, r.Version,
		safe.Line(r.UpdatedBy), r.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	width := 0
	for _, f := range reg.Fields(r.Kind) {
		width = max(width, len(f.Name))
	}
	for _, f := range reg.Fields(r.Kind) {
		v := f.Format(r.Fields[f.Name])
		if f.Type == store.TypeText && strings.Contains(v, "\n") {
			fmt.Fprintf(w, "  %-*s |\n", width, f.Name)
			for _, line := range strings.Split(strings.TrimRight(safe.Text(v), "\n"), "\n") {
				fmt.Fprintf(w, "  %*s   %s\n", width, "", line)
			}
			continue
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, f.Name, safe.Line(v))
	}
}

// listColumns are the fields list shows for each kind of the sample schema, after the id.
var listColumns = map[store.Kind][]string{
	store.KindProduct:  {"sku", "name", "price", "stock", "availability"},
	store.KindDocument: {"parent_id", "title", "tags", "word_count"},
}

// maxListColumns bounds the fields list shows for a kind of a schema of one's own.
const maxListColumns = 5

// listColumnsOf returns the fields list shows for kind, after the id: the sample's choice
// for its kinds, else a tree's parent_id, the title, then the other fields but text ones,
// in form order, up to maxListColumns.
func listColumnsOf(reg *store.Registry, kind store.Kind) []string {
	if cols, ok := listColumns[kind]; ok {
		known := true
		for _, c := range cols {
			if _, err := reg.Field(kind, c); err != nil {
				known = false
			}
		}
		if known {
			return cols
		}
	}
	var cols []string
	if reg.Tree(kind) {
		cols = append(cols, store.ParentField)
	}
	title := reg.TitleField(kind)
	if title != "" {
		cols = append(cols, title)
	}
	for _, f := range reg.Fields(kind) {
		if len(cols) >= maxListColumns {
			break
		}
		if f.Type != store.TypeText && !slices.Contains(cols, f.Name) {
			cols = append(cols, f.Name)
		}
	}
	return cols
}

// printTable writes records as an aligned table: id, the kind's list columns, version, last
// writer. Long values are cut to keep one record on one line.
func printTable(w io.Writer, reg *store.Registry, kind store.Kind, recs []*store.Record) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	cols := listColumnsOf(reg, kind)
	head := []string{"ID"}
	for _, c := range cols {
		head = append(head, strings.ToUpper(c))
	}
	head = append(head, "VERSION", "UPDATED BY")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range recs {
		row := []string{strconv.FormatInt(r.ID, 10)}
		for _, c := range cols {
			f, err := reg.Field(kind, c)
			if err != nil {
				return err
			}
			row = append(row, cut(safe.Line(f.Format(r.Fields[c])), 48))
		}
		row = append(row, strconv.FormatInt(r.Version, 10), cut(safe.Line(r.UpdatedBy), 24))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// cut shortens s to at most n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
