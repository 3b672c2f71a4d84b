package exchange

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tandem-editor/tandem/store"
)

// Row is one row of an import file, parsed and checked against the registry's types.
type Row struct {
	// Line is the row's first line in the file (1 is the first line).
	Line int
	// Pos is the row's position among the file's rows (1 is the first row): in a JSON array
	// written on one line every row is on line 1, and Pos tells them apart.
	Pos  int
	Kind store.Kind
	// ID is the record the row updates (0: the row creates a record).
	ID int64
	// Version is the version the row was exported at (0: the file has none), against which
	// its changes are checked.
	Version int64
	// Set holds the values of the fields the row names.
	Set store.Values
	// Base holds the values the row was edited from (base.<field> columns or a "base"
	// object), for import --merge; nil when the row carries none.
	Base store.Values
	// Empty names the fields whose CSV cell was empty although their type has no empty
	// value (enum, int, money), sorted. They are not in Set: a row that creates a record
	// gives them their default (the cell reads as "not given"); a row that updates one is
	// invalid, since an empty cell there may mean "clear it", which these types cannot.
	Empty []string
	// Err is set when the row is invalid (a value of the wrong type, an unknown kind...):
	// it is reported and not applied; the other members may be partly set.
	Err error
	// Digest identifies the row's content (kind, id, version, values, base): with the row's
	// position it makes the row's idempotency key.
	Digest string
}

// Reader reads the rows of an import file. A problem of one row (a value of the wrong type)
// makes that row invalid (Row.Err) and the reader goes on; a problem of the file (not CSV,
// an unknown column, a row over MaxRowBytes, an empty file) is returned by Next as an error,
// after which the file must not be imported at all.
type Reader struct {
	reg    *store.Registry
	format Format
	lim    *rowLimit

	// CSV
	csv    *csvReader
	header []string
	kind   store.Kind // the kind of the CSV file's rows (from its first row)

	// JSON Lines
	lines *bufio.Reader
	line  int

	// JSON array
	dec     *json.Decoder
	started bool

	rows int

	looksJSON bool // a CSV file's first character that is not a space is { or [
	rawCells  bool // CSV text cells are read as they are, not undefused (cells.go)
	// scan: rows are read to be counted and the file checked (Source.Scan), so their
	// values are not parsed nor their digests made; no Row.Err of a value is set.
	scan bool

	cols []csvColumn // the CSV header's columns, once the first row decided the kind
}

// ReadRawCells makes x read CSV text cells as they are. By default a cell that export
// defused for spreadsheets (a quote before a formula trigger, cells.go) is read without
// that quote.
func (x *Reader) ReadRawCells() { x.rawCells = true }

// ErrLooksJSON is wrapped by the error of a CSV file whose header cannot be read and that
// starts like JSON ({ or [): it was likely meant to be read as JSON Lines or JSON.
var ErrLooksJSON = errors.New("the input starts like JSON, but is read as CSV")

