package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// rowIDs are the ids of the list's rows on screen, in order.
func rowIDs(scr string) []string {
	var out []string
	for _, l := range strings.Split(scr, "\n")[2:] {
		f := strings.Fields(strings.TrimPrefix(l, "▸"))
		if len(f) > 0 && f[0] != "" && f[0][0] >= '0' && f[0][0] <= '9' {
			out = append(out, f[0])
		}
	}
	return out
}

// TestList_SortAndColumns: a wide terminal shows price, stock and availability; s cycles the
// sort column (name, price, stock...), o reverses it, the header marks the order, and the
// pages come from the store in that order (keyset paging past the first page included).
func TestList_SortAndColumns(t *testing.T) {
	s := newFakeStore(t)
	ctx := actorCtx("seed")
	// Prices fall as ids rise, so the price order is the reverse of the id order.
	for i := 1; i <= pageSize+20; i++ {
		if _, err := s.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "S-" + itoa(int64(i)),
			"name": "Item " + itoa(int64(1000-i)), "price": int64(100000 - i), "stock": int64(i % 7),
			"availability": []string{"in_stock", "backorder", "discontinued"}[i%3]}); err != nil {
			t.Fatal(err)
		}
	}
	d := newDriver(t, s, "alice")
	d.apply(tea.WindowSizeMsg{Width: 120, Height: 24})
	d.waitFor("price  stock availability")
	d.golden("list_columns_wide")
	d.key("s") // name ▲
	d.waitFor("by name ▲")
	d.key("s") // price ▲
	d.waitFor("by price ▲")
	if !strings.Contains(d.screen(), "price▲") {
		t.Fatalf("header does not mark the price order:\n%s", d.screen())
	}
	if got := rowIDs(d.screen()); len(got) < 3 || got[0] != "220" || got[1] != "219" {
		t.Fatalf("by price ascending, rows %v, want 220, 219, ...", got)
	}
	d.golden("list_sorted_price")
	// Past the first page: the keyset page continues the price order.
	for range pageSize + 19 {
		d.key("j")
	}
	d.waitFor(itoa(pageSize+20) + " of 220")
	if sel := selectedLine(d.screen()); !strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(sel, "▸")), "1 ") {
		t.Fatalf("last row by price ascending is not product 1: %q", sel)
	}
	d.key("o")
	d.waitFor("by price ▼")
	if got := rowIDs(d.screen()); got[0] != "1" || got[1] != "2" {
		t.Fatalf("by price descending, rows %v, want 1, 2, ...", got)
	}
	// At 80 columns the extra columns go, the order stays named in the title.
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	d.waitFor("by price ▼")
	if strings.Contains(d.screen(), "availability") {
		t.Fatalf("narrow list shows the extra columns:\n%s", d.screen())
	}
	d.golden("list_sorted_15rows")
	for range 3 { // stock, availability, id
		d.key("s")
	}
	d.waitFor("sorted by id")
	if got := rowIDs(d.screen()); got[0] != "1" {
		t.Fatalf("back to the id order, rows %v", got)
	}
}

// TestList_FoldDocuments: f folds the selected document's subtree ([+N] says how many
// children are hidden) and unfolds it again.
func TestList_FoldDocuments(t *testing.T) {
	s := newFakeStore(t)
	mustDocs(t, s, []string{"Handbook", "Onboarding", "First day", "Release notes"}, []int{-1, 0, 1, -1})
	d := newDriver(t, s, "alice")
	d.key("tab")
	d.waitFor("[-] Handbook")
	d.key("f")
	d.waitFor("[+1] Handbook")
	scr := d.screen()
	if strings.Contains(scr, "Onboarding") || strings.Contains(scr, "First day") || !strings.Contains(scr, "Release notes") {
		t.Fatalf("fold did not hide exactly the subtree:\n%s", scr)
	}
	d.golden("list_documents_folded")
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	d.golden("list_documents_folded_15rows")
	d.key("j")
	if sel := selectedLine(d.screen()); !strings.Contains(sel, "Release notes") {
		t.Fatalf("the cursor does not skip the folded rows: %q", sel)
	}
	d.key("k")
	d.key("f")
	d.waitFor("unfolded 1 · Handbook")
	if !strings.Contains(d.screen(), "First day") {
		t.Fatalf("unfold did not show the subtree again:\n%s", d.screen())
	}
	d.key("s")
	d.waitFor("documents are listed as a tree")
}
