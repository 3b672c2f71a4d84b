package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Every path that brings edits back applies the fields they changed on top of the current
// version: a field only the other side changed keeps their value, a field only the edits
// changed takes theirs, a field both changed opens the merge view.

const (
	bbDesc  = "A fine product.\nSecond line.\nThird line.\n"
	bbTheir = "A fine product.\nSecond line.\nThird line, says bob.\n"
)

// aliceEdits makes alice's edits in the open editor: the name, and the price.
func aliceEdits(t *testing.T, d *driver) {
	t.Helper()
	focusField(t, d, "name")
	d.typeText(" by alice")
	focusField(t, d, "price")
	replaceField(d, "11.00")
	d.key("tab") // a field change writes the draft
	d.settle()
}

// bobSavesDescAndPrice is bob's save from his own terminal: the description and the price.
func bobSavesDescAndPrice(t *testing.T, s store.Store, base int64, token string) {
	t.Helper()
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: base, LeaseToken: token,
		Set: store.Values{"description": bbTheir, "price": int64(1200)}}); err != nil {
		t.Fatal(err)
	}
}

// mustBroughtBack checks that bringing alice's edits back opened the merge view on the price
// alone, keeps hers there (1), saves, and that the store then holds her name, his
// description and her price.
func mustBroughtBack(t *testing.T, s store.Store, d *driver) {
	t.Helper()
	d.waitFor("1 of 1 conflict left")
	if got := d.screen(); !strings.Contains(got, "price         conflict") {
		t.Fatalf("the merge view does not show the price as the collision:\n%s", got)
	}
	d.key("1")
	d.waitFor("0 of 1 conflict left")
	d.key("ctrl+s")
	d.waitFor("saved v")
	r := mustRecord(t, s, 1)
	if got := r.Fields["description"]; got != bbTheir {
		t.Errorf("description = %q, want bob's %q (changed only by him)", got, bbTheir)
	}
	if got := r.Fields["name"]; got != "Product 1 by alice" {
		t.Errorf("name = %q, want alice's (changed only by her)", got)
	}
	if got := r.Fields["price"]; got != int64(1100) {
		t.Errorf("price = %v, want alice's 1100 (picked in the merge view)", got)
	}
}

func TestBringBack_AfterReload(t *testing.T) {
	s, alice := mustReloadedAfterCollision(t)
	alice.key("ctrl+r")
	mustBroughtBack(t, s, alice)
}

func TestBringBack_DraftAfterCrash(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	dir := t.TempDir()
	d := newDriver(t, s, "alice", func(o *Options) { o.DraftDir = dir })
	openProduct(t, d, 1, "enter")
	aliceEdits(t, d)
	bobSavesDescAndPrice(t, s, 1, "")
	// "Crash": a new TUI on the same draft directory.
	d2 := newDriver(t, s, "alice", func(o *Options) { o.DraftDir = dir })
	openProduct(t, d2, 1, "enter")
	d2.waitFor("Unsaved edits from")
	d2.key("y")
	mustBroughtBack(t, s, d2)
}

// TestBringBack_DraftAfterLostLease: bob takes the lease while alice edits (her edits go to
// the draft), saves and releases; alice, back on the record, takes her draft.
func TestBringBack_DraftAfterLostLease(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	aliceEdits(t, d)
	l := mustLease(t, s, "bob", 1, 10*time.Minute)
	d.waitFor("your edits are kept as a draft")
	d.key("esc")
	d.waitFor("[ products ]")
	bobSavesDescAndPrice(t, s, 1, l.Token)
	if _, err := s.ReleaseLease(actorCtx("bob"), l.Token); err != nil {
		t.Fatal(err)
	}
	openProduct(t, d, 1, "enter")
	d.waitFor("Unsaved edits from")
	d.key("y")
	mustBroughtBack(t, s, d)
}

// TestBringBack_ExternalEditor: the form moved to bob's version while $EDITOR ran (his
// lease ended meanwhile); the text the editor gives back is an edit of what it was handed.
func TestBringBack_ExternalEditor(t *testing.T) {
	for _, tc := range []struct {
		name, edited string
		collide      bool
	}{
		{"other lines", "A fine product, edited in vi.\nSecond line.\nThird line.\n", false},
		{"same line", "A fine product.\nSecond line.\nThird line, says vi.\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeStore(t)
			mustSeed(t, s, 1)
			d := newDriver(t, s, "alice")
			openProduct(t, d, 1, "enter")
			focusField(t, d, "description")
			e := d.app.editor
			e.fields[e.focus].setText(bbDesc)
			start := e.currentDraft() // what ctrl+e hands out
			field := e.focus
			l := mustLease(t, s, "bob", 1, 10*time.Minute)
			d.waitFor("bob took the lease")
			bobSavesDescAndPrice(t, s, 1, l.Token)
			if _, err := s.ReleaseLease(actorCtx("bob"), l.Token); err != nil {
				t.Fatal(err)
			}
			d.waitUntil("the form shows bob's v2", func() bool { return e.rec.Version == 2 })
			d.apply(extEditedMsg{ed: e, field: field, value: tc.edited, start: start})
			if tc.collide {
				d.waitFor("1 of 1 conflict left")
				d.key("1")
				d.waitFor("0 of 1 conflict left")
			}
			d.key("ctrl+s")
			d.waitFor("saved v3")
			r := mustRecord(t, s, 1)
			want := "A fine product, edited in vi.\nSecond line.\nThird line, says bob.\n"
			if tc.collide {
				want = tc.edited
			}
			if got := r.Fields["description"]; got != want {
				t.Errorf("description = %q, want %q", got, want)
			}
			if got := r.Fields["price"]; got != int64(1200) {
				t.Errorf("price = %v, want bob's 1200 (not touched in the editor)", got)
			}
		})
	}
}

