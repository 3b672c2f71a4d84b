package storetest

import (
	"slices"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// testSearch: a search finds the same records on every store, for all of Unicode (issue 11):
// the searched fields are the registry's, text and query are folded by store.SearchFold, and
// the match is a plain substring test (no wildcards). The records are named by their sku (or
// title), and every query spells out the records it must find.
func testSearch(t *testing.T, open Opener) {
	t.Run("Unicode", func(t *testing.T) {
		s := fresh(t, open)
		ctx := actx(t, actAlice)
		products := []struct{ sku, name string }{
			{"E-1", "Émile Zola"},                 // composed É
			{"E-2", "e\u0301mile"},                // e + combining acute: the same text, decomposed
			{"E-3", "EMILE"},                      // no accent: another word for a case-folding search
			{"S-1", "Straße"},                     // ß
			{"S-2", "STRASSE"},                    // SS
			{"S-3", "STRAẞE"},                     // capital sharp s
			{"T-1", "İstanbul"},                   // Turkish capital dotted I
			{"T-2", "ISTANBUL"},                   //
			{"G-1", "Σίσυφος"},                    // final sigma
			{"G-2", "ΣΊΣΥΦΟΣ"},                    // capital sigma
			{"C-1", "Ёлка"},                       // Cyrillic capital io
			{"C-2", "елка"},                       // ie without diaeresis: another letter
			{"Z-1", "Ham\u200bmer"},               // zero-width space inside the word
			{"W-1", "50% off_sale"},               // LIKE's wildcards, as text
			{"ＡＢＣ-9", "wide"},                     // full-width sku
			{"N-1", "Café\u00a0Royal"},            // non-breaking space
			{"X-1", "plain"},                      // found by nothing above
			{"sku-Ё", "found by its sku"},         // the sku is searched too
			{"E-4", "i\u0307stanbul fa\u00e7ade"}, // i + combining dot, as folding writes İ
		}
		bySKU := map[int64]string{}
		for _, p := range products {
			r, err := s.CreateRecord(ctx, store.KindProduct, store.Values{"sku": p.sku, "name": p.name})
			if err != nil {
				t.Fatalf("create %s: %v", p.sku, err)
			}
			bySKU[r.ID] = p.sku
		}
		docs := []string{"Ψυχή", "Straßenbahn", "İzmir"}
		byTitle := map[int64]string{}
		for _, title := range docs {
			byTitle[mustCreateDoc(t, s, title, nil).ID] = title
		}
		search := func(kind store.Kind, q string) []string {
			t.Helper()
			rs, err := s.FindRecords(t.Context(), store.Filter{Kind: kind, Search: q})
			if err != nil {
				t.Fatalf("search %s %q: %v", kind, q, err)
			}
			out := []string{}
			for _, r := range rs {
				if kind == store.KindProduct {
					out = append(out, bySKU[r.ID])
				} else {
					out = append(out, byTitle[r.ID])
				}
			}
			slices.Sort(out)
			return out
		}
		check := func(kind store.Kind, q string, want ...string) {
			t.Helper()
			if want == nil {
				want = []string{}
			}
			slices.Sort(want)
			if got := search(kind, q); !slices.Equal(got, want) {
				t.Errorf("search %s %+q = %q, want %q", kind, q, got, want)
			}
		}
		P, D := store.KindProduct, store.KindDocument

		check(P, "émile", "E-1", "E-2")
		check(P, "ÉMILE", "E-1", "E-2")
		check(P, "E\u0301MILE", "E-1", "E-2")
		check(P, "emile", "E-3") // accents are not folded away
		check(P, "straße", "S-1", "S-2", "S-3")
		check(P, "STRASSE", "S-1", "S-2", "S-3")
		check(P, "ẞ", "S-1", "S-2", "S-3")
		check(P, "istanbul", "T-1", "T-2", "E-4")
		check(P, "İSTANBUL", "T-1", "T-2", "E-4")
		check(P, "i\u0307stanbul", "T-1", "T-2", "E-4")
		check(P, "σίσυφος", "G-1", "G-2")
		check(P, "ΣΥΦΟΣ", "G-1", "G-2")
		check(P, "ς", "G-1", "G-2")
		check(P, "ёлка", "C-1")
		check(P, "ЁЛКА", "C-1")
		check(P, "е\u0308лка", "C-1") // decomposed ё
		check(P, "елка", "C-2")
		check(P, "ё", "C-1", "sku-Ё")
		check(P, "hammer", "Z-1")
		check(P, "HAM\u200dMER", "Z-1") // zero-width joiner in the query
		check(P, "%", "W-1")
		check(P, "_", "W-1")
		check(P, "5_%")
		check(P, "abc-9", "ＡＢＣ-9")
		check(P, "ＡＢＣ", "ＡＢＣ-9")
		check(P, "café royal", "N-1")
		check(P, "FAÇADE", "E-4")
		check(P, "nothing")
		check(P, "ψυχή")
		check(D, "ΨΥΧΉ", "Ψυχή")
		check(D, "STRASSE", "Straßenbahn")
		check(D, "izmir", "İzmir")
		check(D, "émile")

		// Saves keep the folded text current: a new name is found by its new text and no
		// longer by its old one; a save of another field leaves the search as it was.
		ids := map[string]int64{}
		for id, sku := range bySKU {
			ids[sku] = id
		}
		mustSave(t, s, ctx, P, ids["E-3"], store.Update{BaseVersion: 1, Set: store.Values{"name": "ÉMILE"}})
		mustSave(t, s, ctx, P, ids["S-2"], store.Update{BaseVersion: 1, Set: store.Values{"name": "Weg"}})
		mustSave(t, s, ctx, P, ids["E-1"], store.Update{Add: map[string]int64{"stock": 3}})
		mustSave(t, s, ctx, P, ids["X-1"], store.Update{BaseVersion: 1, Set: store.Values{"sku": "Ǆ-1"}})
		check(P, "émile", "E-1", "E-2", "E-3")
		check(P, "emile")
		check(P, "strasse", "S-1", "S-3")
		check(P, "ǆ", "X-1") // the sku's folded column follows the new sku
		check(P, "plain", "X-1")
		titles := map[string]int64{}
		for id, title := range byTitle {
			titles[title] = id
		}
		if _, err := s.LockedUpdate(actx(t, actWorker), D, titles["Straßenbahn"], func(*store.Record) (store.Update, error) {
			return store.Update{Set: store.Values{"word_count": int64(2)}}, nil
		}); err != nil {
			t.Fatalf("system save: %v", err)
		}
		check(D, "STRASSE", "Straßenbahn")
		psyche := titles["Ψυχή"]
		mustSave(t, s, ctx, D, psyche, store.Update{BaseVersion: mustFind(t, s, D, psyche).Version,
			Set: store.Values{"title": "ΣΟΦΊΑ"}})
		check(D, "ψυχή")
		check(D, "σοφία", "Ψυχή") // named by its first title
	})

	t.Run("Registry", func(t *testing.T) {
		// The registry decides which fields are searched: without name, a search looks in
		// the sku only.
		reg := customRegistry(t, map[string]string{
			"name": "{name: name, type: string, owner: editor, rule: scalar, required: true, search: false}",
		})
		s := freshWith(t, open, store.Options{Registry: reg})
		a := mustCreateProduct(t, s, "Émile-1")
		mustCreateProduct(t, s, "other")
		rs, err := s.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct, Search: "ÉMILE"})
		if err != nil || len(rs) != 1 || rs[0].ID != a.ID {
			t.Errorf("search by sku = %v, %v; want product %d", rs, err, a.ID)
		}
		// mustCreateProduct names every product "Product <sku>": the name is not searched.
		rs, err = s.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct, Search: "product"})
		if err != nil || len(rs) != 0 {
			t.Errorf("search in the unsearched name = %v, %v; want nothing", rs, err)
		}
	})
}
