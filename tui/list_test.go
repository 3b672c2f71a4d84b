package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

func TestList_Products(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 30)
	d := newDriver(t, s, "alice")
	d.key("j")
	d.key("j")
	d.golden("list_products")
}

func TestList_Documents(t *testing.T) {
	s := newFakeStore(t)
	ctx := actorCtx("carol")
	root, _ := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Handbook"})
	ch, _ := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Onboarding", "parent_id": root.ID})
	s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "First day", "parent_id": ch.ID})
	s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Release notes"})
	d := newDriver(t, s, "alice")
	d.key("tab")
	d.waitFor("Handbook")
	d.golden("list_documents")
}

func TestList_LockIndicators(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 5)
	for _, h := range []struct {
		who string
		id  int64
	}{{"bob", 2}, {"alice", 3}, {"carol", 4}} {
		if _, err := s.AcquireLease(actorCtx(h.who), store.LeaseRequest{Kind: store.KindProduct, RecordID: h.id,
			Group: store.GroupEditor, TTL: 100e9}); err != nil {
			t.Fatal(err)
		}
	}
	s.Advance(5 * 60e9) // 5 minutes: all expired...
	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 2,
		Group: store.GroupEditor, TTL: 300e9}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcquireLease(actorCtx("alice"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 3,
		Group: store.GroupEditor, TTL: 100e9}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.golden("list_locks")
}

func TestList_LiveUpdate(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	d := newDriver(t, s, "alice")
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 2, store.Update{BaseVersion: 1,
		Set: store.Values{"name": "Renamed by bob"}}); err != nil {
		t.Fatal(err)
	}
	d.waitFor("Renamed by bob")
	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 2,
		Group: store.GroupEditor, TTL: 100e9}); err != nil {
		t.Fatal(err)
	}
	d.waitFor("bob since 10:05")
}

func TestList_ManyProductsPaged(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2*pageSize+10)
	d := newDriver(t, s, "alice")
	if got := len(d.app.list.rows); got != pageSize {
		t.Fatalf("loaded %d rows at open, want one page of %d", got, pageSize)
	}
	for range pageSize {
		d.apply(keyMsg("j"))
	}
	d.settle()
	if got := len(d.app.list.rows); got <= pageSize {
		t.Fatalf("scrolling did not load the next page: %d rows", got)
	}
	d.key("j")
	if !strings.Contains(d.screen(), "201 of 410") {
		t.Fatalf("position not shown:\n%s", d.screen())
	}
}

func TestList_Filter(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 30)
	d := newDriver(t, s, "alice")
	d.key("/")
	d.typeText("Product 2")
	d.key("enter")
	d.waitFor(`matching "Product 2"`)
	if got := len(d.app.list.rows); got != 11 { // 2, 20..29
		t.Fatalf("filter kept %d rows, want 11", got)
	}
}

func TestList_NewRecord(t *testing.T) {
	s := newFakeStore(t)
	d := newDriver(t, s, "alice")
	d.key("n")
	d.waitFor("new product")
	d.typeText("NEW-1")
	d.key("tab")
	d.typeText("A new lamp")
	d.key("ctrl+s")
	d.waitFor("created product 1")
	d.key("esc")
	d.waitFor("A new lamp")
}

func TestList_WriterColumnNamesWorkers(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	sys := store.WithActor(context.Background(), store.Actor{Name: "worker:thumbnail@host:4711", Role: store.RoleSystem})
	if _, err := s.UpdateRecord(sys, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"thumbnail": "t/1.png"}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	if !strings.Contains(d.screen(), "v2 ⚙thumbnail") {
		t.Fatalf("the writer column does not name the worker's task:\n%s", d.screen())
	}
}

func TestList_CursorOnCreatedRecord(t *testing.T) {
	for _, n := range []int{30, 2*pageSize + 10} { // all loaded; pages still to load
		s := newFakeStore(t)
		mustSeed(t, s, n)
		d := newDriver(t, s, "alice")
		d.key("j")
		d.key("j")
		d.key("n")
		d.waitFor("new product")
		d.typeText("NEW-1")
		d.key("tab")
		d.typeText("A new lamp")
		d.key("ctrl+s")
		d.waitFor("created product")
		d.key("esc")
		d.settle()
		if r := d.app.list.selected(); r == nil || r.ID != int64(n+1) {
			t.Fatalf("%d products: the cursor is on %+v, not on the new product %d:\n%s", n, r, n+1, d.screen())
		}
		if !strings.Contains(d.screen(), "A new lamp") {
			t.Fatalf("the new product is not in sight:\n%s", d.screen())
		}
	}
}

func TestList_SearchCountSaysPlus(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, pageSize+10)
	d := newDriver(t, s, "alice")
	d.key("/")
	d.typeText("Product")
	d.key("enter")
	d.waitFor(`matching "Product"`)
	if !strings.Contains(d.screen(), `1 of 200+ matching "Product"`) {
		t.Fatalf("a search that filled a page does not say there are more:\n%s", d.screen())
	}
}

// TestList_PositionUsesThousands: the header's position groups its digits as the count
// does ("1,003 of 1,005", not "1003 of 1,005").
func TestList_PositionUsesThousands(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1005)
	d := newDriver(t, s, "alice")
	for i := 0; i < 1002; i++ {
		d.apply(keyMsg("j"))
		if d.app.list.cursor+1 >= len(d.app.list.rows) {
			d.settle() // the next page loads
		}
	}
	d.settle()
	if scr := d.screen(); !strings.Contains(scr, "1,003 of 1,005") {
		t.Fatalf("position not shown as 1,003 of 1,005:\n%s", scr)
	}
}

// TestList_SearchLoadingNotCounted: between applying a search (or clearing it) and its
// first page, the rows on screen are the old list's; the header says loading rather than
// count them as the search's ("1 of 30 matching" over rows that do not match).
func TestList_SearchLoadingNotCounted(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 30)
	d := newDriver(t, s, "alice")
	d.key("/")
	d.typeText("Product 2")
	d.apply(keyMsg("enter")) // the page is asked for, not yet applied
	if scr := d.screen(); !strings.Contains(scr, `loading… matching "Product 2"`) || strings.Contains(scr, "of 30") {
		t.Fatalf("before the search's page came:\n%s", scr)
	}
	d.settle()
	d.waitFor(`1 of 11 matching "Product 2"`)

	d.key("/")
	d.apply(keyMsg("esc")) // clears the search
	if scr := d.screen(); !strings.Contains(scr, "loading…") || strings.Contains(scr, "of 11") {
		t.Fatalf("before the cleared list's page came:\n%s", scr)
	}
	d.settle()
	d.waitFor("1 of 30")
}
