package storetest

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// testSort: every store lists records in the same order by each sort field, ascending and
// descending, ties by id, text byte by byte (non-ASCII included), and keyset pages of a
// sorted listing join up to the whole listing without gaps or repeats.
func testSort(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := actx(t, actAlice)
	names := []string{"Émile lamp", "apple", "Zebra", "émile", "apple", "Ökotisch", "Zebra", "ß-Stuhl", "01 first"}
	for i, n := range names {
		_, err := s.CreateRecord(ctx, store.KindProduct, store.Values{
			"sku": "S-" + string(rune('a'+i)), "name": n, "price": int64(100 * (i % 3)), "stock": int64(5 - i%4),
			"availability": []string{"in_stock", "backorder", "discontinued"}[i%3],
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.FindRecords(ctx, store.Filter{Kind: store.KindProduct})
	if err != nil {
		t.Fatal(err)
	}
	for _, sf := range s.Registry().SortFields(store.KindProduct) {
		for _, desc := range []bool{false, true} {
			f := store.Filter{Kind: store.KindProduct, Sort: sf.Name, Desc: desc}
			want := slices.Clone(all)
			slices.SortFunc(want, func(a, b *store.Record) int { return store.CompareSort(f, a, b) })
			got, err := s.FindRecords(ctx, f)
			if err != nil {
				t.Fatalf("sort %s desc=%v: %v", sf.Name, desc, err)
			}
			if g, w := sortIDs(got), sortIDs(want); g != w {
				t.Errorf("sort %s desc=%v: ids %s, want %s", sf.Name, desc, g, w)
			}
			// Pages of 2 by keyset give the same listing.
			var paged []*store.Record
			page := f
			page.Limit = 2
			for range len(all) + 1 {
				recs, err := s.FindRecords(ctx, page)
				if err != nil {
					t.Fatalf("page of sort %s: %v", sf.Name, err)
				}
				paged = append(paged, recs...)
				if len(recs) < page.Limit {
					break
				}
				last := recs[len(recs)-1]
				page.AfterValue, page.AfterID = last.Fields[sf.Name], last.ID
			}
			if g, w := sortIDs(paged), sortIDs(want); g != w {
				t.Errorf("paged sort %s desc=%v: ids %s, want %s", sf.Name, desc, g, w)
			}
		}
	}
	// A search and a sort together.
	got, err := s.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: "émile", Sort: "name", Desc: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Fields["name"] != "émile" || got[1].Fields["name"] != "Émile lamp" {
		t.Errorf("search émile sorted by name desc: %v", sortNames(got))
	}
	// Documents sort by title.
	for _, title := range []string{"Zeta", "alpha", "Äther", "Beta"} {
		if _, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": title}); err != nil {
			t.Fatal(err)
		}
	}
	docs, err := s.FindRecords(ctx, store.Filter{Kind: store.KindDocument, Sort: "title"})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, d := range docs {
		titles = append(titles, d.Fields["title"].(string))
	}
	if got, want := strings.Join(titles, ","), "Beta,Zeta,alpha,Äther"; got != want {
		t.Errorf("documents by title: %s, want %s (byte order)", got, want)
	}
	_, err = s.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Sort: "description"})
	requireCode(t, err, store.EINVALID)
	_, err = s.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Sort: "price", AfterValue: "cheap"})
	requireCode(t, err, store.EINVALID)
}

func sortIDs(recs []*store.Record) string {
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(" " + strconv.FormatInt(r.ID, 10))
	}
	return b.String()
}

func sortNames(recs []*store.Record) []any {
	var out []any
	for _, r := range recs {
		out = append(out, r.Fields["name"])
	}
	return out
}
