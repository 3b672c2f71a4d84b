package tui

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestEditor_RelativeSaveSaysWhatItWentOnTopOf: a save of relative changes only is never
// refused for a stale version (the store applies it on top); the editor says on top of
// whose versions it went, instead of a bare "saved".
func TestEditor_RelativeSaveSaysWhatItWentOnTopOf(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "stock")
	d.key("-")
	d.key("-")
	d.key("-")
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 1,
		Set: store.Values{"price": int64(1500)}}); err != nil {
		t.Fatal(err)
	}
	d.key("ctrl+s")
	d.waitFor("applied your stock -3 on top of bob's v2 → v3")

	// Two writers in between: the versions as a span, the writers named.
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 3,
		Set: store.Values{"price": int64(1600)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateRecord(actorCtx("carol"), store.KindProduct, 1, store.Update{Add: map[string]int64{"stock": 5}}); err != nil {
		t.Fatal(err)
	}
	d.key("+")
	d.key("ctrl+s")
	d.waitFor("applied your stock +1 on top of v4–v5 by bob, carol → v6")
	if got := mustRecord(t, s, 1).Fields["stock"]; got != int64(20-3+5+1) {
		t.Fatalf("stock = %v, want 23", got)
	}
}

// TestEditor_BannerNamesFieldsByLabel: the live banner names fields as the form does
// ("parent"), never by their internal names ("parent_id").
func TestEditor_BannerNamesFieldsByLabel(t *testing.T) {
	s := newFakeStore(t)
	ctx := actorCtx("carol")
	root, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Handbook"})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Loose page"})
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	d.key("tab")
	d.waitFor("Loose page")
	d.key("j")
	d.key("enter")
	d.waitFor("document 2 · v1")
	if _, err := s.MoveDocument(actorCtx("bob"), doc.ID, &root.ID); err != nil {
		t.Fatal(err)
	}
	d.waitFor("bob saved v2 (parent); you are editing v1")
}
