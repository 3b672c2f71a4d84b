package merge

import (
	"bytes"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, s := range [][3]string{
		{"", "", ""},
		{"a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n"},
		{"a\r\nb\r\n", "a\r\nX\r\n", "a\r\nY"},
		{"x", "y", "z"},
		{"\xff\xfe\n\x00\n", "\xff\n", "\x00\n\xc3\x28\n"},
		{"}\n}\n}\n", "}\n", "}\n}\n}\n}\n"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
}

// FuzzMergeIdentities checks the laws every three-way merge must obey: a
// side that did not change defers to the other, and equal sides agree.
func FuzzMergeIdentities(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b, x, y []byte) {
		for _, merge := range []func(b, o, t []byte) Result{Text, TextDiff3} {
			if r := merge(b, x, b); r.Conflicts != 0 || !bytes.Equal(r.Render(RenderOptions{}), x) {
				t.Fatalf("merge(b, x, b) = %q (%d conflicts), want x = %q", r.Render(RenderOptions{}), r.Conflicts, x)
			}
			if r := merge(b, b, y); r.Conflicts != 0 || !bytes.Equal(r.Render(RenderOptions{}), y) {
				t.Fatalf("merge(b, b, y) = %q, want y = %q", r.Render(RenderOptions{}), y)
			}
			if r := merge(b, x, x); r.Conflicts != 0 || !bytes.Equal(r.Render(RenderOptions{}), x) {
				t.Fatalf("merge(b, x, x) = %q, want x = %q", r.Render(RenderOptions{}), x)
			}
		}
	})
}

// FuzzMergeKeepsLines checks that a conflicted merge loses nothing: every
// line of both sides of every conflict appears in the rendering, taking one
// side everywhere through a Resolution equals rendering with that Favor, and
// nothing panics on arbitrary bytes.
func FuzzMergeKeepsLines(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b, x, y []byte) {
		r := Text(b, x, y)
		out := r.Render(RenderOptions{})
		for _, c := range r.Chunks {
			if c.Kind != Conflict {
				continue
			}
			for _, l := range append(append([][]byte(nil), c.Ours...), c.Theirs...) {
				if !bytes.Contains(out, bytes.TrimSuffix(l, []byte("\n"))) {
					t.Fatalf("line %q missing from %q", l, out)
				}
			}
			_ = c.OursDiff()
			_ = c.TheirsDiff()
		}
		for p, favor := range map[Pick]Favor{PickOurs: FavorOurs, PickTheirs: FavorTheirs, PickBoth: FavorUnion} {
			s := NewResolution(r)
			if _, err := s.PickRemaining(p); err != nil {
				t.Fatal(err)
			}
			if got, want := s.Bytes(RenderOptions{}), r.Render(RenderOptions{Favor: favor}); !bytes.Equal(got, want) {
				t.Fatalf("PickRemaining(%v) = %q, Render(Favor) = %q", p, got, want)
			}
		}
		d3 := TextDiff3(b, x, y)
		if d3.Conflicts == 0 && r.Conflicts != 0 {
			// Refinement only shrinks conflicts; it never creates one.
			t.Fatalf("diff3 level clean but zealous level has %d conflicts", r.Conflicts)
		}
		_ = d3.Render(RenderOptions{Style: StyleDiff3})
	})
}
