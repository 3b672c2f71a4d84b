package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tandem-editor/tandem/store"
)

func TestHistory(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	ctx := actorCtx("bob")
	if _, err := s.UpdateRecord(ctx, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1500),
		"description": "A fine product.\nSecond line, edited.\nThird line.\n"}}); err != nil {
		t.Fatal(err)
	}
	sys := store.WithActor(context.Background(), store.Actor{Name: "thumbnailer", Role: store.RoleSystem})
	if _, err := s.UpdateRecord(sys, store.KindProduct, 1, store.Update{BaseVersion: 2, Set: store.Values{"thumbnail": "thumbs/1.png"}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	d.key("h")
	d.waitFor("history of product 1")
	d.waitFor("v2")
	d.golden("history_versions")
	d.key("tab")
	d.waitFor("thumbnailer")
	d.golden("history_ops")
	d.key("esc")
	d.waitFor("[ products ]")
}

// TestHistory_Pages: a product with 10,001 versions. The history screen loads a page of
// versions without their snapshots, and more as the cursor nears the end; pgdn/pgup,
// ctrl+d/ctrl+u, home/g and end/G move as in the list (end loads the rest, and the diff of
// v1 shows what the create wrote); the version column lines up from v10001 down to v1.
func TestHistory_Pages(t *testing.T) {
	const n = 10001
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	ctx := actorCtx("bob")
	for v := int64(1); v < n; v++ {
		if _, err := s.UpdateRecord(ctx, store.KindProduct, 1, store.Update{BaseVersion: v, Set: store.Values{"price": 5000 + v}}); err != nil {
			t.Fatal(err)
		}
	}
	d := newDriver(t, s, "alice")
	d.key("h")
	d.waitFor("▸ v10001 bob")
	h := d.app.screens[scrHistory].(*historyModel)
	if got := len(h.versions); got > 2*historyPageSize {
		t.Fatalf("the history screen loaded %d versions at first, want a page (%d)", got, historyPageSize)
	}
	for _, v := range h.versions {
		if v.Snapshot != nil {
			t.Fatalf("v%d was loaded with its snapshot: the list needs none", v.Version)
		}
	}
	d.waitFor("v10000 → v10001")
	page := h.listRows()
	steps := []struct{ key, want string }{
		{"pgdown", fmt.Sprintf("▸ v%-5d bob", n-page)},
		{"ctrl+d", fmt.Sprintf("▸ v%-5d bob", n-2*page)},
		{"ctrl+u", fmt.Sprintf("▸ v%-5d bob", n-page)},
		{"pgup", "▸ v10001 bob"},
		{"end", "▸ v1     seed"},
		{"home", "▸ v10001 bob"},
		{"G", "▸ v1     seed"},
		{"k", "▸ v2     bob"},
		{"g", "▸ v10001 bob"},
	}
	for _, st := range steps {
		d.key(st.key)
		d.waitFor(st.want)
	}
	d.key("G")
	d.waitFor("created")
	if got := len(h.versions); got != n {
		t.Fatalf("after end: %d versions loaded, want %d", got, n)
	}
	// Rows of every width line up: the "when" column starts at the same place.
	d.key("g")
	d.waitFor("▸ v10001 bob")
	scr := d.screen()
	col := -1
	for _, line := range strings.Split(scr, "\n") {
		if i := strings.Index(line, "2026-"); i >= 0 && strings.Contains(line, " v") {
			i = utf8.RuneCountInString(line[:i]) // the cursor's mark is one column of three bytes
			if col >= 0 && i != col {
				t.Fatalf("the when column starts at %d and at %d:\n%s", col, i, scr)
			}
			col = i
		}
	}

	// Paging down with the cursor: the next page loads as it nears the end of the first.
	s2 := newFakeStore(t)
	mustSeed(t, s2, 1)
	for v := int64(1); v < 3*historyPageSize; v++ {
		if _, err := s2.UpdateRecord(ctx, store.KindProduct, 1, store.Update{BaseVersion: v, Set: store.Values{"price": 5000 + v}}); err != nil {
			t.Fatal(err)
		}
	}
	d = newDriver(t, s2, "alice")
	d.key("h")
	d.waitFor("▸ v600")
	h = d.app.screens[scrHistory].(*historyModel)
	for range historyPageSize/h.listRows() + 1 {
		d.key("pgdown")
	}
	want := 3*historyPageSize - (historyPageSize/h.listRows()+1)*h.listRows()
	d.waitFor(fmt.Sprintf("▸ v%d ", want))
	if got := len(h.versions); got <= historyPageSize || got == 3*historyPageSize && h.more[0] {
		t.Fatalf("after paging past the first page: %d versions loaded (more: %v)", got, h.more[0])
	}
}