// startsLikeJSON reports whether the first character of br that is not white space is { or
// [. It peeks one byte more at a time, so it never waits for more input than it looks at.
func startsLikeJSON(br *bufio.Reader) bool {
	for n := 1; n <= 256; n++ {
		b, err := br.Peek(n)
		if err != nil {
			return false
		}
		switch b[n-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// jsonHint turns the error of a CSV header that cannot be read into one that says the file
// looks like JSON, when it does.
func (x *Reader) jsonHint(err error) error {
	if !x.looksJSON || errors.Is(err, errRowTooLong) || errors.Is(err, errFileChanged) {
		return err
	}
	return &store.Error{Code: store.EINVALID, Err: ErrLooksJSON, Message: fmt.Sprintf(
		"line 1: the file starts like JSON ({ or [) but is read as CSV (%v): pass --format jsonl or --format json; nothing was imported", err)}
}

// NewReader returns a Reader of r in format. A UTF-8 byte order mark at the start is skipped.
func NewReader(r io.Reader, format Format, reg *store.Registry) (*Reader, error) {
	if _, err := ParseFormat(string(format)); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	lim := &rowLimit{r: br, max: MaxRowBytes, lines: &lineCounter{}}
	x := &Reader{reg: reg, format: format, lim: lim}
	if format == CSV {
		x.looksJSON = startsLikeJSON(br)
	}
	switch format {
	case CSV:
		x.csv = newCSVReader(lim)
	case JSONL:
		x.lines = bufio.NewReaderSize(lim, 64<<10)
	case JSON:
		x.dec = json.NewDecoder(lim)
		x.dec.UseNumber()
	}
	return x, nil
}

// errRowTooLong stops the reading of a row longer than MaxRowBytes.
var errRowTooLong = errors.New("row too long")

// rowLimit fails a read once more than max bytes were read since the last reset (the start
// of a row), so a 100 MB line is refused after max bytes and not read into memory whole.
type rowLimit struct {
	r     io.Reader
	n     int64
	max   int64
	lines *lineCounter
}

func (l *rowLimit) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, errRowTooLong
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	l.lines.add(p[:n])
	return n, err
}

func (l *rowLimit) reset() { l.n = 0 }

// lineCounter finds the line of an offset in what was read: the JSON decoder reads ahead,
// so the line of a row is found from its offset (Decoder.InputOffset).
type lineCounter struct {
	read  int64   // bytes seen
	base  int     // newlines before offsets[0]
	nl    []int64 // offsets of newlines not yet passed
	track bool
}

func (c *lineCounter) add(p []byte) {
	if c.track {
		for i, b := range p {
			if b == '\n' {
				c.nl = append(c.nl, c.read+int64(i))
			}
		}
	}
	c.read += int64(len(p))
}

// lineAt returns the line (from 1) of offset off; offsets must not go backwards.
func (c *lineCounter) lineAt(off int64) int {
	i := 0
	for i < len(c.nl) && c.nl[i] < off {
		i++
	}
	c.base += i
	c.nl = c.nl[i:]
	return c.base + 1
}

// Next returns the next row, io.EOF after the last one, or another error when the file
// cannot be read as a whole (see Reader).
func (x *Reader) Next() (*Row, error) {
	var (
		row *Row
		err error
	)
	switch x.format {
	case CSV:
		row, err = x.nextCSV()
	case JSONL:
		row, err = x.nextJSONL()
	default:
		row, err = x.nextJSON()
	}
	if errors.Is(err, errRowTooLong) {
		return nil, fileErrorf(0, "row %d is longer than %d MiB; nothing was imported", x.rows+1, MaxRowBytes>>20)
	}
	if err != nil {
		return nil, err
	}
	x.rows++
	row.Pos = x.rows
	return row, nil
}

func (x *Reader) nextCSV() (*Row, error) {
	if x.header == nil {
		rec, _, err := x.csv.Read()
		x.lim.reset()
		if err == io.EOF {
			return nil, fileErrorf(0, "the file is empty: a CSV import starts with a header line such as kind,id,version,name")
		}
		if err != nil {
			return nil, x.jsonHint(csvError(err))
		}
		if err := x.checkHeader(rec); err != nil {
			return nil, x.jsonHint(err)
		}
		x.header = rec
	}
	rec, line, err := x.csv.Read()
	x.lim.reset()
	if err == io.EOF {
		return nil, io.EOF // a header without rows imports nothing
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
		return &Row{Line: pe.StartLine, Err: rowErrorf("%d cells where the header has %d", len(rec), len(x.header))}, nil
	}
	if err != nil {
		return nil, csvError(err)
	}
	row := &Row{Line: line}
	if err := x.parseCSV(row, rec); err != nil {
		return nil, err
	}
	return row, nil
}

// csvError explains a CSV syntax error, which stops the import.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, errRowTooLong) {
			return errRowTooLong
		}
		return fileErrorf(pe.Line, "not valid CSV (RFC 4180): %v; nothing was imported", pe.Err)
	}
	if errors.Is(err, errRowTooLong) {
		return err
	}
	return fmt.Errorf("read CSV: %w", err)
}

// checkHeader refuses a header that is not an export's: no kind column, a column named
// twice, or a column that is no field of any kind.
func (x *Reader) checkHeader(h []string) error {
	seen := map[string]bool{}
	for i, c := range h {
		if !utf8.ValidString(c) {
			return fileErrorf(1, "column %d of the header is not valid UTF-8", i+1)
		}
		if seen[c] {
			return fileErrorf(1, "column %q appears twice in the header", c)
		}
		seen[c] = true
		switch c {
		case colKind, colID, colVersion, colUpdatedBy, colUpdatedAt:
			continue
		}
		name := strings.TrimPrefix(c, basePrefix)
		if slices.ContainsFunc(x.reg.Kinds(), func(k store.Kind) bool { _, err := x.reg.Field(k, name); return err == nil }) {
			continue
		}
		return fileErrorf(1, "unknown column %q in the header (want kind, id, version, fields of the kind, base.<field>)", c)
	}
	if !seen[colKind] {
		return fileErrorf(1, "the header has no kind column (an export's header starts kind,id,version)")
	}
	return nil
}

