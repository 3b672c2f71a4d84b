package store

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// randomFieldValue returns a value a field of f's type may hold, or one of another type.
func randomFieldValue(rng *rand.Rand, f *Field) any {
	strs := []string{"", "Halden oak lamp", "<b>&</b>", "line\nbreak\t\"q\"", "\u2028é日本\x01", "\xff"}
	s := strs[rng.IntN(len(strs))]
	switch rng.IntN(6) {
	case 0:
		return nil
	case 1:
		return s
	case 2:
		return []string{s, "lighting"}
	case 3:
		return time.Date(2026, 12, 1, 10, 5, rng.IntN(60), rng.IntN(1e9), time.UTC)
	}
	switch f.Type {
	case TypeInt, TypeMoney, TypeRef:
		return rng.Int64() - rng.Int64()
	case TypeSet:
		return []string{s}
	}
	return s
}

// TestRequestHash_AsEncodingJSON checks that the bytes RequestHash hashes are json.Marshal's:
// keys of earlier writes hold hashes of them.
func TestRequestHash_AsEncodingJSON(t *testing.T) {
	reg := DefaultRegistry()
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 3000 {
		kind := reg.Kinds()[rng.IntN(len(reg.Kinds()))]
		u := Update{BaseVersion: rng.Int64N(9)}
		if i%7 > 0 {
			u.Set = Values{}
			for _, f := range reg.Fields(kind) {
				if rng.IntN(2) == 0 {
					u.Set[f.Name] = randomFieldValue(rng, f)
				}
			}
		}
		if i%3 == 0 {
			u.Add = map[string]int64{"stock": rng.Int64N(50) - 25, "a<b": 1}
		}
		id := rng.Int64()
		want, err := requestJSON(kind, id, u)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRequestJSON(nil, kind, id, u)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("request %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestEncodeSnapshot_AsEncodingJSON checks that a snapshot is json.Marshal's bytes of its
// exported fields, as snapshots stored before are.
func TestEncodeSnapshot_AsEncodingJSON(t *testing.T) {
	reg := DefaultRegistry()
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 3000 {
		kind := reg.Kinds()[rng.IntN(len(reg.Kinds()))]
		vals := Values{}
		out := map[string]any{}
		for _, f := range reg.Fields(kind) {
			vals[f.Name] = randomFieldValue(rng, f)
			out[f.Name] = f.Export(vals[f.Name])
		}
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := reg.EncodeSnapshot(kind, vals)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("snapshot %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
