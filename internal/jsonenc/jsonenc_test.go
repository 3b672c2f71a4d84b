package jsonenc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// pieces are strings that need each of encoding/json's escapes, and some that need none.
var pieces = []string{"a", "Halden oak", "é", "日本", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
	"\"", "\\", "<", ">", "&", "'", "\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "😀",
	"\U0010ffff", " ", "=SUM(A1)", "\u00a0", "\ufffd", "29.99"}

// RandomString returns a string of up to five pieces.
func randomString(rng *rand.Rand) string {
	var b []byte
	for range rng.IntN(6) {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return string(b)
}

// randomValue returns a value of a type a record, a row or a snapshot holds, or another
// (a time, a json.Number, a float) that goes through json.Marshal; maps nest depth deep.
func randomValue(rng *rand.Rand, depth int) any {
	switch rng.IntN(11) {
	case 0:
		return nil
	case 1, 2:
		return randomString(rng)
	case 3:
		return rng.Int64() - rng.Int64()
	case 4:
		var ss []string
		if rng.IntN(4) > 0 {
			ss = []string{}
		}
		for range rng.IntN(4) {
			ss = append(ss, randomString(rng))
		}
		return ss
	case 5:
		return time.Date(2026, 12, 1, 10, rng.IntN(60), 0, rng.IntN(1e9), time.UTC)
	case 6:
		return rng.IntN(2) == 0
	case 7:
		return json.Number("12.5")
	case 8:
		return rng.IntN(1000) - 500
	case 9:
		if depth > 0 {
			return randomMap(rng, depth-1)
		}
		return 1.5
	default:
		return int64(rng.IntN(100))
	}
}

func randomMap(rng *rand.Rand, depth int) map[string]any {
	if rng.IntN(6) == 0 {
		return nil
	}
	m := map[string]any{}
	for range rng.IntN(14) {
		m[randomString(rng)] = randomValue(rng, depth)
	}
	return m
}

// TestAppendValue_AsMarshal checks AppendValue against json.Marshal on random values.
func TestAppendValue_AsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 30000 {
		var v any = randomMap(rng, 2)
		if i%3 == 0 {
			v = randomValue(rng, 2)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendValue([]byte("x"), v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("value %d (%#v):\n got %s\nwant x%s", i, v, got, want)
		}
	}
}

// TestAppendInts_AsMarshal checks AppendInts against json.Marshal.
func TestAppendInts_AsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		var m map[string]int64
		if i%5 > 0 {
			m = map[string]int64{}
			for range rng.IntN(5) {
				m[randomString(rng)] = rng.Int64() - rng.Int64()
			}
		}
		want, _ := json.Marshal(m)
		if got := AppendInts(nil, m); !bytes.Equal(got, want) {
			t.Fatalf("map %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestAppendValue_Error checks that a value json.Marshal refuses is refused.
func TestAppendValue_Error(t *testing.T) {
	if _, err := AppendValue(nil, map[string]any{"a": make(chan int)}); err == nil {
		t.Fatal("a channel: no error")
	}
}