// csvColumn is a column of a CSV file's header, as its rows' cells are parsed.
type csvColumn struct {
	name   string       // the field's name (without base.)
	isBase bool         // a base.<field> column
	f      *store.Field // nil for kind, id, version, updated_by, updated_at
}

// cell returns the cell of rec in the header's column named c, or "" when there is none.
func (x *Reader) cell(rec []string, c string) string {
	if i := slices.Index(x.header, c); i >= 0 {
		return rec[i]
	}
	return ""
}

// parseCSV fills row from the cells of one CSV record. The first row with a valid kind
// decides the file's kind; a column that is not one of its fields is an error of the file.
// On a scan (Reader.scan) only that is checked: the cells are not parsed.
func (x *Reader) parseCSV(row *Row, rec []string) error {
	kind, err := x.reg.ParseKind(x.cell(rec, colKind))
	if err != nil {
		row.Err = rowErrorf("kind: %q is not %s", x.cell(rec, colKind), kindChoice(x.reg))
		return nil
	}
	if x.kind == "" {
		cols := make([]csvColumn, len(x.header))
		for i, c := range x.header {
			switch c {
			case colKind, colID, colVersion, colUpdatedBy, colUpdatedAt:
				continue
			}
			name, isBase := strings.CutPrefix(c, basePrefix)
			f, err := x.reg.Field(kind, name)
			if err != nil {
				return fileErrorf(1, "column %q is not a field of %s (the kind of the first row, line %d); nothing was imported", c, kind, row.Line)
			}
			cols[i] = csvColumn{name: name, isBase: isBase, f: f}
		}
		x.kind, x.cols = kind, cols
	}
	if kind != x.kind {
		row.Err = rowErrorf("a %s in a file of %s (a CSV file holds one kind)", kind, x.reg.Def(x.kind).Table)
		return nil
	}
	row.Kind = kind
	if x.scan {
		return nil
	}
	var errs []string
	bad := func(err error) { errs = append(errs, err.Error()) }
	row.ID, err = parseNumber(colID, x.cell(rec, colID))
	if err != nil {
		bad(err)
	}
	row.Version, err = parseNumber(colVersion, x.cell(rec, colVersion))
	if err != nil {
		bad(err)
	}
	row.Set = make(store.Values, len(x.cols))
	for i, col := range x.cols {
		f := col.f
		if f == nil {
			continue
		}
		if !col.isBase && strings.TrimSpace(rec[i]) == "" && noEmptyValue(f) {
			row.Empty = append(row.Empty, col.name)
			continue
		}
		text := rec[i]
		if !x.rawCells && defusable(f) {
			text = undefuse(text)
		}
		v, err := parseCell(f, text)
		if err != nil {
			bad(err)
			continue
		}
		if col.isBase {
			if row.Base == nil {
				row.Base = store.Values{}
			}
			row.Base[col.name] = v
		} else {
			row.Set[col.name] = v
		}
	}
	slices.Sort(row.Empty)
	x.finish(row, errs)
	return nil
}

// noEmptyValue reports whether f's type has no empty value, so that an empty CSV cell
// cannot be one of its values: enum, int and money.
func noEmptyValue(f *store.Field) bool {
	switch f.Type {
	case store.TypeEnum, store.TypeInt, store.TypeMoney:
		return true
	}
	return false
}

// parseCell parses a CSV cell as Field.Parse does, saying "out of range" for a whole number
// too large for an int field (Parse would call it not a whole number).
func parseCell(f *store.Field, s string) (any, error) {
	if f.Type == store.TypeInt {
		if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); errors.Is(err, strconv.ErrRange) {
			return nil, outOfRange(f, strings.TrimSpace(s))
		}
	}
	return f.Parse(s)
}

// outOfRange is the error of a whole number n outside int64 for field f.
func outOfRange(f *store.Field, n string) error {
	return rowErrorf("%s: %s is out of range (a whole number from %d to %d)", f.Name, n, int64(math.MinInt64), int64(math.MaxInt64))
}

