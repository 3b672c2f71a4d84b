package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// reboundKeys rebinds the keys the conflict dialog, the merge view and their messages name.
const reboundKeys = `save: ctrl+w
restore_draft: ctrl+t
reload: "4"
merge: "5"
pick_mine: "7"
pick_theirs: "8"
pick_base: "9"
pick_both: B
undo: U
edit_value: i
`

// withKeys makes a driver read the key map file text.
func withKeys(t *testing.T, text string) func(*Options) {
	path := writeKeyFile(t, text)
	return func(o *Options) { o.KeyFile = path }
}

// mustShow fails unless screen shows every one of want and none of the default keys in
// notWant.
func mustShow(t *testing.T, where, screen string, want, notWant []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(screen, w) {
			t.Errorf("%s does not show %q:\n%s", where, w, screen)
		}
	}
	for _, w := range notWant {
		if strings.Contains(screen, w) {
			t.Errorf("%s shows the default key in %q:\n%s", where, w, screen)
		}
	}
}

// TestKeyLabels_FollowRebinding: with a key map file that rebinds the save, conflict and
// merge keys, every key the conflict dialog, the merge view, their footers, their status
// messages and the help name is the key as bound, never tandem's default.
func TestKeyLabels_FollowRebinding(t *testing.T) {
	_, alice, bob := conflictSetup(t, withKeys(t, reboundKeys))
	bobSaves(t, bob, "price", "12.00")
	alice.waitFor("bob saved v2 (price)")
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	mustShow(t, "the editor", alice.screen(), []string{"ctrl+w save"}, []string{"ctrl+s"})

	alice.key("ctrl+w")
	alice.waitFor("collide:")
	mustShow(t, "the conflict dialog", alice.screen(),
		[]string{"4  reload theirs", "5  merge field by field", "4 reload theirs", "5 merge"},
		[]string{"r  reload", "m  merge", "r reload"})

	alice.key("5")
	alice.key("ctrl+w") // a conflict is left: the message says how to pick
	mustShow(t, "the merge view", alice.screen(),
		[]string{"7 mine", "8 theirs", "9 base", "B both", "i edit value",
			"pick 7 mine, 8 theirs, 9 base, or i to edit", "i: type a value"},
		[]string{"1 mine", "2 theirs", "3 base", "ctrl+s", "enter: type"})

	alice.key("8")
	mustShow(t, "the merge view, all resolved", alice.screen(), []string{"ctrl+w saves"}, []string{"ctrl+s"})
	alice.key("U")
	alice.key("i")
	mustShow(t, "the merge view, editing a value", alice.screen(), []string{"(enter keeps, esc cancels)"}, nil)
	alice.key("esc")

	alice.key("esc") // back to the dialog, and reload theirs
	alice.waitFor("collide:")
	alice.key("4")
	alice.waitFor("reloaded bob's v2")
	mustShow(t, "their changes", alice.screen(), []string{"ctrl+t brings them back", "ctrl+t bring back my draft"}, []string{"ctrl+r"})

	alice.key("f1")
	mustShow(t, "the help", alice.screen(), []string{"ctrl+w", "7/8/9", "ctrl+t"}, []string{"1/2/3", "ctrl+r"})
}

// TestKeyLabels_MergeHunks: in a text field's conflict the merge view names the hunk
// picks and the undo as bound.
func TestKeyLabels_MergeHunks(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice", withKeys(t, reboundKeys))
	base := mustRecord(t, s, 1)
	base.Fields["description"] = "one\nalpha beta gamma\nthree\n"
	cur := base.Clone()
	cur.Version, cur.UpdatedBy = 2, "bob"
	cur.Fields["description"] = "one\nalpha beta GAMMA\nthree\n"
	mine := base.Fields.Clone()
	mine["description"] = "one\nALPHA beta gamma\nthree\n"
	cs := &conflictState{
		ce:   &store.ConflictError{Kind: store.KindProduct, ID: 1, BaseVersion: 1, Current: cur},
		u:    store.Update{BaseVersion: 1, Set: store.Values{"description": mine["description"]}},
		rm:   merge.Records(d.app.c.reg, store.KindProduct, base.Fields, mine, cur.Fields),
		base: base, mine: mine,
	}
	m := newMergeView(d.app.c, cs)
	press := func(k string) string {
		t.Helper()
		m.Update(keyMsg(k))
		return ansi.Strip(m.View())
	}
	mustShow(t, "a text conflict", press("x"), []string{"7 mine 8 theirs 9 base B both"}, []string{"1 mine 2 theirs"})
	mustShow(t, "a word-level merge shown", press("w"), []string{"enter takes it, esc puts it away"}, nil)
	mustShow(t, "a word-level merge taken", press("enter"), []string{"(U undoes it)"}, []string{"u undoes"})
}

// TestKeyLabels_ListHints: the list's hints about sorting and folding name the keys as
// bound.
func TestKeyLabels_ListHints(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	d := newDriver(t, s, "alice", withKeys(t, "sort_next: z\nsort_reverse: O\nfold: F\n"))
	d.key("O") // the id order cannot be reversed: the hint names the sort key
	mustShow(t, "the list", d.screen(), []string{"z sorts by a column"}, []string{"s sorts"})
	d.key("z")
	d.waitFor("by name ▲")
	d.key("tab")
	d.waitUntil("the documents tab", func() bool { return d.app.list.kind == store.KindDocument })
	d.key("z") // a tree is not sorted: the hint names the fold key
	mustShow(t, "the documents", d.screen(), []string{"F folds and unfolds"}, []string{"f folds"})
}
