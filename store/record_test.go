package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

// TestRequestHashWithoutReflection checks that the relative request's JSON written by hand
// is encoding/json's byte for byte, so that a key stored by a build that hashed with
// encoding/json alone matches the same request now, and that what it does not handle falls
// back to encoding/json.
func TestRequestHashWithoutReflection(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		u    Update
		fast bool
	}{
		{"one delta", KindProduct, Update{Add: map[string]int64{"stock": 1}}, true},
		{"deltas sorted", "part", Update{Add: map[string]int64{"stock": -3, "price": 250, "a_b": 0}, BaseVersion: 7}, true},
		{"nil add", KindProduct, Update{BaseVersion: 2}, true},
		{"empty add", KindProduct, Update{Add: map[string]int64{}}, true},
		{"empty set", KindProduct, Update{Set: Values{}, Add: map[string]int64{"stock": 1}}, true},
		{"large", KindProduct, Update{Add: map[string]int64{"stock": -9223372036854775808, "x": 9223372036854775807}}, true},
		{"set", KindProduct, Update{Set: Values{"name": "x"}, Add: map[string]int64{"stock": 1}}, false},
		{"escaped name", KindProduct, Update{Add: map[string]int64{"a<b": 1}}, false},
		{"escaped kind", "k&k", Update{Add: map[string]int64{"stock": 1}}, false},
		{"non-ASCII name", KindProduct, Update{Add: map[string]int64{"größe": 1}}, false},
		{"nine deltas", KindProduct, Update{Add: map[string]int64{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9}}, true},
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
			got, ok := relativeRequestJSON(tt.kind, 42, tt.u)
			if ok != tt.fast {
				t.Fatalf("handled by hand = %v, want %v", ok, tt.fast)
			}
			if ok && string(got) != string(want) {
				t.Fatalf("by hand %s\nencoding/json %s", got, want)
			}
			sum := sha256.Sum256(want)
			if h := RequestHash(tt.kind, 42, tt.u); h != hex.EncodeToString(sum[:]) {
				t.Fatalf("RequestHash = %s, want the digest of %s", h, want)
			}
		})
	}
}