// jsonValue turns a decoded JSON value of field f (numbers as json.Number) into the
// field's value. Whole numbers are read exactly (never through a float64, which would round
// 2^53+1 and call 2^63 "9.22e+18"); money must be a decimal string, since a JSON number
// could be meant as cents or as units; everything else is Field.Import's.
func jsonValue(f *store.Field, v any) (any, error) {
	n, ok := v.(json.Number)
	if !ok {
		if s, ok := v.(string); ok && (f.Type == store.TypeInt || f.Type == store.TypeRef) {
			// JSON has numbers: a string where one belongs is a wrong type (only CSV's
			// cells are all text), as a JSON number is for money.
			return nil, rowErrorf("%s: %s is a JSON string; write a whole number as a JSON number, without quotes", f.Name, strconv.Quote(short(s)))
		}
		return f.Import(v)
	}
	switch f.Type {
	case store.TypeMoney:
		return nil, rowErrorf("%s: %s is a JSON number; write money as a decimal string like \"1.50\" (a number could mean cents or units)", f.Name, n)
	case store.TypeInt, store.TypeRef:
		r, ok := new(big.Rat).SetString(n.String())
		if !ok || !r.IsInt() {
			return nil, rowErrorf("%s: %s is not a whole number", f.Name, n)
		}
		if !r.Num().IsInt64() {
			return nil, outOfRange(f, n.String())
		}
		i := r.Num().Int64()
		return i, f.Check(i)
	}
	fl, err := n.Float64()
	if err != nil {
		return nil, rowErrorf("%s: %s is not a number tandem reads", f.Name, n)
	}
	return f.Import(fl)
}

// short shortens s to at most 40 runes for a message, marking the cut with an ellipsis.
func short(s string) string {
	const n = 40
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// duplicateKey returns the first member name that appears twice in one object of the JSON
// value b (with the path of the object, "" for the row itself), or "" when there is none,
// and the names of the row's own members (those of the outermost object), in order.
// encoding/json keeps the last of two equal names silently; a row that names a field twice
// says two things, and the import refuses it rather than pick one. b must be valid JSON (it
// was decoded first): the scan only tracks strings, objects and arrays. It costs a few
// percent of the decoding (BenchmarkReadAll), where json.Decoder.Token cost twice it.
func duplicateKey(b []byte) (name, path string, members []string) {
	type frame struct {
		object    bool
		expectKey bool
		path      string
		keys      []string
		last      string // the last key, the path of a value that is an object
	}
	stack := []frame{{}}
	for i := 0; i < len(b); i++ {
		top := &stack[len(stack)-1]
		switch b[i] {
		case '{', '[':
			sub := top.path
			if top.object && top.last != "" {
				sub = strings.TrimPrefix(top.path+"."+top.last, ".")
			}
			stack = append(stack, frame{object: b[i] == '{', expectKey: b[i] == '{', path: sub})
		case '}', ']':
			if len(stack) == 2 {
				members = top.keys
			}
			stack = stack[:len(stack)-1]
		case ',':
			if top.object {
				top.expectKey = true
			}
		case '"':
			j := i + 1
			escaped := false
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					escaped = true
					j++
				}
			}
			if top.object && top.expectKey {
				key := string(b[i+1 : j])
				if escaped {
					if err := json.Unmarshal(b[i:j+1], &key); err != nil {
						return "", "", nil
					}
				}
				if slices.Contains(top.keys, key) {
					return key, top.path, nil
				}
				top.keys = append(top.keys, key)
				top.last, top.expectKey = key, false
			}
			i = j
		}
	}
	return "", "", members
}

// parseNumber parses an id or version cell: "" is 0 (none). An id above store.MaxID is
// refused here, so a dry run reports it as the import would (the store refuses it too).
func parseNumber(col, s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	limit := int64(math.MaxInt64)
	if col == colID {
		limit = store.MaxID
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-") || err == nil && n > limit {
		return 0, rowErrorf("%s: %s is too large (at most %d)", col, s, limit)
	}
	if err != nil || n <= 0 {
		return 0, rowErrorf("%s: %q is not a positive whole number", col, s)
	}
	return n, nil
}

