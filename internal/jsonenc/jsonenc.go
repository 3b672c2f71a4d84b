// Package jsonenc writes JSON byte for byte as encoding/json's Marshal does, without
// reflection, for the values tandem hashes and stores by the hundred thousand: an import's
// row digests, idempotency request hashes and history snapshots. Those bytes are compared
// with ones encoding/json wrote before (a digest in a stored key, a request hash), so they
// must not differ by a byte; a value of a type written here by nothing else goes through
// json.Marshal itself.
package jsonenc

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendValue appends v as json.Marshal(v) writes it. Errors are json.Marshal's.
func AppendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return AppendString(dst, x), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case []string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return AppendStrings(dst, x), nil
	case map[string]any:
		return AppendMap(dst, x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// AppendMap appends m as json.Marshal writes a map: null when nil, else its members sorted
// by name. A named map type (store.Values) is passed converted: map[string]any(vals).
func AppendMap(dst []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	var buf [16]string
	names := buf[:0]
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	dst = append(dst, '{')
	var err error
	for i, name := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, name)
		dst = append(dst, ':')
		if dst, err = AppendValue(dst, m[name]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// AppendInts appends m as json.Marshal writes a map of whole numbers.
func AppendInts(dst []byte, m map[string]int64) []byte {
	if m == nil {
		return append(dst, "null"...)
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	dst = append(dst, '{')
	for i, name := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, name)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, m[name], 10)
	}
	return append(dst, '}')
}

// AppendStrings appends ss as a JSON array of strings (a nil ss as []).
func AppendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s)
	}
	return append(dst, ']')
}

// AppendString appends s quoted as encoding/json quotes a string (HTML-safe): \b, \f, \n,
// \r, \t, \" and \\ by their short escapes, other control bytes and <, >, & as \u00XX,
// U+2028 and U+2029 escaped, and each byte of invalid UTF-8 as \ufffd.
func AppendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
