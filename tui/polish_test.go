package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// Issue 13, point 4: the small things a user sees.

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

func TestLocks_HeaderCountsLiveLeases(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	mustLease(t, s, "bob", 2, 10*time.Minute)
	l := mustLease(t, s, "carol", 3, 10*time.Minute)
	if err := s.ReleaseLease(actorCtx("carol"), l.Token); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.key("L")
	d.waitFor("carol")
	if !strings.Contains(d.screen(), "locks  1 live lease · 1 ended lately") {
		t.Fatalf("the header does not count live leases apart:\n%s", d.screen())
	}
}

func TestLocks_EditorReturnsToLocks(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	mustLease(t, s, "bob", 2, 10*time.Minute)
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.key("L")
	d.waitFor("bob")
	d.key("enter")
	d.waitFor("read-only: held by bob")
	d.key("esc")
	d.settle()
	if d.app.screen != scrLocks {
		t.Fatalf("leaving the record went to screen %d, not the locks screen:\n%s", d.app.screen, d.screen())
	}
	d.key("esc")
	d.waitFor("[ products ]")
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

func TestHelp_ListsPagingAndLocks(t *testing.T) {
	d := newDriver(t, newFakeStore(t), "alice")
	d.key("?")
	scr := d.screen()
	for _, want := range []string{"pgup/pgdn page up/down", "locks", "enter   open the record"} {
		if !strings.Contains(scr, want) {
			t.Errorf("help lacks %q:\n%s", want, scr)
		}
	}
}

// TestNoColor_SelectedRowMarked: without colour the selected row of the locks and history
// screens is marked by more than bold.
func TestNoColor_SelectedRowMarked(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	mustLease(t, s, "bob", 2, 10*time.Minute)
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 1,
		Set: store.Values{"price": int64(1500)}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.key("L")
	d.waitFor("bob")
	if !strings.Contains(d.screen(), "▸ product") {
		t.Fatalf("the locks screen's selected row has no marker:\n%s", d.screen())
	}
	d.key("esc")
	d.key("h")
	d.waitFor("history of product 1")
	d.waitFor("v2")
	if !strings.Contains(d.screen(), "▸ v2") {
		t.Fatalf("the history's selected row has no marker:\n%s", d.screen())
	}
}

// TestSmallScreen_KeepsStatusAndFooter: at 15 rows and fewer every screen keeps its status
// line and footer (the form scrolls instead), so a save's message can be seen.
func TestSmallScreen_KeepsStatusAndFooter(t *testing.T) {
	_, alice, bob := conflictSetup(t)
	lastTwo := func(d *driver) (string, string) {
		lines := strings.Split(d.screen(), "\n")
		return lines[len(lines)-2], lines[len(lines)-1]
	}
	for _, h := range []int{15, 10} {
		alice.apply(tea.WindowSizeMsg{Width: 80, Height: h})
		focusField(t, alice, "description")
		if h == 15 {
			alice.golden("editor_body_15rows")
		}
		if _, footer := lastTwo(alice); !strings.Contains(footer, "ctrl+s save") {
			t.Fatalf("%d rows: the editor's footer is gone:\n%s", h, alice.screen())
		}
		if n := strings.Count(alice.screen(), "\n") + 1; n != h {
			t.Fatalf("%d rows: the editor drew %d lines", h, n)
		}
	}
	alice.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	focusField(t, alice, "name")
	alice.typeText(" small")
	alice.key("ctrl+s")
	alice.waitFor("saved v2")
	if status, _ := lastTwo(alice); !strings.Contains(status, "saved v2") {
		t.Fatalf("the save's message is not on the status line:\n%s", alice.screen())
	}
	// The conflict dialog and the merge view.
	bobSaves(t, bob, "price", "12.00")
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	if _, footer := lastTwo(alice); !strings.Contains(footer, "merge") {
		t.Fatalf("the dialog's footer is gone:\n%s", alice.screen())
	}
	alice.key("m")
	alice.waitFor("1 of 1 conflict left")
	if _, footer := lastTwo(alice); !strings.Contains(footer, "mine") {
		t.Fatalf("the merge view's footer is gone:\n%s", alice.screen())
	}
	for _, k := range []string{"esc", "esc"} {
		alice.key(k)
	}
	alice.key("esc")
	alice.key("y")
	alice.waitFor("[ products ]")
	for _, scr := range []string{"h", "L"} {
		alice.key(scr)
		alice.settle()
		if _, footer := lastTwo(alice); !strings.Contains(footer, "esc back") {
			t.Fatalf("screen %s: the footer is gone:\n%s", scr, alice.screen())
		}
		alice.key("esc")
	}
}
