package merge

import (
	"bytes"
	"testing"
)

func mustResolution(t *testing.T, base, ours, theirs string) *Resolution {
	t.Helper()
	r := Text([]byte(base), []byte(ours), []byte(theirs))
	if r.Conflicts == 0 {
		t.Fatalf("want conflicts, got a clean merge")
	}
	return NewResolution(r)
}

func TestResolution(t *testing.T) {
	// Two conflicts far enough apart (and alphanumeric between) to stay two.
	base := "a\nb\nc\nkeep1\nkeep2\nkeep3\nkeep4\nd\ne\n"
	ours := "a\nB1\nc\nkeep1\nkeep2\nkeep3\nkeep4\nd\nE1\n"
	theirs := "a\nB2\nc\nkeep1\nkeep2\nkeep3\nkeep4\nd\nE2"
	t.Run("PerHunk", func(t *testing.T) {
		s := mustResolution(t, base, ours, theirs)
		if got, want := s.Hunks(), 2; got != want {
			t.Fatalf("hunks = %d, want %d", got, want)
		}
		if err := s.Pick(0, PickTheirs); err != nil {
			t.Fatal(err)
		}
		if err := s.Pick(1, PickBoth); err != nil {
			t.Fatal(err)
		}
		got := s.Bytes(RenderOptions{})
		want := "a\nB2\nc\nkeep1\nkeep2\nkeep3\nkeep4\nd\nE1\nE2"
		if string(got) != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if !s.Done() {
			t.Error("not done after picking every hunk")
		}
	})
	t.Run("BaseAndEdit", func(t *testing.T) {
		s := mustResolution(t, base, ours, theirs)
		if err := s.Pick(0, PickBase); err != nil {
			t.Fatal(err)
		}
		if err := s.Edit(1, []byte("edited\n")); err != nil {
			t.Fatal(err)
		}
		got := s.Bytes(RenderOptions{})
		if want := "a\nb\nc\nkeep1\nkeep2\nkeep3\nkeep4\nd\nedited\n"; string(got) != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("RemainingAndUndo", func(t *testing.T) {
		s := mustResolution(t, base, ours, theirs)
		_ = s.Pick(1, PickTheirs)
		n, err := s.PickRemaining(PickOurs)
		if err != nil || n != 1 {
			t.Fatalf("PickRemaining = %d, %v; want 1, nil", n, err)
		}
		if got, want := string(s.Bytes(RenderOptions{})), "a\nB1\nc\nkeep1\nkeep2\nkeep3\nkeep4\nd\nE2"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if !s.Undo() || s.Remaining() != 1 {
			t.Fatalf("after undo remaining = %d, want 1", s.Remaining())
		}
		if !s.Undo() || s.Remaining() != 2 {
			t.Fatalf("after second undo remaining = %d, want 2", s.Remaining())
		}
		if s.Undo() {
			t.Error("undo with empty stack reported true")
		}
		// Unresolved renders exactly like Render.
		if got, want := s.Bytes(RenderOptions{}), s.Result().Render(RenderOptions{}); !bytes.Equal(got, want) {
			t.Errorf("unresolved Bytes = %q, Render = %q", got, want)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		s := mustResolution(t, base, ours, theirs)
		if err := s.Pick(5, PickOurs); err == nil {
			t.Error("Pick out of range: no error")
		}
		if err := s.Pick(0, PickEdited); err == nil {
			t.Error("Pick(PickEdited): no error")
		}
		if _, err := s.PickRemaining(PickNone); err == nil {
			t.Error("PickRemaining(PickNone): no error")
		}
	})
}

func TestChunk_SideDiffs(t *testing.T) {
	r := Text([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), []byte("a\nc\nx\n"))
	i := r.ConflictIndex(0)
	if i < 0 {
		t.Fatalf("no conflict in %q", r.Render(RenderOptions{}))
	}
	c := r.Chunks[i]
	var got string
	for _, e := range c.OursDiff() {
		for _, l := range e.Lines {
			got += e.Op.String() + string(l)
		}
	}
	if want := "-b\n+B\n"; got != want {
		t.Errorf("ours diff = %q, want %q (base %q ours %q)", got, want, c.Base, c.Ours)
	}
	got = ""
	for _, e := range c.TheirsDiff() {
		for _, l := range e.Lines {
			got += e.Op.String() + string(l)
		}
	}
	if want := "-b\n"; got != want {
		t.Errorf("theirs diff = %q, want %q", got, want)
	}
}
