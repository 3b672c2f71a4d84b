package store

import (
	"math/rand/v2"
	"testing"
)

// TestASCIIFoldsAsUnicode: SearchFold's and SKUKey's shortcut for ASCII text gives what the
// Unicode path gives, for every string of one or two ASCII characters (controls and
// white space included) and for random longer ones.
func TestASCIIFoldsAsUnicode(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := SearchFold(s), searchFoldUnicode(s); got != want {
			t.Fatalf("SearchFold(%q) = %q, through Unicode %q", s, got, want)
		}
		if got, want := SKUKey(s), skuKeyUnicode(s); got != want {
			t.Fatalf("SKUKey(%q) = %q, through Unicode %q", s, got, want)
		}
	}
	check("")
	for a := range 128 {
		check(string(rune(a)))
		for b := range 128 {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	rng := rand.New(rand.NewPCG(12, 3))
	buf := make([]byte, 64)
	for range 20000 {
		n := rng.IntN(len(buf))
		for i := range n {
			buf[i] = byte(rng.IntN(128))
		}
		check(string(buf[:n]))
	}
}

// TestFoldsBeyondASCII: a string with one character beyond ASCII takes the Unicode path
// whole, wherever that character is.
func TestFoldsBeyondASCII(t *testing.T) {
	for _, tc := range []struct{ in, fold, key string }{
		{"ABC\u00a0", "abc ", "abc"},     // a non-breaking space: a space in text, dropped from a key
		{"ab\u200bCD", "abcd", "abcd"},   // a zero-width space: dropped from both
		{"\uff21BC-1", "abc-1", "abc-1"}, // full-width A: NFKC
		{"Stra\u00dfe 9", "strasse 9", "strasse 9"},
		{" \u0130stanbul ", " istanbul ", "i\u0307stanbul"}, // a key keeps the dot of a folded İ
	} {
		if got := SearchFold(tc.in); got != tc.fold {
			t.Errorf("SearchFold(%q) = %q, want %q", tc.in, got, tc.fold)
		}
		if got := SKUKey(tc.in); got != tc.key {
			t.Errorf("SKUKey(%q) = %q, want %q", tc.in, got, tc.key)
		}
	}
}

// FuzzASCIIFolds: whatever the input, SearchFold and SKUKey give what their Unicode paths
// give.
func FuzzASCIIFolds(f *testing.F) {
	for _, s := range []string{"", "ABC-1", " Desk LAMP\t", "straße", "x\x00Y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := SearchFold(s), searchFoldUnicode(s); got != want {
			t.Fatalf("SearchFold(%q) = %q, through Unicode %q", s, got, want)
		}
		if got, want := SKUKey(s), skuKeyUnicode(s); got != want {
			t.Fatalf("SKUKey(%q) = %q, through Unicode %q", s, got, want)
		}
	})
}
