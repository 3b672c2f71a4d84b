package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

func TestShortAll(t *testing.T) {
	f, err := store.DefaultRegistry().Field(store.KindProduct, "name")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		vs   []any
		want []string
	}{
		{[]any{"short", "other"}, []string{"short", "other"}},
		{[]any{"", "x"}, []string{"∅", "x"}},
		{[]any{"Deluxe kettle, 1.7 litres, blue", "Deluxe kettle, 1.7 litres, red"}, []string{"…s, blue", "…s, red"}},
		{[]any{"Deluxe kettle, 1.7 litres", "Deluxe kettle, 1.7 litres, red"}, []string{"…res", "…res, red"}},
		{[]any{"Same long value all along", "Same long value all along"}, []string{"Same long…", "Same long…"}},
	} {
		got := shortAll(f, 10, tc.vs...)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("shortAll(%q) = %q, want %q", tc.vs, got, tc.want)
		}
	}
}

// TestConflict_DialogShowsWhereLongValuesDiffer: two long names that differ only at the end
// are not both cut to the same prefix.
func TestConflict_DialogShowsWhereLongValuesDiffer(t *testing.T) {
	_, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "name", "Deluxe stainless steel kettle, 1.7 litres, red")
	focusField(t, alice, "name")
	replaceField(alice, "Deluxe stainless steel kettle, 1.7 litres, blue")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	var row string
	for _, l := range strings.Split(alice.screen(), "\n") {
		if strings.Contains(l, "  name ") {
			row = l
		}
	}
	if !strings.Contains(row, "yours …s, blue") || !strings.Contains(row, "theirs …s, red") {
		t.Fatalf("the dialog hides where the names differ: %q", row)
	}
}

func TestConflict_LiveBanner(t *testing.T) {
	_, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "price", "12.00")
	alice.waitFor("bob saved v2 (price); you are editing v1")
}

func TestConflict_CleanAutoMerge(t *testing.T) {
	s, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "price", "12.00")
	focusField(t, alice, "name")
	replaceField(alice, "Better name")
	alice.key("ctrl+s")
	alice.waitFor("merged with bob's v2 (price); saved v3")
	r := mustRecord(t, s, 1)
	if r.Fields["name"] != "Better name" || r.Fields["price"] != int64(1200) {
		t.Fatalf("record after auto-merge: name %v price %v", r.Fields["name"], r.Fields["price"])
	}
}

func TestConflict_Dialog(t *testing.T) {
	_, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "price", "12.00")
	alice.waitFor("bob saved v2 (price)") // the feed's banner, part of the golden below
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.golden("conflict_dialog")
	alice.key("a")
	alice.waitFor("retry is not available: price is an absolute change")
	alice.golden("conflict_dialog_retry_refused")
	alice.key("esc")
	alice.waitFor("not saved: bob saved v2")
	alice.golden("conflict_back_to_editor")
}

func TestConflict_Reload(t *testing.T) {
	s, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "price", "12.00")
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.key("r")
	alice.waitFor("their changes, now v2")
	alice.golden("conflict_reload")
	alice.key("esc")
	alice.waitFor("product 1 · v2")
	if !strings.Contains(alice.screen(), "price          12.00") {
		t.Fatalf("reload did not load their price:\n%s", alice.screen())
	}
	// Both changed the price: bringing her edits back opens the merge view.
	alice.key("ctrl+r")
	alice.waitFor("1 of 1 conflict left")
	alice.key("1")
	alice.key("ctrl+s")
	alice.waitFor("saved v3")
	if got := mustRecord(t, s, 1).Fields["price"]; got != int64(1100) {
		t.Fatalf("price = %v after bringing the draft back, want 1100", got)
	}
}

func TestConflict_ReloadByPolicy(t *testing.T) {
	s, alice, bob := conflictSetup(t, func(o *Options) { o.OnConflict = OnConflictReload })
	bobSaves(t, bob, "price", "12.00")
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.key("ctrl+s")
	alice.waitFor("their changes, now v2")
	if got := mustRecord(t, s, 1).Version; got != 2 {
		t.Fatalf("reload wrote: version %d", got)
	}
}

