package safe

import "testing"

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
