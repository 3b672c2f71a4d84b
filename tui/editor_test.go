package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

func TestEditor_Open(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 2, "enter")
	d.golden("editor_product")
}

func TestEditor_SaveOnlyChangedFields(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 2, "enter")
	focusField(t, d, "price")
	replaceField(d, "12.50")
	d.key("ctrl+s")
	d.waitFor("saved v2")
	r := mustRecord(t, s, 2)
	if got, want := r.Fields["price"], int64(1250); got != want {
		t.Fatalf("price = %v, want %v", got, want)
	}
	vs, _ := s.FindHistory(context.Background(), store.KindProduct, 2)
	if got := strings.Join(vs[0].Fields, ","); got != "price" {
		t.Fatalf("save wrote fields %q, want only price", got)
	}
}

func TestEditor_CounterIsRelative(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "stock")
	d.key("-")
	d.key("-")
	d.key("-")
	d.key("+")
	d.waitFor("stock -2")
	d.golden("editor_counter")
	// Someone sells one meanwhile: a relative change never conflicts with it.
	if _, err := s.UpdateRecord(actorCtx("shop"), store.KindProduct, 1, store.Update{Add: map[string]int64{"stock": -1}}); err != nil {
		t.Fatal(err)
	}
	d.key("ctrl+s")
	d.waitFor("applied your stock -2 on top of shop's v2 → v3")
	if got := mustRecord(t, s, 1).Fields["stock"]; got != int64(17) {
		t.Fatalf("stock = %v, want 17 (20 - 1 - 2)", got)
	}
}

func TestEditor_EscAsksWhenDirty(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText(" X")
	d.key("esc")
	d.waitFor("Discard your unsaved changes?")
	d.key("n")
	if d.app.screen != scrEditor {
		t.Fatal("n left the editor")
	}
	d.key("esc")
	d.key("y")
	d.waitFor("edits discarded")
	if got := mustRecord(t, s, 1).Fields["name"]; got != "Product 1" {
		t.Fatalf("name = %q after discarding", got)
	}
}

func TestEditor_StoreErrorShownNotFatal(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText("!")
	s.FailNext(store.Errorf(store.EUNAVAILABLE, "connection refused"))
	d.key("ctrl+s")
	d.waitFor("save: the database cannot be reached: connection refused")
	if d.quit {
		t.Fatal("the TUI quit on a store error")
	}
	d.key("ctrl+s")
	d.waitFor("saved v2")
}

func TestEditor_BodyField(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "description")
	d.key("down")
	d.typeText("Typed: ")
	d.golden("editor_body")
	d.key("ctrl+s")
	d.waitFor("saved v2")
	if got, want := mustRecord(t, s, 1).Fields["description"], "A fine product.\nTyped: Second line.\nThird line.\n"; got != want {
		t.Fatalf("description = %q, want %q", got, want)
	}
}

func TestEditor_TypingDuringSaveIsKept(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText("A")
	d.apply(keyMsg("ctrl+s")) // the save is on its way...
	d.apply(keyMsg("B"))      // ...while the person keeps typing
	d.waitFor("saved v2")
	if got := mustRecord(t, s, 1).Fields["name"]; got != "Product 1A" {
		t.Fatalf("saved name %q", got)
	}
	if !strings.Contains(d.screen(), "Product 1AB") {
		t.Fatalf("the key typed during the save was lost:\n%s", d.screen())
	}
}

