package exchange

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"io"
)

// csvReader reads RFC 4180 records like encoding/csv's Reader (no lazy quotes, no comments,
// every record with the first record's number of fields, empty lines skipped), with one
// difference: inside a quoted field every byte is kept, a CR before a line feed included.
// encoding/csv turns every CRLF into LF, also inside quotes, so a text field holding "\r\n"
// (which export writes, quoted, as it is) would come back as "\n" and a CSV round trip would
// change the data. Outside quotes a record ends at LF or CRLF, as before.
type csvReader struct {
	r      *bufio.Reader
	line   int // lines read so far
	fields int // the number of fields of the first record (0 before it)
	buf    []byte
	field  []byte
}

func newCSVReader(r io.Reader) *csvReader {
	return &csvReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// readLine returns the next line with its line feed (none at the end of the input), or
// io.EOF when there is nothing left. The line is valid until the next call.
func (c *csvReader) readLine() ([]byte, error) {
	c.buf = c.buf[:0]
	for {
		chunk, err := c.r.ReadSlice('\n')
		c.buf = append(c.buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(c.buf) > 0 {
			err = nil
		}
		if err != nil {
			return nil, err
		}
		c.line++
		return c.buf, nil
	}
}

// isEnd reports whether rest, what follows a field, ends the record: nothing, LF, CRLF, or
// a CR at the end of the input (encoding/csv drops that one too).
func isEnd(rest []byte) bool {
	switch string(rest) {
	case "", "\n", "\r\n", "\r":
		return true
	}
	return false
}

// trimEnd returns an unquoted field without the line end that follows it.
func trimEnd(f []byte) []byte {
	f = bytes.TrimSuffix(f, []byte("\n"))
	return bytes.TrimSuffix(f, []byte("\r"))
}

// Read returns the next record and the line it starts on; io.EOF after the last one. A
// syntax error is a *csv.ParseError (csv.ErrBareQuote, csv.ErrQuote); a record with another
// number of fields than the first is returned with a *csv.ParseError of csv.ErrFieldCount.
// Any other error is the underlying reader's.
func (c *csvReader) Read() ([]string, int, error) {
	var line []byte
	for {
		l, err := c.readLine()
		if err != nil {
			return nil, 0, err
		}
		if string(l) != "\n" && string(l) != "\r\n" {
			line = l
			break
		}
	}
	start := c.line
	parseErr := func(col int, err error) error {
		return &csv.ParseError{StartLine: start, Line: c.line, Column: col, Err: err}
	}
	var rec []string
	pos := 0
	for {
		if pos < len(line) && line[pos] == '"' {
			pos++
			c.field = c.field[:0]
			for {
				i := bytes.IndexByte(line[pos:], '"')
				if i < 0 {
					// The field goes on on the next line: its line end is data.
					c.field = append(c.field, line[pos:]...)
					l, err := c.readLine()
					if err == io.EOF {
						return nil, start, parseErr(len(line)+1, csv.ErrQuote)
					}
					if err != nil {
						return nil, start, err
					}
					line, pos = l, 0
					continue
				}
				c.field = append(c.field, line[pos:pos+i]...)
				pos += i + 1
				if pos < len(line) && line[pos] == '"' {
					c.field = append(c.field, '"')
					pos++
					continue
				}
				break
			}
			rec = append(rec, string(c.field))
			rest := line[pos:]
			if isEnd(rest) {
				break
			}
			if rest[0] != ',' {
				return nil, start, parseErr(pos+1, csv.ErrQuote)
			}
			pos++
			continue
		}
		i := bytes.IndexByte(line[pos:], ',')
		var f []byte
		if i < 0 {
			f = trimEnd(line[pos:])
		} else {
			f = line[pos : pos+i]
		}
		if j := bytes.IndexByte(f, '"'); j >= 0 {
			return nil, start, parseErr(pos+j+1, csv.ErrBareQuote)
		}
		rec = append(rec, string(f))
		if i < 0 {
			break
		}
		pos += i + 1
	}
	if c.fields == 0 {
		c.fields = len(rec)
	} else if len(rec) != c.fields {
		return rec, start, &csv.ParseError{StartLine: start, Line: start, Column: 1, Err: csv.ErrFieldCount}
	}
	return rec, start, nil
}
