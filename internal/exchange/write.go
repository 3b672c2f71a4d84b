package exchange

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Writer writes records of one kind to a file in one format, one record at a time, so an
// export of any size holds at most one page of records in memory. Close finishes the file.
type Writer struct {
	w      io.Writer
	format Format
	kind   store.Kind
	fields []*store.Field
	base   bool
	tty    bool
	raw    bool // cells as they are, not defused for spreadsheets

	bw   *bufio.Writer // CSV: the buffer lines go through
	row  []byte        // CSV: the line being built, reused
	cell []byte        // CSV: a cell set aside to be quoted or made safe, reused
	line bytes.Buffer  // the JSON line, reused
	n    int
}

// WriterOptions choose what a Writer writes besides the records' values.
type WriterOptions struct {
	// Fields are the fields written, in this order; all of the kind's when empty.
	Fields []string
	// Base adds each field's value again as the base of an edit (CSV: base.<field>
	// columns; JSON: a "base" object), so that import --merge can merge the edited file
	// with what the store holds by then (see Reader).
	Base bool
	// Terminal makes the output safe for a terminal to show: CSV cells pass through
	// safe.Text (control characters and escape sequences shown as visible escapes), which
	// changes the data; set it only when the output goes to a terminal, not to a file or a
	// pipe. JSON is always written with such characters escaped, which keeps the data.
	Terminal bool
	// RawCells writes CSV text cells as they are. Without it a text cell that a
	// spreadsheet would take for a formula (it starts with =, +, -, @, a tab or a
	// carriage return) gets a single quote in front, which import takes off again
	// (cells.go). JSON is never changed.
	RawCells bool
}