// jsonWhole reads the id or version column col of a JSON row from its raw value: a JSON
// number, as parseNumber reads it; absent or null is 0. A string is a wrong type, as it is
// for a whole-number field (jsonValue), even when it holds digits: JSON has numbers, and a
// row that quotes one was written by something that may have meant another thing.
func jsonWhole(col string, raw json.RawMessage) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return 0, rowErrorf("%s: %v", col, err)
	}
	switch v := v.(type) {
	case json.Number:
		return parseNumber(col, v.String())
	case string:
		return 0, rowErrorf("%s: %s is a JSON string; write the %s as a JSON number, without quotes", col, strconv.Quote(short(v)), col)
	}
	return 0, rowErrorf("%s: %s is not a JSON number", col, short(string(raw)))
}

// finish sets the row's error from errs, or its digest.
func (x *Reader) finish(row *Row, errs []string) {
	if len(errs) > 0 {
		row.Err = rowErrorf("%s", strings.Join(errs, "; "))
		return
	}
	d, err := rowDigest(row)
	if err != nil {
		row.Err = rowErrorf("%v", err)
		return
	}
	row.Digest = d
}

// jsonRow is a row of a JSON import. encoding/json matches its members in any case
// ("ID" as id, "Fields" as fields, filling one map from both); parseJSON refuses such
// members (caseTwin), so that they are matched exactly.
type jsonRow struct {
	Kind      string          `json:"kind"`
	ID        json.RawMessage `json:"id"` // raw: a json.Number would take "3" as 3
	Version   json.RawMessage `json:"version"`
	Fields    map[string]any  `json:"fields"` // numbers as json.Number (UseNumber)
	Base      map[string]any  `json:"base"`
	UpdatedBy any             `json:"updated_by"`
	UpdatedAt any             `json:"updated_at"`
}

// jsonMembers are the members of a JSON row, as jsonRow names them.
var jsonMembers = []string{colKind, colID, colVersion, "fields", "base", colUpdatedBy, colUpdatedAt}

// caseTwin returns the name among names that differs from name only by case, as
// encoding/json would match it (strings.EqualFold), or "".
func caseTwin(name string, names []string) string {
	for _, n := range names {
		if n != name && strings.EqualFold(n, name) {
			return n
		}
	}
	return ""
}

func (x *Reader) nextJSONL() (*Row, error) {
	for {
		var line []byte
		last := false // the line has no line end: the file ends with it
		for {
			chunk, err := x.lines.ReadSlice('\n')
			line = append(line, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF && len(line) > 0 {
				last = true
				break
			}
			if err == io.EOF && x.rows == 0 && x.line == 0 {
				return nil, fileErrorf(0, "the file is empty: a JSON Lines import holds one record object per line")
			}
			if err != nil {
				return nil, err
			}
			break
		}
		x.lim.reset()
		x.line++
		if x.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines (and the last newline) are not rows
		}
		if last && !json.Valid(line) {
			// A writer that stopped (a pipe closed early, a disk full) leaves a row cut
			// short: the file is not whole, so none of it is imported.
			return nil, fileErrorf(x.line, "the file ends in the middle of a row: its last line has no line end and is not a whole JSON object (was the file cut short?); nothing was imported")
		}
		row := &Row{Line: x.line}
		if !x.scan {
			x.parseJSON(row, line)
		}
		return row, nil
	}
}

func (x *Reader) nextJSON() (*Row, error) {
	if !x.started {
		x.lim.lines.track = true
		tok, err := x.dec.Token()
		if err == io.EOF {
			return nil, fileErrorf(0, "the file is empty: a JSON import is an array of record objects")
		}
		if err != nil {
			return nil, jsonFileError(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return nil, fileErrorf(1, "a JSON import is an array of record objects ([{...}, ...])")
		}
		x.started = true
	}
	if !x.dec.More() {
		if _, err := x.dec.Token(); err != nil {
			return nil, jsonFileError(err)
		}
		if _, err := x.dec.Token(); err != io.EOF {
			return nil, fileErrorf(0, "more follows the array of records; a JSON import is one array; nothing was imported")
		}
		return nil, io.EOF
	}
	var raw json.RawMessage
	err := x.dec.Decode(&raw)
	if err != nil {
		return nil, jsonFileError(err)
	}
	if int64(len(raw)) > x.lim.max {
		// The decoder reads ahead as much as it likes, so rowLimit, which keeps a huge row
		// from being read whole, stops it only near its limit: the row's own length
		// decides, the same in every pass.
		return nil, errRowTooLong
	}
	line := x.lim.lines.lineAt(x.dec.InputOffset() - int64(len(raw)))
	x.lim.reset()
	row := &Row{Line: line}
	if !x.scan {
		x.parseJSON(row, raw)
	}
	return row, nil
}

// loneSurrogate returns the offset of the first \u escape in the JSON text b that names half
// of a UTF-16 surrogate pair without its other half, or -1. Escapes are only read inside
// strings, and a backslash escaping a backslash is skipped.
func loneSurrogate(b []byte) int {
	hex := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			r, ok := hex(i)
			if !ok {
				i++ // an escaped character: \\, \", \n, …
				continue
			}
			switch {
			case r >= 0xD800 && r <= 0xDBFF:
				if low, ok := hex(i + 6); ok && low >= 0xDC00 && low <= 0xDFFF {
					i += 11
					continue
				}
				return i
			case r >= 0xDC00 && r <= 0xDFFF:
				return i
			}
			i += 5
		}
	}
	return -1
}

