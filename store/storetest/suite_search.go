package storetest

import (
	"maps"
	"slices"
	"strings"
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
		check(D, "ψυχή", "Ψυχή")  // its body still says "Some text about Ψυχή."
		check(D, "σοφία", "Ψυχή") // named by its first title
	})

	t.Run("Text", func(t *testing.T) { testSearchText(t, open) })

	t.Run("SortedPage", func(t *testing.T) {
		// A page of a search sorted by a field is the first of all matches in that order,
		// for an indexed query and a short one: a lookup may stop after a page of ids only
		// when the listing is in id order (here the names run against the ids).
		s := fresh(t, open)
		ctx := actx(t, actAlice)
		var want []int64
		for i := range 10 {
			r, err := s.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "SP-" + string(rune('0'+i)), "name": "Lamp " + string(rune('z'-i))})
			if err != nil {
				t.Fatal(err)
			}
			want = append([]int64{r.ID}, want...)
		}
		for _, q := range []string{"LAMP", "la"} {
			rs, err := s.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: q, Sort: "name", Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, r := range rs {
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, want[:3]) {
				t.Errorf("search %q sorted by name, first 3 = %v, want %v (Lamp q, r, s)", q, ids, want[:3])
			}
		}
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
		// Without description, its words are not found; with it (the default), they are.
		reg = customRegistry(t, map[string]string{
			"description": "{name: description, type: text, owner: editor, rule: text, search: false}",
		})
		s = freshWith(t, open, store.Options{Registry: reg})
		mustCreateProduct(t, s, "D-1") // description "line one\nline two\n"
		for _, q := range []string{"line two", "ne"} {
			rs, err = s.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct, Search: q})
			if err != nil || len(rs) != 0 {
				t.Errorf("search %q in the unsearched description = %v, %v; want nothing", q, rs, err)
			}
		}
	})
}

// paragraph returns a long paragraph of filler prose with word spliced in at about the
// middle, so that a search must find words inside long text, not at its start.
func paragraph(word string) string {
	const filler = "The committee reviewed the quarterly figures and agreed to revisit the " +
		"supplier contracts before the end of the season, noting that freight costs had risen. "
	return strings.Repeat(filler, 20) + word + " " + strings.Repeat(filler, 20)
}