// NewWriter returns a Writer of records of kind to w. EINVALID for a kind or field reg does
// not have.
func NewWriter(w io.Writer, format Format, reg *store.Registry, kind store.Kind, o WriterOptions) (*Writer, error) {
	if _, err := ParseFormat(string(format)); err != nil {
		return nil, err
	}
	if _, err := reg.Table(kind); err != nil {
		return nil, err // a kind the schema does not have
	}
	fields, err := exportFields(reg, kind, o.Fields)
	if err != nil {
		return nil, err
	}
	x := &Writer{w: w, format: format, kind: kind, fields: fields, base: o.Base, tty: o.Terminal, raw: o.RawCells}
	switch format {
	case CSV:
		x.bw = bufio.NewWriter(w)
		for i, h := range x.header() {
			if i > 0 {
				x.row = append(x.row, ',')
			}
			x.row = appendCSVField(x.row, h)
		}
		if _, err := x.bw.Write(append(x.row, '\n')); err != nil {
			return nil, fmt.Errorf("write CSV header: %w", err)
		}
	case JSON:
		if _, err := io.WriteString(w, "["); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// header returns the CSV header line.
func (x *Writer) header() []string {
	h := []string{colKind, colID, colVersion}
	for _, f := range x.fields {
		h = append(h, f.Name)
	}
	if x.base {
		for _, f := range x.fields {
			h = append(h, basePrefix+f.Name)
		}
	}
	return append(h, colUpdatedBy, colUpdatedAt)
}

// Write writes one record. r must be of the Writer's kind.
func (x *Writer) Write(r *store.Record) error {
	if r.Kind != x.kind {
		return fmt.Errorf("export: a %s in an export of %ss", r.Kind, x.kind)
	}
	x.n++
	if x.format == CSV {
		return x.writeCSV(r)
	}
	b := &x.line
	b.Reset()
	if x.format == JSON {
		if x.n > 1 {
			b.WriteByte(',')
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, `{"kind":%q,"id":%d,"version":%d,"fields":`, r.Kind, r.ID, r.Version)
	if err := x.writeValues(b, r.Fields); err != nil {
		return err
	}
	if x.base {
		b.WriteString(`,"base":`)
		if err := x.writeValues(b, r.Fields); err != nil {
			return err
		}
	}
	b.WriteString(`,"updated_by":`)
	by, err := json.Marshal(r.UpdatedBy)
	if err != nil {
		return err
	}
	b.Write(by)
	fmt.Fprintf(b, `,"updated_at":%q}`, formatTime(r))
	if x.format == JSONL {
		b.WriteByte('\n')
	}
	// Escaped so that a terminal never obeys a control character from the database; the
	// JSON decodes to the same strings.
	_, err = x.w.Write(safe.JSON(b.Bytes()))
	return err
}

// writeCSV writes one record as a CSV line: each value formatted straight into the reused
// line (appendCell), defused for spreadsheets unless the cells are raw (cells.go), quoted as
// encoding/csv quotes; on a terminal each cell passes through safe.Text first.
func (x *Writer) writeCSV(r *store.Record) error {
	b := x.row[:0]
	b = append(append(b, r.Kind...), ',')
	b = append(strconv.AppendInt(b, r.ID, 10), ',')
	b = strconv.AppendInt(b, r.Version, 10)
	values := func() {
		for _, f := range x.fields {
			b = append(b, ',')
			defused := !x.raw && defusable(f)
			if x.tty {
				x.cell = appendCell(x.cell[:0], f, r.Fields[f.Name])
				if defused {
					x.cell = appendDefused(x.cell, 0)
				}
				b = appendCSVField(b, safe.Text(string(x.cell)))
				continue
			}
			start := len(b)
			b = appendCell(b, f, r.Fields[f.Name])
			if defused {
				b = appendDefused(b, start)
			}
			if csvNeedsQuotes(b[start:]) {
				// The cell needs quotes: copied aside, then written back quoted.
				x.cell = append(x.cell[:0], b[start:]...)
				b = appendCSVField(b[:start], x.cell)
			}
		}
	}
	values()
	if x.base {
		values()
	}
	by := r.UpdatedBy
	if !x.raw {
		by = defuse(by)
	}
	if x.tty {
		b = appendCSVField(append(b, ','), safe.Text(by))
		b = append(appendCSVField(append(b, ','), safe.Text(formatTime(r))), '\n')
	} else {
		b = appendCSVField(append(b, ','), by)
		// The time formatted straight into the line: it never needs quotes (digits, '-',
		// ':', '.', 'T', 'Z').
		b = append(appendTime(append(b, ','), r), '\n')
	}
	x.row = b
	_, err := x.bw.Write(b)
	return err
}

// writeValues writes the Writer's fields of vals as a JSON object, in field order.
func (x *Writer) writeValues(b *bytes.Buffer, vals store.Values) error {
	b.WriteByte('{')
	for i, f := range x.fields {
		if i > 0 {
			b.WriteByte(',')
		}
		v, err := json.Marshal(f.Export(vals[f.Name]))
		if err != nil {
			return fmt.Errorf("export %s: %w", f.Name, err)
		}
		fmt.Fprintf(b, "%q:", f.Name)
		b.Write(v)
	}
	b.WriteByte('}')
	return nil
}

// Close finishes the file (the JSON array's end, the CSV writer's buffer). It does not close
// the underlying writer.
func (x *Writer) Close() error {
	switch x.format {
	case CSV:
		return x.bw.Flush()
	case JSON:
		end := "]\n"
		if x.n > 0 {
			end = "\n]\n"
		}
		_, err := io.WriteString(x.w, end)
		return err
	}
	return nil
}

// Count returns how many records were written.
func (x *Writer) Count() int { return x.n }

// updatedAtLayout is how a record's updated_at is written: RFC 3339 in UTC, with as many
// fraction digits as it has.
const updatedAtLayout = "2006-01-02T15:04:05.999999999Z07:00"

func formatTime(r *store.Record) string {
	if r.UpdatedAt.IsZero() {
		return ""
	}
	return r.UpdatedAt.UTC().Format(updatedAtLayout)
}

// appendTime appends formatTime(r) to b.
func appendTime(b []byte, r *store.Record) []byte {
	if r.UpdatedAt.IsZero() {
		return b
	}
	return r.UpdatedAt.UTC().AppendFormat(b, updatedAtLayout)
}
