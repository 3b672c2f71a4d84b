package merge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
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

// pathologicalInput makes the worst case for a diff search without a cost
// bound: base and ours are two unrelated texts of n lines drawn from the same
// handful of short lines (think "}", blank lines and "return nil"), so
// nearly every line of one has thousands of partners in the other and the
// shortest edit script is long; theirs is base with scattered edits, so the
// merge also refines one file-sized conflict between ours and theirs.
func pathologicalInput(n int) (base, ours, theirs []byte) {
	rng := rand.New(rand.NewPCG(uint64(n), 11))
	vocab := []string{"}\n", "\n", "\treturn nil\n", "\t}\n"}
	gen := func() []string {
		ls := make([]string, n)
		for i := range ls {
			ls[i] = vocab[rng.IntN(len(vocab))]
		}
		return ls
	}
	bl, ol := gen(), gen()
	tl := append([]string(nil), bl...)
	for i := 0; i < len(tl); i += 50 {
		tl[i] = "edited by theirs\n"
	}
	join := func(ls []string) []byte { return []byte(strings.Join(ls, "")) }
	return join(bl), join(ol), join(tl)
}

func BenchmarkText(b *testing.B) {
	run := func(name string, base, ours, theirs []byte) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(base)))
			b.ReportAllocs()
			for b.Loop() {
				r := Text(base, ours, theirs)
				_ = r.Render(RenderOptions{})
			}
		})
	}
	for _, n := range []int{1_000, 10_000, 100_000} {
		base, ours, theirs := benchInput(n)
		run(fmt.Sprintf("lines=%d", n), base, ours, theirs)
	}
	for _, n := range []int{10_000, 20_000} {
		base, ours, theirs := pathologicalInput(n)
		run(fmt.Sprintf("pathological-%dk", n/1000), base, ours, theirs)
	}
}