// testSearchText: a search finds words inside descriptions, categories, bodies and tags,
// not only in skus, names and titles, with the same folding, on long text; queries shorter
// than a trigram (which a trigram index cannot answer) find the same as long ones would;
// FTS and LIKE syntax in a query is text; saves keep the index current.
func testSearchText(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := actx(t, actAlice)
	P, D := store.KindProduct, store.KindDocument
	type prod struct {
		sku, desc string
		cats      []string
	}
	products := []prod{
		{"P-CAFE", paragraph("Un café crème à Paris."), []string{"Boissons"}},
		{"P-STRASSE", paragraph("Die STRASSE war nass."), []string{"Verkehr"}},
		{"P-IST", paragraph("Made in İstanbul by hand."), nil},
		{"P-GREEK", paragraph("Ο ΣΊΣΥΦΟΣ κυλά την πέτρα."), []string{"Μύθοι"}},
		{"P-RU", paragraph("Новогодняя ЁЛКА и игрушки."), []string{"Праздник"}},
		{"P-SYNTAX", paragraph(`say "hi" OR NEAR(a b) * ^x {sku}: 100% a_b`), nil},
		{"P-CATS", "plain", []string{"GARTEN", "Küchengeräte"}},
		{"P-PLAIN", paragraph("nothing special here"), nil},
	}
	ids := map[string]int64{}
	for _, p := range products {
		vals := store.Values{"sku": p.sku, "name": "item", "description": p.desc}
		if p.cats != nil {
			vals["categories"] = p.cats
		}
		r, err := s.CreateRecord(ctx, P, vals)
		if err != nil {
			t.Fatalf("create %s: %v", p.sku, err)
		}
		ids[p.sku] = r.ID
	}
	docs := map[string]int64{}
	for _, d := range []struct {
		title, body string
		tags        []string
	}{
		{"Handbook", paragraph("Onboarding: ask Émile for a badge."), []string{"HR"}},
		{"Ops", paragraph("Rotate the keys every ΜΉΝΑ."), []string{"Sécurité", "ops"}},
		{"Empty", "", nil},
	} {
		vals := store.Values{"title": d.title, "body": d.body}
		if d.tags != nil {
			vals["tags"] = d.tags
		}
		r, err := s.CreateRecord(ctx, D, vals)
		if err != nil {
			t.Fatalf("create %s: %v", d.title, err)
		}
		docs[d.title] = r.ID
	}
	names := map[store.Kind]map[int64]string{P: {}, D: {}}
	for k, v := range ids {
		names[P][v] = k
	}
	for k, v := range docs {
		names[D][v] = k
	}
	check := func(kind store.Kind, q string, want ...string) {
		t.Helper()
		rs, err := s.FindRecords(t.Context(), store.Filter{Kind: kind, Search: q})
		if err != nil {
			t.Fatalf("search %s %+q: %v", kind, q, err)
		}
		got := []string{}
		for _, r := range rs {
			got = append(got, names[kind][r.ID])
		}
		if want == nil {
			want = []string{}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("search %s %+q = %q, want %q", kind, q, got, want)
		}
	}
	all := slices.Sorted(maps.Keys(ids))
	allBut := func(skus ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(s string) bool { return slices.Contains(skus, s) })
	}

	// Words inside long descriptions, every fold.
	check(P, "CAFÉ CRÈME", "P-CAFE")
	check(P, "café", "P-CAFE")
	check(P, "straße war", "P-STRASSE")
	check(P, "istanbul", "P-IST")
	check(P, "İSTANBUL", "P-IST")
	check(P, "σίσυφος", "P-GREEK")
	check(P, "ёлка и", "P-RU")
	check(P, "freight costs", allBut("P-CATS")...) // the filler, in every long description
	check(P, "costs had risen. Un", "P-CAFE")      // across the filler and the word
	check(P, "nothing special", "P-PLAIN")
	check(P, "nowhere at all")
	// Paging a search (the TUI's list): pages of 2 after an id give the same records in id
	// order as one search, on every store, whichever index answers.
	for _, q := range []string{"freight costs", "e"} {
		whole, err := s.FindRecords(t.Context(), store.Filter{Kind: P, Search: q})
		if err != nil {
			t.Fatal(err)
		}
		var paged []*store.Record
		for after := int64(0); ; {
			rs, err := s.FindRecords(t.Context(), store.Filter{Kind: P, Search: q, AfterID: after, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) == 0 {
				break
			}
			paged = append(paged, rs...)
			after = rs[len(rs)-1].ID
		}
		idsOf := func(rs []*store.Record) (out []int64) {
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		if !slices.Equal(idsOf(paged), idsOf(whole)) || len(whole) < 7 {
			t.Errorf("search %q in pages of 2 = %v, in one = %v (want the same, 7 or more)", q, idsOf(paged), idsOf(whole))
		}
	}
	// Categories, one item a line: a query finds an item, not two items joined.
	check(P, "küchengeräte", "P-CATS")
	check(P, "KÜCHENGERÄTE", "P-CATS")
	check(P, "garten", "P-CATS")
	check(P, "räte garten")
	check(P, "μύθοι", "P-GREEK")
	check(P, "праздник", "P-RU")
	// FTS5 and LIKE syntax is text.
	check(P, `"hi" or`, "P-SYNTAX")
	check(P, "near(a b) *", "P-SYNTAX")
	check(P, "{sku}:", "P-SYNTAX")
	check(P, "100% a_b", "P-SYNTAX")
	check(P, "100%%")
	check(P, `"`, "P-SYNTAX")
	// Shorter than a trigram: the same substring test, without the index.
	check(P, "ß", "P-CAFE", "P-STRASSE") // "ss": Boissons and STRASSE
	check(P, "Ё", "P-RU")
	check(P, "%", "P-SYNTAX")
	check(P, "ä", "P-CATS")
	check(P, "ς", "P-GREEK")
	check(P, "zq")
	// Documents: bodies and tags.
	check(D, "ÉMILE", "Handbook")
	check(D, "émile for a badge", "Handbook")
	check(D, "μήνα", "Ops")
	check(D, "SÉCURITÉ", "Ops")
	check(D, "hr", "Handbook") // the tag
	check(D, "rotate", "Ops")
	check(D, "revisit", "Handbook", "Ops")

	// Saves keep the index current: the new text is found, the old is not; a save of other
	// fields leaves it as it was.
	mustSave(t, s, ctx, P, ids["P-CAFE"], store.Update{BaseVersion: 1,
		Set: store.Values{"description": paragraph("Ein Chai in Köln."), "categories": []string{"Chai"}}})
	mustSave(t, s, ctx, P, ids["P-RU"], store.Update{Add: map[string]int64{"stock": 2}})
	check(P, "café")
	check(P, "boissons")
	check(P, "chai in köln", "P-CAFE")
	check(P, "CHAI", "P-CAFE")
	check(P, "ёлка", "P-RU")
	mustSave(t, s, ctx, D, docs["Handbook"], store.Update{BaseVersion: 1,
		Set: store.Values{"body": "Émile left.", "tags": []string{}}})
	check(D, "badge")
	check(D, "émile left", "Handbook")
	check(D, "revisit", "Ops")
	check(D, "hr")
}