// TestBringBack_CleanDraft: a draft that changed only the name, offered after bob changed
// the description: no merge view, the name is alice's and the description stays bob's.
func TestBringBack_CleanDraft(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	dir := t.TempDir()
	d := newDriver(t, s, "alice", func(o *Options) { o.DraftDir = dir })
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText(" by alice")
	d.key("tab")
	d.settle()
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 1,
		Set: store.Values{"description": bbTheir}}); err != nil {
		t.Fatal(err)
	}
	d2 := newDriver(t, s, "alice", func(o *Options) { o.DraftDir = dir })
	openProduct(t, d2, 1, "enter")
	d2.waitFor("Unsaved edits from")
	d2.key("y")
	d2.waitFor("back on top of v2 (name)")
	d2.key("ctrl+s")
	d2.waitFor("saved v3")
	r := mustRecord(t, s, 1)
	if r.Fields["name"] != "Product 1 by alice" || r.Fields["description"] != bbTheir {
		t.Fatalf("name %q, description %q: want alice's name and bob's description", r.Fields["name"], r.Fields["description"])
	}
}

// TestBringBack_MergeCancelled: esc in the merge view a bringing back opened, then esc in the
// dialog, leaves the edits to bring back again with ctrl+r.
func TestBringBack_MergeCancelled(t *testing.T) {
	s, alice := mustReloadedAfterCollision(t)
	alice.key("ctrl+r")
	alice.waitFor("1 of 1 conflict left")
	alice.key("esc")
	alice.waitFor("collide:")
	alice.key("esc")
	alice.waitFor("ctrl+r brings them back")
	alice.key("ctrl+r")
	mustBroughtBack(t, s, alice)
}

// TestBringBack_RelativeStockInMergePreview: alice's edits hold a relative stock change (+3)
// and a price; bob set the stock absolutely (7) and the price. Bringing her edits back opens
// the merge view on the price; its stock row says what ctrl+s writes (her +3 on his 7), not
// "unchanged", and the store then holds 10.
func TestBringBack_RelativeStockInMergePreview(t *testing.T) {
	s, alice, _ := conflictSetup(t)
	aliceEdits(t, alice)
	focusField(t, alice, "stock")
	for range 3 {
		alice.key("+")
	}
	alice.waitFor("stock +3")
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 1,
		Set: store.Values{"price": int64(1200), "stock": int64(7)}}); err != nil {
		t.Fatal(err)
	}
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.key("r")
	alice.waitFor("their changes, now v2")
	alice.key("ctrl+r")
	alice.waitFor("1 of 1 conflict left")
	alice.key("1")
	alice.waitFor("0 of 1 conflict left")
	scr := alice.screen()
	if got := rowValue(t, scr, "stock"); got != "10" {
		t.Errorf("the merge view says stock will be written as %q, want 10 (7 + 3)\n%s", got, scr)
	}
	alice.key("ctrl+s")
	alice.waitFor("saved v")
	if got := mustRecord(t, s, 1).Fields["stock"]; got != int64(10) {
		t.Errorf("stock = %v, want 10 (bob's 7, alice's +3)", got)
	}
}

// TestBringBack_SavedMergeIsNotKept: once the merge view a bringing back opened is saved,
// the edits are in the store: ctrl+r has nothing left to bring back, instead of opening the
// merge again on her own save (where picking mine would undo the theirs she just chose).
func TestBringBack_SavedMergeIsNotKept(t *testing.T) {
	s, alice := mustReloadedAfterCollision(t)
	alice.key("ctrl+r")
	alice.waitFor("1 of 1 conflict left")
	alice.key("2")
	alice.waitFor("0 of 1 conflict left")
	alice.key("ctrl+s")
	alice.waitFor("saved v")
	alice.key("ctrl+r")
	alice.waitFor("no kept draft to bring back")
	if got := mustRecord(t, s, 1).Fields["price"]; got != int64(1200) {
		t.Errorf("price = %v, want bob's 1200 (picked in the merge view)", got)
	}
}

