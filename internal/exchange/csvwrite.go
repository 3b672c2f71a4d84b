package exchange

import (
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tandem-editor/tandem/store"
)

// The CSV an export writes is encoding/csv's (RFC 4180; Comma ',', UseCRLF false), byte for
// byte, but built in one reused line buffer: a cell's value is formatted straight into it,
// not into a string per cell first. TestCSVFieldMatchesEncodingCSV holds the two together.

// appendCSVField appends field to b as encoding/csv's Writer writes one field.
func appendCSVField[T string | []byte](b []byte, field T) []byte {
	if !csvNeedsQuotes(field) {
		return append(b, field...)
	}
	b = append(b, '"')
	for i := 0; i < len(field); i++ {
		if field[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, field[i])
	}
	return append(b, '"')
}

// csvNeedsQuotes is encoding/csv's fieldNeedsQuotes for Comma ','.
func csvNeedsQuotes[T string | []byte](field T) bool {
	if len(field) == 0 {
		return false
	}
	if len(field) == 2 && field[0] == '\\' && field[1] == '.' {
		return true
	}
	for i := 0; i < len(field); i++ {
		switch field[i] {
		case '\n', '\r', '"', ',':
			return true
		}
	}
	if field[0] < utf8.RuneSelf {
		return unicode.IsSpace(rune(field[0]))
	}
	var first [utf8.UTFMax]byte
	n := copy(first[:], field[:min(len(field), utf8.UTFMax)])
	r, _ := utf8.DecodeRune(first[:n])
	return unicode.IsSpace(r)
}

// appendCell appends the text of a field value as cell returns it.
func appendCell(b []byte, f *store.Field, v any) []byte {
	switch x := v.(type) {
	case nil:
		return b
	case string:
		return append(b, x...)
	case int64:
		if f.Type == store.TypeMoney {
			return store.AppendMoney(b, x)
		}
		return strconv.AppendInt(b, x, 10)
	case []string:
		for i, s := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, s...)
		}
		return b
	case time.Time:
		return x.UTC().AppendFormat(b, time.RFC3339Nano)
	}
	return fmt.Append(b, cell(f, v))
}
