package merge

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	tests := []struct {
		name               string
		base, ours, theirs string
		want               string
		conflicts          int
	}{
		{"both edit different lines", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n", 0},
		{"same change both sides", "a\nb\nc\n", "a\nX\nc\n", "a\nX\nc\n", "a\nX\nc\n", 0},
		{"adjacent edits conflict", "a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n",
			"a\n<<<<<<< ours\nB\nc\n=======\nb\nC\n>>>>>>> theirs\nd\n", 1},
		{"one deletes what other edits", "a\nb\nc\n", "a\nc\n", "a\nB\nc\n",
			"a\n<<<<<<< ours\n=======\nB\n>>>>>>> theirs\nc\n", 1},
		{"both append at EOF", "a\n", "a\nb\n", "a\nc\n",
			"a\n<<<<<<< ours\nb\n=======\nc\n>>>>>>> theirs\n", 1},
		{"empty inputs", "", "", "", "", 0},
		{"only ours from empty", "", "x\n", "", "x\n", 0},
		{"no final newline conflict", "a", "b", "c",
			"<<<<<<< ours\nb\n=======\nc\n>>>>>>> theirs\n", 1},
		{"invalid utf-8 kept", "\xff\n\xc3(\nz\n", "\xfe\n\xc3(\nz\n", "\xff\n\xc3(\nZ\x80\n", "\xfe\n\xc3(\nZ\x80\n", 0},
		{"delete everything vs untouched", "a\nb\n", "", "a\nb\n", "", 0},
		{"both delete everything", "a\nb\n", "", "", "", 0},
		{"refined: common lines leave the conflict", "a\nb\nc\nd\ne\nf\ng\n",
			"a\nX\nc\nd\ne\nY\ng\n", "a\nX2\nc\nd\ne\nY\ng\n",
			"a\n<<<<<<< ours\nX\n=======\nX2\n>>>>>>> theirs\nc\nd\ne\nY\ng\n", 1},
		{"conflicts joined across a brace", "a\n}\nb\n", "A\n}\nB\n", "A2\n}\nB2\n",
			"<<<<<<< ours\nA\n}\nB\n=======\nA2\n}\nB2\n>>>>>>> theirs\n", 1},
		{"crlf conflict", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", "a\r\nb2\r\nc\r\n",
			"a\r\n<<<<<<< ours\r\nB\r\n=======\r\nb2\r\n>>>>>>> theirs\r\nc\r\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Text([]byte(tt.base), []byte(tt.ours), []byte(tt.theirs))
			got := r.Render(RenderOptions{})
			if !bytes.Equal(got, []byte(tt.want)) || r.Conflicts != tt.conflicts {
				t.Errorf("got %q (%d conflicts), want %q (%d)", got, r.Conflicts, tt.want, tt.conflicts)
			}
			// The expectations are git's: check them against git when present.
			if _, err := exec.LookPath("git"); err == nil {
				out, n := gitMergeFile(t, t.TempDir(), []byte(tt.base), []byte(tt.ours), []byte(tt.theirs))
				if string(out) != tt.want || n != tt.conflicts {
					t.Errorf("git gives %q (%d conflicts), test wants %q (%d)", out, n, tt.want, tt.conflicts)
				}
			}
		})
	}
}

func TestTextDiff3(t *testing.T) {
	tests := []struct {
		name               string
		base, ours, theirs string
		opts               RenderOptions
		want               string
	}{
		{"base shown, labels", "a\nb\nc\n", "a\nB\nc\n", "a\nB2\nc\n",
			RenderOptions{Style: StyleDiff3, OursLabel: "mine", BaseLabel: "orig", TheirsLabel: "yours"},
			"a\n<<<<<<< mine\nB\n||||||| orig\nb\n=======\nB2\n>>>>>>> yours\nc\n"},
		{"missing newlines supplied inside the conflict", "x", "y", "z",
			RenderOptions{Style: StyleDiff3},
			"<<<<<<< ours\ny\n||||||| base\nx\n=======\nz\n>>>>>>> theirs\n"},
		{"union keeps both, theirs' missing newline stays missing", "x", "y", "z",
			RenderOptions{Favor: FavorUnion}, "y\nz"},
		{"marker size", "a\n", "b\n", "c\n", RenderOptions{MarkerSize: 3},
			"<<< ours\nb\n===\nc\n>>> theirs\n"},
		{"crlf markers from crlf neighbours", "a\r\nb\r\n", "a\r\nB\r\n", "a\r\nC\r\n",
			RenderOptions{Style: StyleDiff3},
			"a\r\n<<<<<<< ours\r\nB\r\n||||||| base\r\nb\r\n=======\r\nC\r\n>>>>>>> theirs\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TextDiff3([]byte(tt.base), []byte(tt.ours), []byte(tt.theirs)).Render(tt.opts)
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestText_Chunks(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	ours := "1\nO\n3\n4\n5\n6\n7\nX\n9\n"
	theirs := "1\n2\n3\n4\nT\n6\n7\nY\n9\n"
	r := Text([]byte(base), []byte(ours), []byte(theirs))
	var kinds []string
	for _, c := range r.Chunks {
		kinds = append(kinds, c.Kind.String())
	}
	want := "unchanged ours unchanged theirs unchanged conflict unchanged"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("kinds = %s, want %s", got, want)
	}
	c := r.Chunks[r.ConflictIndex(0)]
	if string(joinLines(c.Base)) != "8\n" || c.BaseStart != 7 || c.OursStart != 7 || c.TheirsStart != 7 {
		t.Errorf("conflict base %q at %d/%d/%d", joinLines(c.Base), c.BaseStart, c.OursStart, c.TheirsStart)
	}
	if r.ConflictIndex(1) != -1 {
		t.Error("ConflictIndex(1) found a second conflict")
	}
}
