package sqlite

import (
	"encoding/json"
	"testing"
)

// TestJSONTextWithoutReflection checks that the names and deltas jsonText writes by hand
// are encoding/json's byte for byte, and that what needs escaping goes to encoding/json.
func TestJSONTextWithoutReflection(t *testing.T) {
	for _, v := range []any{
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
