package merge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// checkScript fails unless hs turns a into b, and returns how many lines of
// a it leaves unchanged.
func checkScript(t *testing.T, a, b []int32, hs []hunk) int {
	t.Helper()
	var out []int32
	i, kept := 0, 0
	for k, h := range hs {
		if h.i1 < i || h.chg1 < 0 || h.chg2 < 0 || h.chg1+h.chg2 == 0 || h.i1+h.chg1 > len(a) || h.i2+h.chg2 > len(b) {
			t.Fatalf("hunk %d %+v out of order or range (a %d, b %d lines)", k, h, len(a), len(b))
		}
		if h.i2 != len(out)+h.i1-i {
			t.Fatalf("hunk %d %+v: b offset does not follow the unchanged lines", k, h)
		}
		out = append(out, a[i:h.i1]...)
		kept += h.i1 - i
		out = append(out, b[h.i2:h.i2+h.chg2]...)
		i = h.i1 + h.chg1
	}
	out = append(out, a[i:]...)
	kept += len(a) - i
	if !equalIDs(out, b) {
		t.Fatalf("script %+v turns %v into %v, want %v", hs, a, out, b)
	}
	return kept
}

// lcsLen is the textbook dynamic program: the length of a longest common
// subsequence of a and b.
func lcsLen(a, b []int32) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func randIDs(rng *rand.Rand, n, vocab int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(rng.IntN(vocab))
	}
	return ids
}

// TestDiffIDs_Minimal checks on random sequences, many with few distinct
// lines, that the diff is a correct edit script and as short as any can be.
func TestDiffIDs_Minimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		vocab := []int{2, 3, 5, 30}[iter%4]
		a := randIDs(rng, rng.IntN(30), vocab)
		b := append([]int32(nil), a...)
		for range rng.IntN(6) {
			p := rng.IntN(len(b) + 1)
			if rng.IntN(2) == 0 && p < len(b) {
				b = append(b[:p], b[p+1:]...)
			} else {
				b = append(b[:p], append([]int32{int32(rng.IntN(vocab + 3))}, b[p:]...)...)
			}
		}
		hs := diffIDs(a, b, vocab+3)
		if kept, want := checkScript(t, a, b, hs), lcsLen(a, b); kept != want {
			t.Fatalf("iter %d: diff of %v and %v keeps %d lines, a longest common subsequence has %d", iter, a, b, kept, want)
		}
	}
}

