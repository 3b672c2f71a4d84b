package safe

import (
	"encoding/json"
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
