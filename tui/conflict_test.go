package tui

import (
	"strings"
	"testing"

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