func TestEditor_FooterOffersCounterKeysOnlyWithACounter(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	if _, err := s.CreateRecord(actorCtx("carol"), store.KindDocument, store.Values{"title": "Handbook"}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	if !strings.Contains(d.screen(), "+/- stock ±1") {
		t.Fatalf("the product editor's footer does not offer +/-:\n%s", d.screen())
	}
	d.key("esc")
	d.key("tab")
	d.waitFor("Handbook")
	d.key("enter")
	d.waitFor("document 1 · v1")
	if strings.Contains(d.screen(), "+/-") {
		t.Fatalf("the document editor's footer offers +/- (documents have no counter):\n%s", d.screen())
	}
}

func TestEditor_StatusGoesWithTheNextEdit(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText("!")
	d.key("ctrl+s")
	d.waitFor("saved v2")
	d.typeText("?")
	if strings.Contains(d.screen(), "saved v2") {
		t.Fatalf("\"saved v2\" still shown after a later edit:\n%s", d.screen())
	}
}

func TestEditor_DocumentParentShowsTitle(t *testing.T) {
	s := newFakeStore(t)
	ctx := actorCtx("carol")
	root, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Handbook"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Onboarding", "parent_id": root.ID}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	d.key("tab")
	d.waitFor("Onboarding")
	d.key("j")
	d.key("enter")
	d.waitFor("document 2 · v1")
	d.waitFor("parent         1 · Handbook")
}

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
	if _, err := s.MoveRecord(actorCtx("bob"), store.KindDocument, doc.ID, store.Move{Parent: &root.ID}); err != nil {
		t.Fatal(err)
	}
	d.waitFor("bob saved v2 (parent); you are editing v1")
}

// TestEditor_TabsAndCRLFStayEditable: a description with a tab and CRLF line endings (the
// CLI accepts both) is editable; the body editor shows the tab as spaces, and saving keeps
// the tab and the CRLF endings.
func TestEditor_TabsAndCRLFStayEditable(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	const desc = "Tab\there\r\nSecond line\r\n"
	if _, err := s.UpdateRecord(actorCtx("cli"), store.KindProduct, 1, store.Update{BaseVersion: 1,
		Set: store.Values{"description": desc}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	if strings.Contains(d.screen(), "control characters") {
		t.Fatalf("a tab and CRLF made the description read-only:\n%s", d.screen())
	}
	if !strings.Contains(d.screen(), "description    Tab    here  (+1 lines)") {
		t.Fatalf("the closed description does not show its first line plainly:\n%s", d.screen())
	}
	focusField(t, d, "description")
	if scr := d.screen(); !strings.Contains(scr, "Tab here") || strings.Contains(scr, `\t`) || strings.Contains(scr, `\r`) {
		t.Fatalf("the body editor does not show the tab as spaces and the line ends as breaks:\n%s", scr)
	}
	d.key("down")
	d.typeText("My ")
	d.key("ctrl+s")
	d.waitFor("saved v3")
	if got, want := mustRecord(t, s, 1).Fields["description"], "Tab\there\r\nMy Second line\r\n"; got != want {
		t.Fatalf("description = %q, want %q (tab and CRLF kept)", got, want)
	}
}

// TestEditor_OtherControlCharactersStayReadOnly: an escape sequence in a description is
// shown escaped and the field cannot be edited (writing it back would be refused).
func TestEditor_OtherControlCharactersStayReadOnly(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, hostileDesc{s}, "alice")
	openProduct(t, d, 1, "enter")
	scr := d.app.Render()
	if strings.Contains(scr, "\x1b[2J") {
		t.Fatalf("raw escape sequence reached the screen: %q", scr)
	}
	for i, fi := range d.app.editor.fields {
		if fi.f.Name == "description" && fi.readOnly != "contains control characters" {
			t.Fatalf("field %d description: read-only %q, want control characters", i, fi.readOnly)
		}
	}
	if !strings.Contains(d.screen(), `Evil\x1b[2J`) {
		t.Fatalf("escaped description not shown:\n%s", d.screen())
	}
}

// hostileDesc is a store whose product 1 has an escape sequence in its description, as
// another program could have written it.
type hostileDesc struct{ store.Store }

func (h hostileDesc) poison(r *store.Record) *store.Record {
	if r != nil && r.ID == 1 && r.Kind == store.KindProduct {
		r.Fields["description"] = "Evil\x1b[2J description\n"
	}
	return r
}

func (h hostileDesc) FindRecord(ctx context.Context, k store.Kind, id int64) (*store.Record, error) {
	r, err := h.Store.FindRecord(ctx, k, id)
	return h.poison(r), err
}
