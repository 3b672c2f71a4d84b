package merge

import (
	"bytes"
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
		})
	}
}