// TestDiffIDs_LastPosition checks that an ambiguous change goes where git
// puts it: at the last place it can be.
func TestDiffIDs_LastPosition(t *testing.T) {
	for _, tt := range []struct {
		a, b []int32
		want []hunk
	}{
		// x y x y -> x y: the deleted "x y" is the second copy.
		{[]int32{0, 1, 0, 1}, []int32{0, 1}, []hunk{{i1: 2, chg1: 2, i2: 2}}},
		// a b b b c -> a b b c: the last b goes.
		{[]int32{0, 1, 1, 1, 2}, []int32{0, 1, 1, 2}, []hunk{{i1: 3, chg1: 1, i2: 3}}},
		// Inserted blank line between paragraphs lands after the existing one.
		{[]int32{5, 9, 6}, []int32{5, 9, 7, 9, 6}, []hunk{{i1: 2, i2: 2, chg2: 2}}},
	} {
		if got := diffIDs(tt.a, tt.b, 10); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("diff %v -> %v = %+v, want %+v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestDiffIDs_SurrogateRange diffs more distinct lines than there are runes
// below the UTF-16 surrogates, with the lines that would be encoded as
// surrogates swapped: encoded naively they would all read as U+FFFD and look
// equal, or the diff would degrade to "everything changed".
func TestDiffIDs_SurrogateRange(t *testing.T) {
	const fill = 0xD800 + 10
	a := []int32{0}
	b := []int32{1}
	for i := range int32(fill) {
		a = append(a, 2+i)
		b = append(b, 2+i)
	}
	p, q := int32(fill+2), int32(fill+3)
	a = append(a, p, q, fill+4)
	b = append(b, q, p, fill+5)
	hs := diffIDs(a, b, fill+6)
	kept := checkScript(t, a, b, hs)
	if want := len(a) - 3; kept != want {
		t.Fatalf("kept %d lines, want %d (hunks %+v)", kept, want, hs)
	}
}

// TestDiffIDs_TooManyLines makes the rune space tiny: lines past it are
// treated as unmatched, and the script must still be correct.
func TestDiffIDs_TooManyLines(t *testing.T) {
	old := maxRuneIDs
	maxRuneIDs = 3
	t.Cleanup(func() { maxRuneIDs = old })
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		a := randIDs(rng, rng.IntN(20), 8)
		b := randIDs(rng, rng.IntN(20), 8)
		checkScript(t, a, b, diffIDs(a, b, 8))
	}
}

// TestDiffIDs_Renumber takes the map path (ids far larger than the input),
// as conflict refinement inside a big file does.
func TestDiffIDs_Renumber(t *testing.T) {
	a := []int32{1 << 20, 7, 1 << 20, 3}
	b := []int32{7, 1 << 20, 3, 1 << 21}
	hs := diffIDs(a, b, 1<<22)
	if kept, want := checkScript(t, a, b, hs), lcsLen(a, b); kept != want {
		t.Fatalf("kept %d, want %d", kept, want)
	}
}

// editDistance is the length of a shortest insert/delete script from a to b.
func editDistance(a, b []int32) int { return len(a) + len(b) - 2*lcsLen(a, b) }

func toRunes(ids []int32) []rune {
	rs := make([]rune, len(ids))
	for i, id := range ids {
		rs[i] = idRune(int(id))
	}
	return rs
}

// TestReach checks the budget check the diff relies on: with work to spare
// it reports whole exactly when the sequences are within maxCost edits (or
// one is empty), and
// a cut it returns is a real step forward that maxCost edits can reach,
// whatever the budget.
func TestReach(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var scratch []int
	var wholes, cuts int
	for iter := range 3000 {
		vocab := []int{2, 3, 5, 30}[iter%4]
		a := randIDs(rng, rng.IntN(60), vocab)
		b := randIDs(rng, rng.IntN(60), vocab)
		if rng.IntN(2) == 0 {
			// A near copy, so that many pairs are within the cost.
			b = append([]int32(nil), a...)
			for range rng.IntN(8) {
				if len(b) > 0 {
					b[rng.IntN(len(b))] = int32(rng.IntN(vocab))
				}
			}
		}
		maxCost := 1 + rng.IntN(30)
		d := editDistance(a, b)
		// With one side empty there is only one script: always whole.
		within := d <= maxCost || len(a) == 0 || len(b) == 0

		x, y, whole := reach(toRunes(a), toRunes(b), maxCost, 1<<30, &scratch)
		if whole != within {
			t.Fatalf("iter %d: %v -> %v is %d edits; reach with cost %d says whole=%v", iter, a, b, d, maxCost, whole)
		}
		if whole && (x != len(a) || y != len(b)) {
			t.Fatalf("iter %d: whole but stopped at (%d, %d)", iter, x, y)
		}

		// A tiny step budget stops early: the cut must still be reachable.
		x, y, whole = reach(toRunes(a), toRunes(b), maxCost, rng.IntN(20), &scratch)
		if whole {
			wholes++
			if !within {
				t.Fatalf("iter %d: whole with %d edits > cost %d", iter, d, maxCost)
			}
			continue
		}
		cuts++
		if x+y == 0 || x > len(a) || y > len(b) {
			t.Fatalf("iter %d: cut at (%d, %d) of (%d, %d) makes no progress or is out of range", iter, x, y, len(a), len(b))
		}
		if pd := editDistance(a[:x], b[:y]); pd > maxCost {
			t.Fatalf("iter %d: cut at (%d, %d) is %d edits away, cost %d", iter, x, y, pd, maxCost)
		}
	}
	if wholes == 0 || cuts == 0 {
		t.Fatalf("the cases did not cover both outcomes: %d whole, %d cut", wholes, cuts)
	}
}

// TestDiffIDs_CostBudget makes the search budget tiny, so inputs are diffed
// in pieces: every diff must still be a correct script, and inputs within
// the budget must come out exactly as without one.
func TestDiffIDs_CostBudget(t *testing.T) {
	old := maxSearchCost
	t.Cleanup(func() { maxSearchCost = old })
	rng := rand.New(rand.NewPCG(8, 9))
	for iter := range 2000 {
		vocab := []int{2, 3, 5, 30}[iter%4]
		a := randIDs(rng, rng.IntN(80), vocab)
		b := randIDs(rng, rng.IntN(80), vocab)
		maxSearchCost = 1 << 30
		exact := diffIDs(a, b, vocab)
		maxSearchCost = 1 + rng.IntN(8)
		hs := diffIDs(a, b, vocab)
		checkScript(t, a, b, hs)
		if editDistance(a, b) <= maxSearchCost && fmt.Sprint(hs) != fmt.Sprint(exact) {
			// Within the cost, only the step budget could cut; at these
			// sizes it never does.
			t.Fatalf("iter %d: %d edits, within cost %d, but the diff changed:\n%+v\n%+v", iter, editDistance(a, b), maxSearchCost, hs, exact)
		}
	}
}

// pathologicalIDs makes two unrelated sequences of n lines drawn from four
// distinct lines: the worst case for a search without a cost bound.
func pathologicalIDs(n int) (a, b []int32) {
	rng := rand.New(rand.NewPCG(uint64(n), 13))
	return randIDs(rng, n, 4), randIDs(rng, n, 4)
}

// TestDiffIDs_Pathological diffs two large unrelated low-entropy sequences
// (which took seconds before the search had a budget): the script must turn
// one into the other and keep most of what a longest common subsequence
// keeps. The quick run diffs 5,000 lines, the long run (TANDEM_LONG_TESTS)
// also 20,000, where the quadratic reference alone takes seconds.
func TestDiffIDs_Pathological(t *testing.T) {
	sizes := []int{5_000}
	if longTests() {
		sizes = append(sizes, 20_000)
	}
	for _, n := range sizes {
		a, b := pathologicalIDs(n)
		kept := checkScript(t, a, b, diffIDs(a, b, 4))
		// The pieces are each minimal; together they stay close.
		want := lcsLen(a, b)
		if kept*100 < want*95 {
			t.Fatalf("%d lines: kept %d lines, a longest common subsequence has %d", n, kept, want)
		}
		t.Logf("%d lines: kept %d of a longest common subsequence's %d lines", n, kept, want)
	}
}

// TestText_Pathological merges large unrelated low-entropy texts: a side
// that did not change defers to the other, and the chunks of a conflicted
// merge cover each side's lines exactly, in order.
func TestText_Pathological(t *testing.T) {
	base, ours, theirs := pathologicalInput(20_000)
	for _, c := range []struct {
		name          string
		b, o, th, out []byte
	}{{"merge(b, o, b)", base, ours, base, ours}, {"merge(b, b, o)", base, base, ours, ours}, {"merge(b, o, o)", base, ours, ours, ours}} {
		if r := Text(c.b, c.o, c.th); r.Conflicts != 0 || !bytes.Equal(r.Render(RenderOptions{}), c.out) {
			t.Fatalf("%s is not ours (%d conflicts)", c.name, r.Conflicts)
		}
	}
	r := Text(base, ours, theirs)
	if r.Conflicts == 0 {
		t.Fatal("unrelated rewrites of the whole file merged without a conflict")
	}
	var o, th [][]byte
	for _, c := range r.Chunks {
		o = append(o, c.Ours...)
		th = append(th, c.Theirs...)
	}
	if !bytes.Equal(joinLines(o), ours) || !bytes.Equal(joinLines(th), theirs) {
		t.Fatal("the chunks do not cover ours and theirs line for line")
	}
}
