// Package safe makes text from the database harmless for a terminal: no escape sequences, no
// control characters, no invalid UTF-8 ever reaches the screen as it was stored.
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
func Line(s string) string { return clean(s, false) }

// Text returns s for display as several lines: like Line, but newlines are kept and tabs
// become spaces; a carriage return before a newline is dropped.
func Text(s string) string { return clean(s, true) }

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
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII only, the common case, so it can be returned
// without copying.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
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
