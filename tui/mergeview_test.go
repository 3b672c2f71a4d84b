package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// mergeViewOn opens the merge view on alice's description against bob's, both edited from
// product 1's v1 in two places far apart (two hunks).
func mergeViewOn(t *testing.T, mine, theirs string) (*mergeModel, func(string) string) {
	t.Helper()
	return mergeViewFrom(t, "one\ntwo\nthree\nfour\nfive\nsix\nseven\n", mine, theirs)
}

// mergeViewFrom is mergeViewOn from another base description.
func mergeViewFrom(t *testing.T, baseText, mine, theirs string) (*mergeModel, func(string) string) {
	t.Helper()
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	base := mustRecord(t, s, 1)
	base.Fields["description"] = baseText
	cur := base.Clone()
	cur.Version, cur.UpdatedBy = 2, "bob"
	cur.Fields["description"] = theirs
	mv := base.Fields.Clone()
	mv["description"] = mine
	cs := &conflictState{
		ce:   &store.ConflictError{Kind: store.KindProduct, ID: 1, BaseVersion: 1, Current: cur},
		u:    store.Update{BaseVersion: 1, Set: store.Values{"description": mine}},
		rm:   merge.Records(d.app.c.reg, store.KindProduct, base.Fields, mv, cur.Fields),
		base: base, mine: mv,
	}
	m := newMergeView(d.app.c, cs)
	press := func(k string) string {
		t.Helper()
		if cmd := m.Update(keyMsg(k)); cmd != nil {
			if _, ok := cmd().(mergeDoneMsg); ok && k != "ctrl+s" {
				t.Fatalf("%s ended the merge view", k)
			}
		}
		return ansi.Strip(m.View())
	}
	return m, press
}

func description(t *testing.T, m *mergeModel) any {
	t.Helper()
	v, _ := m.rm.Field("description").Value()
	return v
}

func TestMergeView_HunksUndoAndEdit(t *testing.T) {
	m, press := mergeViewOn(t,
		"ONE-a\ntwo\nthree\nfour\nfive\nsix\nSEVEN-a\n",
		"ONE-b\ntwo\nthree\nfour\nfive\nsix\nSEVEN-b\n")
	if got := press("n"); !strings.Contains(got, "hunk 2 of 2") || !strings.Contains(got, "+SEVEN-a") || !strings.Contains(got, "-seven") {
		t.Fatalf("n did not show the second hunk as a diff against base:\n%s", got)
	}
	press("p")
	// Enter shows the open hunks with conflict markers; leaving them in takes nothing.
	if got := press("enter"); !strings.Contains(got, "<<<<<<< mine") {
		t.Fatalf("editing an open text conflict shows no markers:\n%s", got)
	}
	if got := press("esc"); !strings.Contains(got, "still has conflict markers") || m.rm.Conflicts() != 1 {
		t.Fatalf("a value with markers was taken:\n%s", got)
	}
	press("2") // hunk 1: theirs
	if got := press("M"); !strings.Contains(got, "0 of 1 conflict left") {
		t.Fatalf("M did not resolve the remaining hunk:\n%s", got)
	}
	if got, want := description(t, m), "ONE-b\ntwo\nthree\nfour\nfive\nsix\nSEVEN-a\n"; got != want {
		t.Fatalf("description = %q, want %q", got, want)
	}
	press("u") // undo M
	if got := press("T"); !strings.Contains(got, "0 of 1 conflict left") {
		t.Fatalf("T did not resolve the remaining hunk:\n%s", got)
	}
	if got, want := description(t, m), "ONE-b\ntwo\nthree\nfour\nfive\nsix\nSEVEN-b\n"; got != want {
		t.Fatalf("description = %q, want %q", got, want)
	}
	// An edit of the whole value, then undo back to the hunk picks.
	press("enter")
	m.body.SetValue("mine and theirs\n")
	if got := press("esc"); !strings.Contains(got, "mine and theirs (edited)") {
		t.Fatalf("edited value not shown:\n%s", got)
	}
	// Undo says what it reverted (the merge result's own undo stack; the view keeps none).
	if got := press("u"); !strings.Contains(got, "undid value: edited in description") {
		t.Fatalf("undo of the edit does not say what it reverted:\n%s", got)
	}
	if got, want := description(t, m), "ONE-b\ntwo\nthree\nfour\nfive\nsix\nSEVEN-b\n"; got != want {
		t.Fatalf("after undoing the edit: description = %q, want %q", got, want)
	}
	press("u")
	press("u")
	if got := press("u"); !strings.Contains(got, "nothing to undo") || m.rm.Conflicts() != 1 {
		t.Fatalf("undo past the first pick:\n%s", got)
	}
	if got := press("ctrl+s"); !strings.Contains(got, "1 conflict left") {
		t.Fatalf("save with an open conflict was not refused:\n%s", got)
	}
}

