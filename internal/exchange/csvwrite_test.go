package exchange

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// TestCSVFieldMatchesEncodingCSV: the export's own CSV line building writes every field as
// encoding/csv does, quotes, spaces and line ends included.
func TestCSVFieldMatchesEncodingCSV(t *testing.T) {
	fields := []string{"", "plain", `\.`, `\.x`, `a"b`, `"`, "a,b", ",", "line\nbreak", "cr\rlf\r\n",
		" lead", "\tlead", "\u00a0nbsp", "\u3000ideographic", "trail ", "Ünïcode", "\xff\xfe bad", "\xe3\x80",
		"€5", "-0.05", "2026-12-01T10:00:00Z", "a\"\"b\n,\r"}
	for _, f := range fields {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		if err := w.Write([]string{f, f}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		got := appendCSVField(nil, f)
		got = append(appendCSVField(append(got, ','), []byte(f)), '\n')
		if string(got) != want.String() {
			t.Errorf("field %q: wrote %q, encoding/csv writes %q", f, got, want.String())
		}
	}
}