func jsonFileError(err error) error {
	if errors.Is(err, errRowTooLong) || errors.Is(err, errFileChanged) {
		return err
	}
	return fileErrorf(0, "not a JSON array of records: %v; nothing was imported", err)
}

// parseJSON fills row from one JSON object.
func (x *Reader) parseJSON(row *Row, b []byte) {
	if !utf8.Valid(b) {
		row.Err = rowErrorf("not valid UTF-8")
		return
	}
	if at := loneSurrogate(b); at >= 0 {
		// encoding/json would store U+FFFD in its place without a word.
		row.Err = rowErrorf("the escape at byte %d names U+%s, half of a UTF-16 surrogate pair, not a character", at, bytes.ToUpper(b[at+2:at+6]))
		return
	}
	var jr jsonRow
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&jr); err != nil {
		row.Err = rowErrorf("not a record object: %v", err)
		return
	}
	if _, err := dec.Token(); err != io.EOF {
		row.Err = rowErrorf("more follows the record object on its line; a line holds one object")
		return
	}
	name, path, members := duplicateKey(b)
	if name != "" {
		where := "the row"
		if path != "" {
			where = fmt.Sprintf("%q", path)
		}
		row.Err = rowErrorf("%q appears twice in %s: a row names each member once", name, where)
		return
	}
	for _, m := range members {
		if twin := caseTwin(m, jsonMembers); twin != "" && !slices.Contains(jsonMembers, m) {
			row.Err = rowErrorf("member %s differs from %q only by case: a row's members are matched exactly", twinName(m), twin)
			return
		}
	}
	kind, err := x.reg.ParseKind(jr.Kind)
	if err != nil {
		row.Err = rowErrorf("kind: %q is not %s", jr.Kind, kindChoice(x.reg))
		return
	}
	row.Kind = kind
	var errs []string
	num := func(col string, raw json.RawMessage) int64 {
		v, err := jsonWhole(col, raw)
		if err != nil {
			errs = append(errs, err.Error())
		}
		return v
	}
	row.ID = num(colID, jr.ID)
	row.Version = num(colVersion, jr.Version)
	values := func(member string, m map[string]any) store.Values {
		out := store.Values{}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			f, err := x.reg.Field(kind, name)
			if err != nil {
				if twin := caseTwin(name, x.fieldNames(kind)); twin != "" {
					err = rowErrorf("%s: member %s differs from the field %q only by case: a row's members are matched exactly", member, twinName(name), twin)
				}
				errs = append(errs, err.Error())
				continue
			}
			v, err := jsonValue(f, m[name])
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			out[name] = v
		}
		return out
	}
	row.Set = values("fields", jr.Fields)
	if jr.Base != nil {
		row.Base = values("base", jr.Base)
	}
	x.finish(row, errs)
}

// fieldNames returns the names of kind's fields.
func (x *Reader) fieldNames(kind store.Kind) []string {
	var names []string
	for _, f := range x.reg.Fields(kind) {
		names = append(names, f.Name)
	}
	return names
}

// twinName quotes a member name for a message and names the code points beyond ASCII that
// make it differ from its twin (the Kelvin sign is not K), since a terminal shows them alike
// and %+q's escapes would reach the terminal's sanitiser as text and be doubled.
func twinName(name string) string {
	var odd []string
	for _, r := range name {
		if r > unicode.MaxASCII {
			odd = append(odd, fmt.Sprintf("U+%04X", r))
		}
	}
	if len(odd) == 0 {
		return store.Quote(name)
	}
	return fmt.Sprintf("%s (with %s)", store.Quote(name), strings.Join(odd, ", "))
}
