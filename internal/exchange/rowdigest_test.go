package exchange

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// TestRowDigest_AsEncodingJSON checks that appendRowJSON writes the very bytes
// json.Marshal writes, on rows of random values: keys of earlier imports hold digests of
// json.Marshal's bytes. (internal/jsonenc's tests check its values further.)
func TestRowDigest_AsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Pieces that need each of encoding/json's escapes, and some that need none.
	pieces := []string{"a", "Halden oak", "é", "日本", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"\"", "\\", "<", ">", "&", "'", "\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "😀",
		"\U0010ffff", " ", "=SUM(A1)", "\u00a0", "\ufffd"}
	str := func() string {
		var b []byte
		for range rng.IntN(6) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		return string(b)
	}
	value := func() any {
		switch rng.IntN(9) {
		case 0:
			return nil
		case 1, 2:
			return str()
		case 3:
			return rng.Int64() - rng.Int64()
		case 4:
			var ss []string
			if rng.IntN(4) > 0 {
				ss = []string{}
			}
			for range rng.IntN(4) {
				ss = append(ss, str())
			}
			return ss
		case 5:
			return time.Date(2026, 12, 1, 10, rng.IntN(60), 0, rng.IntN(1e9), time.UTC)
		case 6:
			return rng.IntN(2) == 0
		case 7:
			return json.Number("12.5")
		default:
			return int64(rng.IntN(100))
		}
	}
	values := func() store.Values {
		if rng.IntN(5) == 0 {
			return nil
		}
		v := store.Values{}
		for range rng.IntN(14) {
			v[str()] = value()
		}
		return v
	}
	for i := range 5000 {
		row := &Row{Kind: store.Kind(str()), ID: rng.Int64N(1 << 40), Version: rng.Int64N(50) - 1, Set: values(), Base: values()}
		switch rng.IntN(3) {
		case 0:
			row.Empty = []string{}
		case 1:
			row.Empty = []string{str(), str()}
		}
		want, err := rowDigestJSON(row)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRowJSON(nil, row)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("row %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// BenchmarkRowDigest measures the digest of a row of an export of products.
func BenchmarkRowDigest(b *testing.B) {
	row := &Row{Kind: store.KindProduct, ID: 123456, Version: 3, Set: store.Values{
		"sku": "SKU-000123", "name": "Halden oak lamp 123, oiled",
		"description": "Gives a warm, even light.\nMade in Lithuania.\n\n- Care: dust with a dry cloth",
		"categories":  []string{"lighting", "office"}, "price": int64(861), "stock": int64(3),
		"availability": "in_stock", "thumbnail": "", "last_sync_at": nil,
	}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rowDigest(row); err != nil {
			b.Fatal(err)
		}
	}
}