// reloadAndTypeCategories is alice's conflict with bob's price (aliceEdits), reloaded with r,
// then "typed after" put into the categories of the reloaded form, which writes the draft.
func reloadAndTypeCategories(t *testing.T, s store.Store, alice *driver) {
	t.Helper()
	aliceEdits(t, alice)
	bobSavesDescAndPrice(t, s, 1, "")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.key("r")
	alice.waitFor("their changes, now v2")
	alice.key("esc")
	alice.waitFor("product 1 · v2")
	focusField(t, alice, "categories")
	alice.typeText("typedafter")
	alice.key("tab")
	alice.settle()
}

// TestBringBack_KeptSurvivesTyping: after a reload, alice types in the reloaded form; the
// draft on disk still holds the edits the reload kept, so a TUI that ends now (a crash, a
// signal) offers both her kept edits and what she typed since.
func TestBringBack_KeptSurvivesTyping(t *testing.T) {
	dir := t.TempDir()
	s, alice, _ := conflictSetup(t, func(o *Options) { o.DraftDir = dir })
	reloadAndTypeCategories(t, s, alice)
	d2 := newDriver(t, s, "alice", func(o *Options) { o.DraftDir = dir })
	openProduct(t, d2, 1, "enter")
	d2.waitFor("Unsaved edits from")
	d2.key("y")
	mustBroughtBack(t, s, d2)
	if got := mustRecord(t, s, 1).Fields["categories"]; !slices.Equal(got.([]string), []string{"typedafter"}) {
		t.Errorf("categories = %v, want what alice typed after the reload", got)
	}
}

// TestBringBack_KeptSurvivesSave: after a reload, alice saves what she typed in the reloaded
// form without bringing her kept edits back; the draft then still holds them.
func TestBringBack_KeptSurvivesSave(t *testing.T) {
	dir := t.TempDir()
	s, alice, _ := conflictSetup(t, func(o *Options) { o.DraftDir = dir })
	reloadAndTypeCategories(t, s, alice)
	alice.key("ctrl+s")
	alice.waitFor("saved v3")
	d2 := newDriver(t, s, "alice", func(o *Options) { o.DraftDir = dir })
	openProduct(t, d2, 1, "enter")
	d2.waitFor("Unsaved edits from")
	d2.key("y")
	mustBroughtBack(t, s, d2)
}

// TestBringBack_DialogReloadKeepsTyping: what alice typed after a reload stays in the form
// when bringing her edits back collides and she answers the dialog with r (as with esc).
func TestBringBack_DialogReloadKeepsTyping(t *testing.T) {
	s, alice, _ := conflictSetup(t)
	reloadAndTypeCategories(t, s, alice)
	alice.key("ctrl+r")
	alice.waitFor("1 of 1 conflict left")
	alice.key("esc")
	alice.waitFor("collide:")
	alice.key("r")
	alice.waitFor("your edits were not brought back: ctrl+r brings them back")
	if got := alice.screen(); !strings.Contains(got, "categories     typedafter") {
		t.Fatalf("what alice typed after the reload is gone from the form:\n%s", got)
	}
	alice.key("ctrl+r")
	mustBroughtBack(t, s, alice)
	if got := mustRecord(t, s, 1).Fields["categories"]; !slices.Equal(got.([]string), []string{"typedafter"}) {
		t.Errorf("categories = %v, want what alice typed after the reload", got)
	}
}

// TestBringBack_KeptSurvivesSecondReload: after a reload, alice's save of what she typed
// collides with another of bob's saves and she reloads again: ctrl+r then brings back both
// her first edits and what she typed after the first reload.
func TestBringBack_KeptSurvivesSecondReload(t *testing.T) {
	s, alice := mustReloadedAfterCollision(t)
	alice.key("esc")
	alice.waitFor("product 1 · v2")
	focusField(t, alice, "sku")
	alice.typeText("-A")
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 2,
		Set: store.Values{"sku": "SKU-1B", "stock": int64(5)}}); err != nil {
		t.Fatal(err)
	}
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.key("r")
	alice.waitFor("their changes, now v3")
	alice.key("ctrl+r")
	alice.waitFor("2 of 2 conflicts left")
	alice.key("1")
	alice.waitFor("1 of 2 conflicts left")
	alice.key("1")
	alice.waitFor("0 of 2 conflicts left")
	alice.key("ctrl+s")
	alice.waitFor("saved v4")
	r := mustRecord(t, s, 1)
	if r.Fields["name"] != "Product 1 by alice" || r.Fields["price"] != int64(1100) || r.Fields["sku"] != "SKU-1-A" ||
		r.Fields["stock"] != int64(5) {
		t.Errorf("after the second reload and ctrl+r: %v; want alice's name, price and sku (picked), bob's stock", r.Fields)
	}
}

// mustReloadedAfterCollision is the README's demo up to the reload: alice's edits collide
// with bob's description and price, and she reloads (r), keeping her edits for ctrl+r.
func mustReloadedAfterCollision(t *testing.T) (store.Store, *driver) {
	t.Helper()
	s, alice, _ := conflictSetup(t)
	aliceEdits(t, alice)
	bobSavesDescAndPrice(t, s, 1, "")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.key("r")
	alice.waitFor("their changes, now v2")
	return s, alice
}
