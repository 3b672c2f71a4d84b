package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// The search benchmarks (BenchmarkListSearch in store/sqlite and store/postgres) list 100,000
// products whose descriptions are a few dozen words of prose: RareWord is in one product of
// every 500 (200 in all, one page of the TUI's list), CommonWord is in every description, and
// ShortQuery is shorter than a trigram (store.IndexedQuery), so the stores scan for it.
const (
	RareWord   = "Zephyrine"
	CommonWord = "freight"
	ShortQuery = "zq"
)

// SearchProducts returns n products for the search benchmarks, the same on every call: sku,
// name, a description of 25 to 45 words drawn from a vocabulary of 3,000 made-up words and a
// sentence with CommonWord (and RareWord in every 500th), and one or two categories.
func SearchProducts(n int) []store.Values {
	rng := rand.New(rand.NewPCG(13, 4))
	const letters = "abcdefghijklmnoprstuvwyäöüéè"
	runes := []rune(letters)
	vocab := make([]string, 3000)
	for i := range vocab {
		var b strings.Builder
		for range 3 + rng.IntN(7) {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		vocab[i] = b.String()
	}
	cats := []string{"Garden", "Kitchen", "Lighting", "Office", "Tools", "Toys", "Küche", "Straße"}
	out := make([]store.Values, n)
	for i := range out {
		var d strings.Builder
		for j := range 25 + rng.IntN(20) {
			if j > 0 {
				d.WriteByte(' ')
			}
			d.WriteString(vocab[rng.IntN(len(vocab))])
		}
		d.WriteString(". The " + CommonWord + " is included.")
		if i%500 == 250 {
			d.WriteString(" Made with " + RareWord + " thread.")
		}
		set := []string{cats[rng.IntN(len(cats))], cats[rng.IntN(len(cats))]}
		out[i] = store.Values{
			"sku":         fmt.Sprintf("SB-%06d", i+1),
			"name":        fmt.Sprintf("Sample product %d", i+1),
			"description": d.String(),
			"categories":  store.NormalizeSet(set),
		}
	}
	return out
}

// BenchListSearch runs the search benchmark's cases on st, which holds SearchProducts(n):
// a page (200, the TUI's page size) found by an id range, the baseline, and the same page
// found by a rare word, a common word, a common word after an id, and a query shorter than a
// trigram. Each backend seeds its store in bulk and calls this, so both measure the same.
func BenchListSearch(b *testing.B, st store.Store, n int) {
	const page = 200
	for _, bc := range []struct {
		name string
		f    store.Filter
		want int
	}{
		{"IDRange", store.Filter{AfterID: int64(n / 2), Limit: page}, page},
		{"Rare", store.Filter{Search: RareWord, Limit: page}, n / 500},
		{"Common", store.Filter{Search: CommonWord, Limit: page}, page},
		{"CommonNextPage", store.Filter{Search: CommonWord, AfterID: int64(n / 2), Limit: page}, page},
		{"Short", store.Filter{Search: ShortQuery, Limit: page}, -1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bc.f.Kind = store.KindProduct
			for b.Loop() {
				rs, err := st.FindRecords(b.Context(), bc.f)
				if err != nil {
					b.Fatal(err)
				}
				if bc.want >= 0 && len(rs) != bc.want {
					b.Fatalf("%d records, want %d", len(rs), bc.want)
				}
			}
		})
	}
}