func TestConflict_Retry(t *testing.T) {
	s, alice, bob := conflictSetup(t, func(o *Options) { o.OnConflict = OnConflictRetry })
	focusField(t, alice, "stock")
	alice.key("-")
	alice.key("-")
	alice.key("-")
	bobSaves(t, bob, "price", "12.00")
	// A relative update carries no version condition in tandem's stores, so make this one
	// meet a conflict the way a store that checks versions on everything would.
	cur := mustRecord(t, s, 1)
	var once bool
	s.SetFailure(func(op string) error {
		if op == "UpdateRecord" && !once {
			once = true
			return &store.ConflictError{Kind: store.KindProduct, ID: 1, BaseVersion: 1, Current: cur,
				Since: []store.Change{{Actor: "bob", Version: 2, Fields: []string{"price"}}}}
		}
		return nil
	})
	alice.key("ctrl+s")
	alice.waitFor("applied your stock -3 on top of bob's v2 → v3")
	r := mustRecord(t, s, 1)
	if r.Fields["stock"] != int64(17) || r.Fields["price"] != int64(1200) {
		t.Fatalf("after retry: stock %v price %v", r.Fields["stock"], r.Fields["price"])
	}
}

func TestConflict_Merge(t *testing.T) {
	s, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "price", "12.00")
	ctx := actorCtx("bob")
	cur := mustRecord(t, s, 1)
	if _, err := s.UpdateRecord(ctx, store.KindProduct, 1, store.Update{BaseVersion: cur.Version,
		Set: store.Values{"description": "A fine product.\nSecond line, says bob.\nThird line.\n"}}); err != nil {
		t.Fatal(err)
	}
	// Alice, still on v1, changes description (another line and the same line) and price.
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.app.editor.fields[2].setText("A fine product, says alice.\nSecond line, alice.\nThird line.\n")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.golden("conflict_dialog_two")
	alice.key("m")
	alice.waitFor("2 of 2 conflicts left")
	alice.golden("merge_view_text")
	alice.key("b") // the description hunk: both, mine first
	alice.waitFor("1 of 2 conflicts left")
	alice.golden("merge_view_scalar")
	alice.key("u")
	alice.waitFor("2 of 2 conflicts left")
	alice.key("1") // the description hunk: mine
	alice.waitFor("1 of 2 conflicts left")
	alice.key("2") // price: theirs
	alice.waitFor("0 of 2 conflicts left")
	alice.golden("merge_view_done")
	alice.key("k")
	alice.golden("merge_view_preview")
	alice.key("ctrl+s")
	alice.waitFor("merged with bob's v3; saved v4")
	r := mustRecord(t, s, 1)
	if got, want := r.Fields["price"], int64(1200); got != want {
		t.Errorf("price = %v, want bob's %v", got, want)
	}
	if got, want := r.Fields["description"], "A fine product, says alice.\nSecond line, alice.\nThird line.\n"; got != want {
		t.Errorf("description = %q, want %q", got, want)
	}
}

func TestConflict_MergeNewCollisionReturnsToDialog(t *testing.T) {
	s, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "price", "12.00")
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.key("m")
	alice.waitFor("1 of 1 conflict left")
	alice.key("1")
	// Bob saves again before alice saves her merge.
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 2,
		Set: store.Values{"price": int64(1300)}}); err != nil {
		t.Fatal(err)
	}
	alice.key("ctrl+s")
	alice.waitFor("bob saved v3; you edited v2")
}

func TestConflict_SameUserInTwoTerminals(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	one, two := newDriver(t, s, "alice"), newDriver(t, s, "alice")
	openProduct(t, one, 1, "enter")
	openProduct(t, two, 1, "enter")
	bobSaves(t, one, "price", "12.00")
	two.waitFor("alice saved v2 (price); you are editing v1")
	focusField(t, two, "price")
	replaceField(two, "13.00")
	two.key("ctrl+s")
	two.waitFor("collide:      price")
}

// TestConflict_DialogRetryOffered renders the dialog for a save made of relative changes only
// (as it appears when automatic retries gave up): retry is offered, not disabled.
func TestConflict_DialogRetryOffered(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	base := mustRecord(t, s, 1)
	cur := base.Clone()
	cur.Version, cur.UpdatedBy = 2, "bob"
	cur.Fields["price"] = int64(1200)
	mine := base.Fields.Clone()
	mine["stock"] = int64(17)
	deltas := map[string]int64{"stock": -3}
	cs := &conflictState{
		ce:     &store.ConflictError{Kind: store.KindProduct, ID: 1, BaseVersion: 1, Current: cur, Since: []store.Change{{Actor: "bob", Version: 2, Fields: []string{"price"}}}},
		u:      store.Update{BaseVersion: 1, Add: deltas},
		rm:     merge.Records(d.app.c.reg, store.KindProduct, base.Fields, mine, cur.Fields),
		base:   base,
		mine:   mine,
		deltas: deltas,
	}
	mustGolden(t, "conflict_dialog_retry_offered", ansi.Strip(fitScreen(newConflict(d.app.c, cs).View(), 80, 24)))
}
