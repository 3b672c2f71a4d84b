package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

func TestHighlight_FoldsLikeTheSearch(t *testing.T) {
	mark := func(s string) string { return matchOn + s + matchOff }
	for _, tc := range []struct{ s, query, want string }{
		{"Straße 5", "strasse", mark("Straße") + " 5"},
		{"STRASSE", "straße", mark("STRASSE")},
		{"in İstanbul", "istanbul", "in " + mark("İstanbul")},
		{"e\u0301mile Zola", "ÉMILE", mark("e\u0301mile") + " Zola"}, // the accent goes with its letter
		{"ΣΊΣΥΦΟΣ", "σίσυφος", mark("ΣΊΣΥΦΟΣ")},
		{"Ёлка и ёлка", "ЁЛКА", mark("Ёлка") + " и " + mark("ёлка")},
		{"a ß b", "s", "a " + mark("ß") + " b"}, // half of "ss" marks the whole letter, once
		{"ham\u200bmer", "hammer", mark("ham\u200bmer")},
		{"plain", "zz", "plain"},
		{"plain", "", "plain"},
	} {
		if got := highlight(tc.s, tc.query); got != tc.want {
			t.Errorf("highlight(%q, %q) = %q, want %q", tc.s, tc.query, got, tc.want)
		}
	}
}

// TestList_SearchMarksMatches: during a search the list marks the match in the title, and a
// record found by its description shows where: the field and the words around the match.
func TestList_SearchMarksMatches(t *testing.T) {
	s := newFakeStore(t)
	ctx := store.WithActor(context.Background(), store.Actor{Name: "seed", Role: store.RoleEditor})
	for _, v := range []store.Values{
		{"sku": "L-1", "name": "Brass desk lamp", "description": "Warm light."},
		{"sku": "S-2", "name": "Stool", "description": "Oak.\nGreat with a brass lamp nearby.\n"},
		{"sku": "T-3", "name": "Table", "description": "Pine."},
	} {
		if _, err := s.CreateRecord(ctx, store.KindProduct, v); err != nil {
			t.Fatal(err)
		}
	}
	d := newDriver(t, s, "alice")
	d.key("/")
	d.typeText("BRASS")
	d.key("enter")
	d.waitFor(`matching "BRASS"`)
	raw := d.app.Render()
	if !strings.Contains(raw, matchOn+"Brass"+matchOff+" desk lamp") {
		t.Errorf("the title's match is not marked:\n%q", raw)
	}
	screen := d.screen()
	if !strings.Contains(screen, "Stool …") || !strings.Contains(raw, matchOn+"brass"+matchOff) {
		t.Errorf("a record found by its description does not show where:\n%s", screen)
	}
	if strings.Contains(screen, "Table") {
		t.Errorf("a record without the text is listed:\n%s", screen)
	}
	// A wide list names the field.
	d.apply(tea.WindowSizeMsg{Width: 140, Height: 24})
	if screen := d.screen(); !strings.Contains(screen, "Stool description: Great with a brass lamp nearby.") {
		t.Errorf("a wide list does not name the field that matched:\n%s", screen)
	}

	// The editor marks it too, and says on which line of a long text it is.
	d.key("j")
	d.key("enter")
	d.waitFor("Stool")
	if screen := d.screen(); !strings.Contains(screen, "match on line 2") {
		t.Errorf("the editor does not say where the match is in the description:\n%s", screen)
	}
	d.key("esc")
	d.key("k")
	d.key("enter")
	d.waitFor("Brass desk lamp")
	if raw := d.app.Render(); !strings.Contains(raw, matchOn+"Brass"+matchOff) {
		t.Errorf("the editor does not mark the match in the name:\n%q", raw)
	}
}

// BenchmarkHighlight_Row is what a redraw of one list row costs during a search whose match
// is deep in a long description (the snippet looks through the first 16 KiB). Run:
// go test ./tui -run '^$' -bench Highlight
func BenchmarkHighlight_Row(b *testing.B) {
	reg := store.DefaultRegistry()
	desc := strings.Repeat("Plain words of a long description, line after line.\n", 300) + "the Zephyrine thread\n"
	r := &store.Record{Kind: store.KindProduct, Fields: store.Values{"sku": "S-1", "name": "Stool", "description": desc}}
	for b.Loop() {
		if searchCell(reg, r, "Stool", "zephyrine", 40) == "" {
			b.Fatal("no cell")
		}
	}
}

// BenchmarkHighlight_MatchLine is what a redraw of the editor costs for a long body that the
// search did not match: the whole bounded scan, and the remembered answer. Run: go test ./tui -run '^$' -bench Highlight
func BenchmarkHighlight_MatchLine(b *testing.B) {
	body := strings.Repeat("Plain words of a long body, line after line, Straße und Ёлка.\n", 20000)
	b.Run("Scan", func(b *testing.B) {
		for b.Loop() {
			if matchLine(body, "zephyrine") != "" {
				b.Fatal("a match")
			}
		}
	})
	b.Run("Remembered", func(b *testing.B) { // what a redraw costs after the first
		var m matchLineMemo
		for b.Loop() {
			if m.matchLine(body, "zephyrine") != "" {
				b.Fatal("a match")
			}
		}
	})
}