// TestMergeView_WordProposal: w shows a conflicting hunk's word-level merge with each side's
// words marked, and nothing is applied until enter; enter takes it, u undoes it and says so.
// Changed words that overlap get the refusal, naming them, and nothing changes.
func TestMergeView_WordProposal(t *testing.T) {
	const para = "The committee met on Tuesday to review the figures, and freight costs remain the largest concern."
	m, press := mergeViewFrom(t, para+"\n",
		strings.Replace(para, "Tuesday", "Monday", 1)+"\n",
		strings.Replace(para, "largest", "biggest", 1)+"\n")
	got := press("w")
	for _, want := range []string{"word-level merge", "●[Monday]", "◆[biggest]", "enter takes it"} {
		if !strings.Contains(got, want) {
			t.Fatalf("w does not show %q:\n%s", want, got)
		}
	}
	if m.rm.Conflicts() != 1 {
		t.Fatal("showing the proposal applied it")
	}
	press("esc") // put away: nothing applied
	if m.rm.Conflicts() != 1 || m.words != nil {
		t.Fatal("esc applied the proposal or kept it shown")
	}
	press("w")
	if got := press("enter"); !strings.Contains(got, "word-level merge taken") || m.rm.Conflicts() != 0 {
		t.Fatalf("enter did not take the proposal:\n%s", got)
	}
	want := strings.Replace(strings.Replace(para, "Tuesday", "Monday", 1), "largest", "biggest", 1) + "\n"
	if got := description(t, m); got != want {
		t.Fatalf("description = %q, want %q", got, want)
	}
	if got := press("u"); !strings.Contains(got, "undid hunk 1: word-level merge in description") || m.rm.Conflicts() != 1 {
		t.Fatalf("undo of the word merge:\n%s", got)
	}

	m, press = mergeViewFrom(t, para+"\n",
		strings.Replace(para, "Tuesday", "Monday", 1)+"\n",
		strings.Replace(para, "Tuesday", "Friday", 1)+"\n")
	if got := press("w"); !strings.Contains(got, `both sides changed "Tuesday"`) || m.words != nil {
		t.Fatalf("overlapping words were not refused by name:\n%s", got)
	}
	if m.rm.Conflicts() != 1 {
		t.Fatal("a refused proposal resolved the hunk")
	}
}

// TestConflict_MergeWords: from a real conflict (alice and bob changed different words of one
// line), the merge view's w shows the word-level merge (goldens at 80×24 and 15 rows), and
// enter takes it.
func TestConflict_MergeWords(t *testing.T) {
	s, alice, _ := conflictSetup(t)
	cur := mustRecord(t, s, 1)
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: cur.Version,
		Set: store.Values{"description": "A fine product.\n2nd line.\nThird line.\n"}}); err != nil {
		t.Fatal(err)
	}
	alice.app.editor.fields[2].setText("A fine product.\nSecond row.\nThird line.\n")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.key("m")
	alice.waitFor("1 of 1 conflict left")
	alice.key("w")
	alice.waitFor("word-level merge")
	alice.golden("merge_view_words")
	alice.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	alice.golden("merge_view_words_15")
	alice.apply(tea.WindowSizeMsg{Width: 80, Height: 24})
	alice.key("enter")
	alice.waitFor("0 of 1 conflict left")
	if v, _ := alice.app.editor.merge.rm.Field("description").Value(); v != "A fine product.\n2nd row.\nThird line.\n" {
		t.Fatalf("description after taking the word merge = %q", v)
	}
}
