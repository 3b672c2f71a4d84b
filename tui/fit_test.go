package tui

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestList_EndedLeaseSaysFree: a record whose last lease expired is free on the list, as
// one whose lease was released; the locks screen still says what became of the lease.
func TestList_EndedLeaseSaysFree(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 2,
		Group: store.GroupEditor, TTL: 100e9}); err != nil {
		t.Fatal(err)
	}
	s.Advance(5 * 60e9)
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.waitFor("Product 2")
	var row string
	for _, l := range strings.Split(d.screen(), "\n") {
		if strings.Contains(l, "Product 2") {
			row = l
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(row), "free") || strings.Contains(row, "expired") {
		t.Errorf("row of a record whose lease expired = %q, want it to end in free", row)
	}
	d.key("L")
	d.waitFor("expired")
}

// TestList_FilterBelongsToItsTab: a search applied on one tab stays with it: the next tab
// shows all its records, and the first shows its search again when it comes back.
func TestList_FilterBelongsToItsTab(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	if _, err := s.CreateRecord(actorCtx("bob"), store.KindDocument, store.Values{"title": "Handbook"}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	d.key("/")
	d.typeText("Product 2")
	d.key("enter")
	d.waitUntil("the search applied", func() bool { return len(d.app.list.rows) == 1 })
	d.key("tab")
	d.waitFor("Handbook")
	if d.app.list.search != "" || strings.Contains(d.screen(), "matching") {
		t.Fatalf("the products' search %q went to the documents tab:\n%s", d.app.list.search, d.screen())
	}
	d.key("tab")
	d.waitUntil("the products' search back", func() bool {
		return d.app.list.kind == store.KindProduct && d.app.list.loaded && len(d.app.list.rows) == 1
	})
	if !strings.Contains(d.screen(), `matching "Product 2"`) {
		t.Errorf("the products tab came back without its search:\n%s", d.screen())
	}
}

// TestList_TitleNamesOrder: the title line names the order, the id order and a tree's too.
func TestList_TitleNamesOrder(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	if _, err := s.CreateRecord(actorCtx("bob"), store.KindDocument, store.Values{"title": "Handbook"}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	title := func() string { return strings.SplitN(d.screen(), "\n", 2)[0] }
	if !strings.HasSuffix(title(), "1 of 2 · by id") {
		t.Errorf("products in id order: title %q does not say so", title())
	}
	d.key("s")
	d.waitFor("by name ▲")
	d.key("tab")
	d.waitFor("Handbook")
	if !strings.HasSuffix(title(), "1 of 1 · as a tree") {
		t.Errorf("documents as a tree: title %q does not say so", title())
	}
	d.key("/")
	d.typeText("hand")
	d.key("enter")
	d.waitFor(`matching "hand"`)
	if !strings.HasSuffix(title(), `matching "hand" · by id`) {
		t.Errorf("a tree kind searched is listed by id: title %q does not say so", title())
	}
}
