package bodyedit

import (
	"math/rand/v2"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestModel_UndoRedo(t *testing.T) {
	undo := tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl}
	redo := tea.KeyPressMsg{Code: 'y', Mod: tea.ModCtrl}
	m := mustModel(t, "one\ntwo\n", 20, 5, 1, 3)
	m = send(t, m, " words", "enter", "three")
	if got, want := m.Value(), "one\ntwo words\nthree\n"; got != want {
		t.Fatalf("typed: %q, want %q", got, want)
	}
	// One step per word and the space after it: "three", the line break, "words", " ".
	var seen []string
	for m.CanUndo() {
		m, _ = m.Update(undo)
		seen = append(seen, m.Value())
	}
	want := []string{"one\ntwo words\n\n", "one\ntwo words\n", "one\ntwo \n", "one\ntwo\n"}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Fatalf("undo steps:\n got %q\nwant %q", seen, want)
	}
	m, _ = m.Update(redo)
	m, _ = m.Update(redo)
	if got := m.Value(); got != "one\ntwo words\n" {
		t.Fatalf("after two redos: %q", got)
	}
	// A new edit forgets what could be redone.
	m = send(t, m, "!")
	if m.CanRedo() {
		t.Fatal("redo still possible after a new edit")
	}
	m = send(t, m, "backspace", "backspace", "backspace")
	m, _ = m.Update(undo)
	if got := m.Value(); got != "one\ntwo words!\n" {
		t.Fatalf("backspaces are one step: after undo %q", got)
	}
}

// TestModel_UndoAllRestores: random edits (typing, pastes with line breaks, deletes, joins)
// undone step by step give back the text they started from, and redone give the edited text.
func TestModel_UndoAllRestores(t *testing.T) {
	pieces := []string{"a", "b", " ", "word", "日本", "e\u0301", "\t", "\n", "\r\n", "👩‍👩‍👧"}
	keyNames := []string{"left", "right", "up", "down", "home", "end", "enter", "backspace", "delete", "alt+backspace", "ctrl+k", "ctrl+u"}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		start := strings.Repeat("line of text\n", 1+round)
		m := mustModel(t, start, 12, 4, 0, 0)
		for range 300 {
			var msg tea.Msg
			switch r := rng.IntN(10); {
			case r < 5:
				msg = namedKeys[keyNames[rng.IntN(len(keyNames))]]
			case r < 9:
				p := pieces[rng.IntN(len(pieces))]
				msg = tea.KeyPressMsg{Code: []rune(p)[0], Text: p}
			default:
				msg = tea.PasteMsg{Content: pieces[rng.IntN(len(pieces))] + "\n" + pieces[rng.IntN(len(pieces))]}
			}
			m, _ = m.Update(msg)
		}
		edited := m.Value()
		for m.Undo() {
		}
		if got := m.Value(); got != start {
			t.Fatalf("round %d: undo all gave %q, want %q", round, got, start)
		}
		for m.Redo() {
		}
		if got := m.Value(); got != edited {
			t.Fatalf("round %d: redo all gave %q, want %q", round, got, edited)
		}
	}
}

// TestModel_UndoReadOnly: a read-only editor takes nothing back.
func TestModel_UndoReadOnly(t *testing.T) {
	m := mustModel(t, "abc", 10, 2, 0, 3)
	m = send(t, m, "d")
	m.SetReadOnly(true)
	m, _ = m.Update(tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl})
	if got := m.Value(); got != "abcd" {
		t.Fatalf("read-only undo changed the text to %q", got)
	}
}

// TestModel_UndoStepBounded: a run of letters longer than maxStepOps is taken back in steps
// of at most maxStepOps.
func TestModel_UndoStepBounded(t *testing.T) {
	m := mustModel(t, "", 10, 2, 0, 0)
	m = send(t, m, strings.Repeat("a", maxStepOps+44))
	m.Undo()
	if got := m.Value(); got != strings.Repeat("a", maxStepOps) {
		t.Fatalf("after one undo %d letters remain, want %d", len(got), maxStepOps)
	}
	m.Undo()
	if got := m.Value(); got != "" {
		t.Fatalf("after two undos: %q", got)
	}
}

// TestModel_Replace: a whole new text is one undo step; CRLF text keeps its endings.
func TestModel_Replace(t *testing.T) {
	m := mustModel(t, "one\r\ntwo\r\n", 10, 3, 1, 2)
	m = send(t, m, "x")
	m.Replace("new\r\ntext\r\nhere\r\n")
	if got := m.Value(); got != "new\r\ntext\r\nhere\r\n" {
		t.Fatalf("after Replace: %q", got)
	}
	m.Undo()
	if got := m.Value(); got != "one\r\ntwxo\r\n" {
		t.Fatalf("undo of Replace: %q", got)
	}
	m.Undo()
	if got := m.Value(); got != "one\r\ntwo\r\n" {
		t.Fatalf("undo of the typed x: %q", got)
	}
	m.Redo()
	m.Redo()
	if got := m.Value(); got != "new\r\ntext\r\nhere\r\n" {
		t.Fatalf("redo of Replace: %q", got)
	}
}
