package safe

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain", "plain"},
		{"grüße", "grüße"},
		{"a\x1b[31mred", `a\x1b[31mred`},
		{"two\nlines", `two\nlines`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"bell\a", `bell\x07`},
		{"c1\u009bcsi", `c1\u009bcsi`},
		{"rlo\u202eevil", `rlo\u202eevil`},
		// A backslash that would read as an escape is doubled; any other is kept.
		{`\x1b`, `\\x1b`},
		{"\x1b", `\x1b`},
		{`C:\Users\me`, `C:\Users\me`},
		{`a\\b`, `a\\\b`}, // the first is followed by a backslash, the second by b
		{"end\\", `end\`},
		{"\\\x1b", `\\\x1b`},
		{"\\\xff", `\\\xff`},
		{`\u202e \n \t \r`, `\\u202e \\n \\t \\r`},
	} {
		if got := Line(tt.in); got != tt.want {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"a\nb", "a\nb"},
		{"a\r\nb", "a\nb"},
		{"tab\there", "tab    here"},
		{"osc\x1b]0;title\x07", `osc\x1b]0;title\x07`},
		{"a\\\nb", "a\\\nb"},
		{"a\\\r\nb", "a\\\nb"},
		{"a\\\rb", `a\\\rb`},
		{`\n`, `\\n`},
		{`C:\Users`, `C:\Users`},
	} {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestJSON(t *testing.T) {
	for _, s := range []string{
		"plain",
		"grüße, 日本語 and 🙂",
		"csi\u009b31mred",
		"rlo\u202eevil\u202c",
		"isolates\u2066\u2067\u2068\u2069",
		"del\x7f",
		"esc\x1b]0;title\x07",
		"line\u2028para\u2029",
		"quote \" backslash \\ tab\t",
	} {
		doc, err := json.Marshal(map[string]any{"s": s, "list": []string{s}})
		if err != nil {
			t.Fatal(err)
		}
		got := JSON(doc)
		for _, r := range string(got) {
			if Unsafe(r) {
				t.Errorf("JSON(%q) kept %U raw: %s", s, r, got)
			}
		}
		var back struct {
			S    string   `json:"s"`
			List []string `json:"list"`
		}
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("JSON(%q) is not valid JSON: %v: %s", s, err, got)
		}
		if back.S != s || len(back.List) != 1 || back.List[0] != s {
			t.Errorf("JSON(%q) decodes to %q %q", s, back.S, back.List)
		}
	}
	if got := string(JSON([]byte("{\"s\": \"\u009b\u202e\"}\n"))); got != `{"s": "\u009b\u202e"}`+"\n" {
		t.Errorf("JSON = %q, want the escapes and the line break kept", got)
	}
}

// unescape reads what Line shows back, by the rule Line's doc gives: \\ is a backslash,
// \xNN a byte, \uNNNN a rune, \n \t \r those controls, and any other backslash itself.
func unescape(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'x':
			n, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				t.Fatalf("bad escape in %q: %v", s, err)
			}
			b.WriteByte(byte(n))
			i += 2
		case 'u':
			n, err := strconv.ParseUint(s[i+2:i+6], 16, 32)
			if err != nil {
				t.Fatalf("bad escape in %q: %v", s, err)
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			b.WriteByte('\\')
			continue
		}
		i++
	}
	return b.String()
}

// TestLine_Unambiguous: what Line shows reads back to exactly what it was given, for every
// string made of backslashes, the letters that start escapes and the characters shown
// escaped, so a literal "\x1b" and a real ESC never look alike.
func TestLine_Unambiguous(t *testing.T) {
	alphabet := []string{`\`, "x", "u", "n", "t", "r", "1", "b", "\x1b", "\n", "\xff", "\u202e", "é", " "}
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		got := Line(prefix)
		if back := unescape(t, got); back != prefix {
			t.Fatalf("Line(%q) = %q reads back as %q", prefix, got, back)
		}
		for _, r := range got {
			if Unsafe(r) {
				t.Fatalf("Line(%q) = %q keeps %U", prefix, got, r)
			}
		}
		if depth == 0 {
			return
		}
		for _, a := range alphabet {
			walk(prefix+a, depth-1)
		}
	}
	walk("", 4)
}

func TestEscapes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"plain", false}, {`C:\x1b`, false}, {"grüße", false},
		{"a\x1b", true}, {"bad\xff", true}, {"rlo\u202e", true}, {"two\nlines", true},
	} {
		if got := Escapes(tt.in); got != tt.want {
			t.Errorf("Escapes(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
