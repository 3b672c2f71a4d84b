package merge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchInput makes n distinct-ish lines and two versions that each change
// about one line in 50 at scattered places (replace, insert, delete), so most
// of the merge is clean, as concurrent edits of a document are.
func benchInput(n int) (base, ours, theirs []byte) {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d: %x\n", i, rng.Uint32())
	}
	edit := func(side string, offset int) []byte {
		var b bytes.Buffer
		for i, l := range lines {
			switch {
			case (i+offset)%50 == 0:
				fmt.Fprintf(&b, "%s edited by %s\n", l[:len(l)-1], side)
			case (i+offset)%97 == 0:
				b.WriteString(l)
				fmt.Fprintf(&b, "inserted by %s after %d\n", side, i)
			case (i+offset)%113 == 0:
			default:
				b.WriteString(l)
			}
		}
		return b.Bytes()
	}
	var bb bytes.Buffer
	for _, l := range lines {
		bb.WriteString(l)
	}
	return bb.Bytes(), edit("ours", 0), edit("theirs", 25)
}

func BenchmarkText(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		base, ours, theirs := benchInput(n)
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(base)))
			b.ReportAllocs()
			for b.Loop() {
				r := Text(base, ours, theirs)
				_ = r.Render(RenderOptions{})
			}
		})
	}
}
