package sqlite

import (
	"encoding/json"
	"testing"
)

// TestJSONTextWithoutReflection checks that the names and deltas jsonText writes without
// reflection are encoding/json's byte for byte, escapes included.
func TestJSONTextWithoutReflection(t *testing.T) {
	for _, v := range []any{
		"product",
		"",
		"a<b",
		"größe",
		"a\"b",
		[]string{"stock"},
		[]string{"name", "price", "stock"},
		[]string{},
		[]string(nil),
		[]string{"a<b", "x"},
		[]string{"größe"},
		map[string]int64{"stock": 1},
		map[string]int64{"stock": -3, "price": 250, "a_b": 0},
		map[string]int64{},
		map[string]int64(nil),
		map[string]int64{"a&b": 1},
		map[string]int64{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": -9223372036854775808},
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonText(v); got != string(want) {
			t.Errorf("jsonText(%#v) = %s, want %s", v, got, want)
		}
	}
}

// TestUnmarshalSetWithoutReflection checks that the sets unmarshalSet splits by hand read as
// encoding/json reads them, and that the others are left to encoding/json.
func TestUnmarshalSetWithoutReflection(t *testing.T) {
	for _, tt := range []struct {
		col   string
		plain bool
	}{
		{`[]`, true},
		{`["a"]`, true},
		{`["lamp","desk","x y"]`, true},
		{`[""]`, true},
		{`["",""]`, true},
		{`["a<b&c>"]`, true},
		{`[ "a"]`, false},
		{`["a", "b"]`, false},
		{`["a\"b"]`, false},
		{`["a\u0041"]`, false},
		{`["größe"]`, false},
		{`["a",]`, false},
		{`["a"`, false},
		{`[1]`, false},
		{`["a""b"]`, false},
		{`null`, false},
		{`"a"`, false},
		{`[`, false},
		{``, false},
	} {
		_, ok := splitPlainSet(tt.col)
		if ok != tt.plain {
			t.Errorf("splitPlainSet(%s) ok = %v, want %v", tt.col, ok, tt.plain)
		}
		var want []string
		werr := json.Unmarshal([]byte(tt.col), &want)
		got, err := unmarshalSet(tt.col)
		if (err != nil) != (werr != nil) {
			t.Errorf("unmarshalSet(%s) error %v, encoding/json's %v", tt.col, err, werr)
			continue
		}
		if err == nil && (len(got) != len(want) || (got == nil) != (want == nil)) {
			t.Errorf("unmarshalSet(%s) = %#v, want %#v", tt.col, got, want)
			continue
		}
		for i := range want {
			if err == nil && got[i] != want[i] {
				t.Errorf("unmarshalSet(%s) = %#v, want %#v", tt.col, got, want)
				break
			}
		}
	}
}
