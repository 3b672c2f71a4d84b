package exchange

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/tandem-editor/tandem/store"
)

// rowDigest returns the digest of a row's content: the first 12 bytes, in hex, of the
// SHA-256 of
//
//	json.Marshal(struct{k, i, v, s, b, e,omitempty}{Kind, ID, Version, Set, Base, Empty})
//
// Keys of earlier imports hold these digests, and a run of the same file again finds its
// rows by them, so the bytes hashed are exactly encoding/json's (rowDigestJSON, checked
// against it by a test). They are written here without reflection, which made a third of
// the reading of a row; a value of a type written here by nothing else goes through
// json.Marshal.
func rowDigest(row *Row) (string, error) {
	b, err := appendRowJSON(make([]byte, 0, 512), row)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12]), nil
}

// rowDigestJSON is the form rowDigest hashes, as encoding/json makes it.
func rowDigestJSON(row *Row) ([]byte, error) {
	return json.Marshal(struct {
		Kind    store.Kind   `json:"k"`
		ID      int64        `json:"i"`
		Version int64        `json:"v"`
		Set     store.Values `json:"s"`
		Base    store.Values `json:"b"`
		Empty   []string     `json:"e,omitempty"`
	}{row.Kind, row.ID, row.Version, row.Set, row.Base, row.Empty})
}

// appendRowJSON appends rowDigestJSON(row) to dst.
func appendRowJSON(dst []byte, row *Row) ([]byte, error) {
	var err error
	dst = append(dst, `{"k":`...)
	dst = appendJSONString(dst, string(row.Kind))
	dst = append(dst, `,"i":`...)
	dst = strconv.AppendInt(dst, row.ID, 10)
	dst = append(dst, `,"v":`...)
	dst = strconv.AppendInt(dst, row.Version, 10)
	dst = append(dst, `,"s":`...)
	if dst, err = appendValuesJSON(dst, row.Set); err != nil {
		return nil, err
	}
	dst = append(dst, `,"b":`...)
	if dst, err = appendValuesJSON(dst, row.Base); err != nil {
		return nil, err
	}
	if len(row.Empty) > 0 {
		dst = append(dst, `,"e":`...)
		dst = appendStringsJSON(dst, row.Empty)
	}
	return append(dst, '}'), nil
}

// appendValuesJSON appends vals as encoding/json writes a map: null when nil, else its
// members sorted by name.
func appendValuesJSON(dst []byte, vals store.Values) ([]byte, error) {
	if vals == nil {
		return append(dst, "null"...), nil
	}
	var buf [16]string
	names := buf[:0]
	for name := range vals {
		names = append(names, name)
	}
	slices.Sort(names)
	dst = append(dst, '{')
	for i, name := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, name)
		dst = append(dst, ':')
		switch v := vals[name].(type) {
		case nil:
			dst = append(dst, "null"...)
		case string:
			dst = appendJSONString(dst, v)
		case int64:
			dst = strconv.AppendInt(dst, v, 10)
		case bool:
			dst = strconv.AppendBool(dst, v)
		case []string:
			if v == nil {
				dst = append(dst, "null"...)
			} else {
				dst = appendStringsJSON(dst, v)
			}
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			dst = append(dst, b...)
		}
	}
	return append(dst, '}'), nil
}

// appendStringsJSON appends ss as a JSON array of strings.
func appendStringsJSON(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendJSONString appends s quoted as encoding/json quotes a string (HTML-safe): \b, \f,
// \n, \r, \t, \" and \\ by their short escapes, other control bytes and <, >, & as \u00XX,
// U+2028 and U+2029 escaped, and each byte of invalid UTF-8 as \ufffd.
func appendJSONString(dst []byte, s string) []byte {
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
