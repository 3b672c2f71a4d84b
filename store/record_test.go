package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

// TestRequestHashWithoutReflection checks that a request's JSON written without reflection
// is encoding/json's byte for byte, so that a key stored by a build that hashed with
// encoding/json alone matches the same request now.
func TestRequestHashWithoutReflection(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		u    Update
	}{
		{"one delta", KindProduct, Update{Add: map[string]int64{"stock": 1}}},
		{"deltas sorted", "part", Update{Add: map[string]int64{"stock": -3, "price": 250, "a_b": 0}, BaseVersion: 7}},
		{"nil add", KindProduct, Update{BaseVersion: 2}},
		{"empty add", KindProduct, Update{Add: map[string]int64{}}},
		{"empty set", KindProduct, Update{Set: Values{}, Add: map[string]int64{"stock": 1}}},
		{"large", KindProduct, Update{Add: map[string]int64{"stock": -9223372036854775808, "x": 9223372036854775807}}},
		{"set", KindProduct, Update{Set: Values{"name": "x"}, Add: map[string]int64{"stock": 1}}},
		{"escaped name", KindProduct, Update{Add: map[string]int64{"a<b": 1}}},
		{"escaped kind", "k&k", Update{Add: map[string]int64{"stock": 1}}},
		{"non-ASCII name", KindProduct, Update{Add: map[string]int64{"größe": 1}}},
		{"nine deltas", KindProduct, Update{Add: map[string]int64{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(struct {
				Kind Kind             `json:"k"`
				ID   int64            `json:"i"`
				Base int64            `json:"b"`
				Set  Values           `json:"s"`
				Add  map[string]int64 `json:"a"`
			}{tt.kind, 42, tt.u.BaseVersion, tt.u.Set, tt.u.Add})
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendRequestJSON(nil, tt.kind, 42, tt.u)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("by hand %s\nencoding/json %s", got, want)
			}
			sum := sha256.Sum256(want)
			if h := RequestHash(tt.kind, 42, tt.u); h != hex.EncodeToString(sum[:]) {
				t.Fatalf("RequestHash = %s, want the digest of %s", h, want)
			}
		})
	}
}
