// Package safe makes text harmless for a terminal: no escape sequences, no control
// characters, no invalid UTF-8 and no bidirectional overrides ever reach the screen as they
// were stored or typed. Every byte tandem writes for people goes through Line or Text, and
// every JSON document through JSON, so one set of rules (Unsafe) decides for all of them.
package safe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s for display on one line: control characters (including ESC, so no escape
// sequence survives), line breaks and invalid bytes are shown as visible escapes like \x1b,
// \n or \xff. Printable text, including non-ASCII, is kept as it is.
//
// The escapes stay unambiguous: a backslash of s that would read as the start of one (a
// backslash followed by x, u, n, t, r, another backslash, or by a character shown escaped) is
// shown doubled, so the text \x1b typed as four characters shows as \\x1b and only a real ESC
// shows as \x1b. Any other backslash, as in C:\Users, shows as it is. Reading back: \\ is a
// backslash, \x, \u, \n, \t and \r start an escape, and a lone \ is itself.
func Line(s string) string { return clean(s, false) }

// Text returns s for display as several lines: like Line, but newlines are kept and tabs
// become spaces; a carriage return before a newline is dropped. Backslashes are doubled as
// Line doubles them.
func Text(s string) string { return clean(s, true) }

// Escapes reports whether Line shows s with escapes: s holds a control character, invalid
// UTF-8 or another character Unsafe reports. Text that only has backslashes doubled is shown
// as it is meant, and typing it back gives s, so it is not counted.
func Escapes(s string) bool {
	if isPlain(s) {
		return false
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || Unsafe(r) {
			return true
		}
		i += size
	}
	return false
}

// Unsafe reports whether r may change what a terminal shows beyond its own glyph: C0 and
// C1 control characters (U+009B is an 8-bit CSI), DEL, the line and paragraph separators,
// and the bidirectional overrides and isolates that reorder the text around them.
func Unsafe(r rune) bool {
	return r < 0x20 || r == 0x7f || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || isBidi(r)
}

func clean(s string, multiline bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && r == '\n':
			b.WriteByte('\n')
		case multiline && r == '\t':
			b.WriteString("    ")
		case multiline && r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
		case r == '\\':
			if readsAsEscape(s[i+1:], multiline) {
				b.WriteString(`\\`)
			} else {
				b.WriteByte('\\')
			}
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case Unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// JSON returns the encoded JSON document doc with every unsafe character inside its strings
// written as a \u escape, so the document is still valid JSON and decodes to the same
// strings. encoding/json escapes C0 controls already but passes DEL, C1 controls and bidi
// overrides through raw, which a terminal then obeys. Outside strings JSON has only ASCII
// punctuation, digits, letters and white space, so every non-ASCII or DEL byte found is
// inside a string and may be escaped where it stands; the C0 bytes left are the encoder's
// own line breaks and indentation and are kept.
func JSON(doc []byte) []byte {
	start := 0
	for start < len(doc) && doc[start] < 0x7f {
		start++
	}
	if start == len(doc) {
		return doc
	}
	out := make([]byte, 0, len(doc)+16)
	out = append(out, doc[:start]...)
	for i := start; i < len(doc); {
		r, size := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			// encoding/json never writes invalid UTF-8; a caller's document might, and
			// U+FFFD is what a decoder would make of it.
			out = append(out, `\ufffd`...)
		case r >= 0x20 && Unsafe(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, doc[i:i+size]...)
		}
		i += size
	}
	return out
}

// readsAsEscape reports whether a backslash followed by rest would read as the start of an
// escape once rest is shown (by clean, multiline or not): rest starts with one of the
// letters that begin an escape, with a backslash, or with a character shown escaped.
func readsAsEscape(rest string, multiline bool) bool {
	if rest == "" {
		return false
	}
	switch rest[0] {
	case 'x', 'u', 'n', 't', 'r', '\\':
		return true
	}
	r, size := utf8.DecodeRuneInString(rest)
	switch {
	case r == utf8.RuneError && size <= 1:
		return true
	case multiline && (r == '\n' || r == '\t' || r == '\r' && strings.HasPrefix(rest[1:], "\n")):
		return false // a line break, spaces, or dropped before one
	}
	return Unsafe(r)
}

// isPlain reports whether s is printable ASCII without a backslash only, the common case,
// so it can be returned without copying.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// isBidi reports the bidirectional overrides and isolates that can reorder what a terminal
// shows (the "trojan source" characters).
func isBidi(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}
