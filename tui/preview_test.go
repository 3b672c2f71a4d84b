package tui

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/resave"
)

// Every preview the merge view shows equals what its save writes to the store.

// previewOf returns the text the merge view's detail says label will be written as: the
// lines under "will be written as", each without its two-cell origin mark.
func previewOf(t *testing.T, screen, label string) string {
	t.Helper()
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, label+" will be written as") {
			continue
		}
		var out []string
		for _, p := range lines[i+1:] {
			r := []rune(p)
			if len(r) < 3 || (r[0] != '◆' && r[0] != '●' && r[0] != '◈' && r[0] != ' ') || r[1] != ' ' {
				break
			}
			out = append(out, string(r[2:]))
		}
		return strings.Join(out, "\n") + "\n"
	}
	t.Fatalf("no preview of %s on the screen:\n%s", label, screen)
	return ""
}

// rowValue returns what the merge view's row of label says will be written.
func rowValue(t *testing.T, screen, label string) string {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "▸ "))
		if len(f) >= 3 && f[0] == label && (f[1] == "resolved" || f[1] == "clean" || f[1] == "merged") {
			return f[2]
		}
	}
	t.Fatalf("no row for %s on the screen:\n%s", label, screen)
	return ""
}

// TestMergeView_PreviewIsWhatIsSaved: for every way of resolving a text conflict (each pick
// per hunk, all mine, all theirs, the word-level merge, a typed value) and a scalar one
// (mine, theirs, base, a typed value), the preview equals what ctrl+s writes.
func TestMergeView_PreviewIsWhatIsSaved(t *testing.T) {
	const base = "The quick brown fox jumps.\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	const mine = "The slow brown fox jumps.\ntwo\nthree\nfour\nfive\nsix\nSEVEN mine\n"
	const theirs = "The quick brown fox leaps.\ntwo\nthree\nfour\nfive\nsix\nSEVEN theirs\n"
	for _, tc := range []struct {
		name  string
		keys  []string
		typed string // typed into the whole value (enter … esc) before the keys
	}{
		{"mine mine", []string{"1", "1"}, ""},
		{"theirs theirs", []string{"2", "2"}, ""},
		{"base base", []string{"3", "3"}, ""},
		{"both both", []string{"b", "b"}, ""},
		{"mine theirs", []string{"1", "2"}, ""},
		{"all mine", []string{"M"}, ""},
		{"all theirs", []string{"T"}, ""},
		{"words then theirs", []string{"w", "enter", "2"}, ""},
		{"words then both", []string{"w", "enter", "b"}, ""},
		{"typed", nil, "typed in the merge view\nsecond line\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, alice, _ := conflictSetup(t)
			ctx := actorCtx("bob")
			if _, err := s.UpdateRecord(ctx, store.KindProduct, 1, store.Update{BaseVersion: 1,
				Set: store.Values{"description": base}}); err != nil {
				t.Fatal(err)
			}
			// Alice's form is on v1: make v2 her base by reopening.
			alice.key("esc")
			openProduct(t, alice, 1, "enter")
			if _, err := s.UpdateRecord(ctx, store.KindProduct, 1, store.Update{BaseVersion: 2,
				Set: store.Values{"description": theirs}}); err != nil {
				t.Fatal(err)
			}
			alice.app.editor.fields[2].setText(mine)
			alice.key("ctrl+s")
			alice.waitFor("collide:")
			alice.key("m")
			alice.waitFor("1 of 1 conflict left")
			if tc.typed != "" {
				alice.key("enter")
				alice.app.editor.merge.body.SetValue(tc.typed)
				alice.key("esc")
			}
			for _, k := range tc.keys {
				alice.key(k)
			}
			alice.waitFor("0 of 1 conflict left")
			want := previewOf(t, alice.screen(), "description")
			mustSaveMerge(alice)
			if got := mustRecord(t, s, 1).Fields["description"]; got != want {
				t.Fatalf("preview:\n%s\nsaved:\n%s", want, got)
			}
		})
	}
	for _, tc := range []struct {
		name, keys, typed string
	}{
		{"mine", "1", ""}, {"theirs", "2", ""}, {"base", "3", ""}, {"typed", "", "15.50"},
	} {
		t.Run("price "+tc.name, func(t *testing.T) {
			s, alice, bob := conflictSetup(t)
			bobSaves(t, bob, "price", "12.00")
			focusField(t, alice, "price")
			replaceField(alice, "11.00")
			alice.key("ctrl+s")
			alice.waitFor("collide:")
			alice.key("m")
			alice.waitFor("1 of 1 conflict left")
			if tc.typed != "" {
				alice.key("enter")
				replaceField(alice, tc.typed)
				alice.key("enter")
			} else {
				alice.key(tc.keys)
			}
			alice.waitFor("0 of 1 conflict left")
			want := rowValue(t, alice.screen(), "price")
			mustSaveMerge(alice)
			r := mustRecord(t, s, 1)
			f, _ := alice.app.c.reg.Field(store.KindProduct, "price")
			if got := f.Format(r.Fields["price"]); got != want {
				t.Fatalf("preview %q, saved %q", want, got)
			}
		})
	}
}

// mustSaveMerge saves the merge view's result and waits until it is written (or found equal
// to the current version, when it takes theirs everywhere).
func mustSaveMerge(d *driver) {
	d.key("ctrl+s")
	d.waitUntil("the merge saved", func() bool {
		s := d.screen()
		return strings.Contains(s, "saved v") || strings.Contains(s, "nothing to save: the result equals")
	})
}

// TestConflict_RetryPreviewIsWhatIsSaved: when automatic retries gave up, the dialog offers
// "a  retry: apply stock -3 to v2"; a does that: v2's stock less 3 is saved on top of v2.
func TestConflict_RetryPreviewIsWhatIsSaved(t *testing.T) {
	s, alice, bob := conflictSetup(t)
	focusField(t, alice, "stock")
	alice.key("-")
	alice.key("-")
	alice.key("-")
	bobSaves(t, bob, "price", "12.00")
	cur := mustRecord(t, s, 1)
	// Relative saves carry no version check in tandem's stores: make them collide, as a
	// store that checks versions on everything would, until the automatic retries give up.
	n := 0
	s.SetFailure(func(op string) error {
		if op == "UpdateRecord" && n <= resave.MaxRounds {
			n++
			return &store.ConflictError{Kind: store.KindProduct, ID: 1, BaseVersion: 1, Current: cur,
				Since: []store.Change{{Actor: "bob", Version: 2, Fields: []string{"price"}}}}
		}
		return nil
	})
	alice.key("ctrl+s")
	alice.waitFor("a  retry: apply stock -3 to v2")
	alice.key("a")
	alice.waitFor("saved v3")
	r := mustRecord(t, s, 1)
	if got, want := r.Fields["stock"], cur.Fields["stock"].(int64)-3; got != want || r.Version != 3 {
		t.Fatalf("after a: stock %v at v%d, the dialog promised %v at v3", got, r.Version, want)
	}
}
