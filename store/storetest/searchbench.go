package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"

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
