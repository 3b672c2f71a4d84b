package merge

import (
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// hunk is one change of a two-way line diff: lines a[i1:i1+chg1] were
// replaced by b[i2:i2+chg2]. Either count may be zero.
type hunk struct {
	i1, chg1 int
	i2, chg2 int
}

// How two sequences of line ids are diffed:
//
//  1. Lines equal at both ends are matched and set aside: some longest common
//     subsequence always contains them.
//  2. In the middle that is left, a line whose id does not occur anywhere in
//     the other side's middle can be in no common subsequence: it is changed
//     for certain, and leaving it out of the search cannot make the diff
//     longer. Edited lines are nearly always like that, so on a typical merge
//     the search below sees two almost identical sequences and is close to
//     linear however long the file is.
//  3. go-diff's Myers search diffs what remains, each line id encoded as one
//     rune. It runs without a time limit, so the result is minimal and the
//     same on every run, unless what remains is far apart: then the search
//     is split into pieces so that it stays linear (see maxSearchCost), and
//     the result is a correct diff that may be longer than minimal.
//  4. The result is laid back onto the full sequences, and every run of
//     changed lines that could equally sit somewhere else is moved to one
//     canonical place (slideRuns), the place git would pick.
//
// Several minimal diffs often exist (a line repeated nearby can be matched
// more than one way). Sliding settles the common case, a run next to copies
// of its own lines; where the choice is between matching different copies of
// a line, go-diff and git may decide differently, and a three-way merge built
// on the two may then attribute a repeated line differently while both are
// correct.

// marks records which lines of one side of a diff are changed. chg has a
// false entry before the first and after the last line, so walks over runs of
// changed lines need no bounds checks.
type marks struct {
	ids []int32
	chg []bool
}

func newMarks(ids []int32) *marks {
	return &marks{ids: ids, chg: make([]bool, len(ids)+2)}
}

func (m *marks) changed(i int) bool { return m.chg[i+1] }
func (m *marks) set(i int, v bool)  { m.chg[i+1] = v }

// diffIDs diffs two sequences of line ids, all below nids, and returns the
// hunks in order.
func diffIDs(a, b []int32, nids int) []hunk {
	ma, mb := newMarks(a), newMarks(b)
	lo := 0
	for lo < len(a) && lo < len(b) && a[lo] == b[lo] {
		lo++
	}
	hiA, hiB := len(a), len(b)
	for hiA > lo && hiB > lo && a[hiA-1] == b[hiB-1] {
		hiA--
		hiB--
	}
	if lo == hiA && lo == hiB {
		return nil
	}
	markMiddle(ma, mb, lo, hiA, hiB, nids)
	slideRuns(ma, mb)
	slideRuns(mb, ma)
	return hunksOf(ma, mb)
}

// maxRuneIDs is how many distinct lines the Myers search can tell apart: one
// rune each, skipping the UTF-16 surrogates, which go-diff's strings would
// turn into U+FFFD (making different lines look equal). A variable so tests
// can make it small.
var maxRuneIDs = int(utf8.MaxRune) + 1 - (0xE000 - 0xD800)

// idRune returns the rune that stands for the n-th distinct line.
func idRune(n int) rune {
	if n >= 0xD800 {
		n += 0xE000 - 0xD800
	}
	return rune(n)
}

// markMiddle marks the changed lines of a[lo:hiA] and b[lo:hiB].
func markMiddle(ma, mb *marks, lo, hiA, hiB, nids int) {
	la, lb, n := renumber(ma.ids[lo:hiA], mb.ids[lo:hiB], nids)

	// inB[id] says whether id occurs in b's middle; runeNo[id] is the rune
	// number of an id found on both sides, -1 for ids that cannot match.
	inB := make([]bool, n)
	for _, id := range lb {
		inB[id] = true
	}
	runeNo := make([]int32, n)
	for i := range runeNo {
		runeNo[i] = -1
	}
	shared := 0
	for _, id := range la {
		if inB[id] && runeNo[id] == -1 && shared < maxRuneIDs {
			// Past maxRuneIDs distinct shared lines (over a million), the
			// rest are treated as unmatched: the diff stays correct but may
			// be longer than needed.
			runeNo[id] = int32(shared)
			shared++
		}
	}

	keepA, ra := keptLines(ma, la, lo, runeNo)
	keepB, rb := keptLines(mb, lb, lo, runeNo)
	if len(keepA) == 0 || len(keepB) == 0 {
		for _, i := range keepA {
			ma.set(i, true)
		}
		for _, i := range keepB {
			mb.set(i, true)
		}
		return
	}

	ds := diffRunes(ra, rb)
	if !applyDiffs(ma, mb, keepA, keepB, ra, rb, ds) {
		// Not expected to happen; if go-diff ever returned a script that
		// does not fit the input, calling every kept line changed is still
		// a correct (if coarse) diff.
		for _, i := range keepA {
			ma.set(i, true)
		}
		for _, i := range keepB {
			mb.set(i, true)
		}
	}
}

// The Myers search costs about (len(a)+len(b)) * D steps for a shortest
// script of D edits. After discarding, D is small on text people edit, but
// two long unrelated texts made of a few repeated lines (braces, blank lines)
// keep nearly every line and need thousands of edits: 20,000 lines of that
// took seconds. So the search has a budget, which our own search checks
// before go-diff runs:
//
//   - If the two sequences are within maxSearchCost edits of each other (and
//     the check stayed within its step budget), go-diff diffs them whole, as
//     it always did: the result is minimal and unchanged. Realistic merges
//     take this path; the git comparison corpora of realistic text never
//     leave it.
//   - Otherwise the check knows the point furthest into both sequences that
//     some script of at most maxSearchCost edits reaches. go-diff diffs the
//     two prefixes up to that point (cheap: they are that close), and the
//     rest is handled the same way from there.
//
// The trade-off of the second path: each piece is diffed minimally, but the
// pieces together need not be minimal, since a shortest script of the whole
// might cross the cut elsewhere. The diff is still correct and the same on
// every run, and only inputs that are already far apart pay it, where a
// shortest diff tells little more than a short one. In exchange the cost is
// about length * maxSearchCost instead of length * D: linear in the length.
// 256 edits is as far as a realistic remainder comes in our corpora by a wide
// margin, and a lower budget would buy little more speed (a variable so
// tests can make it small).
var maxSearchCost = 256

// diffRunes returns an edit script that turns ra into rb: minimal when the
// two are within maxSearchCost edits, otherwise assembled from minimal
// scripts of consecutive pieces (see maxSearchCost).
func diffRunes(ra, rb []rune) []diffmatchpatch.Diff {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // no deadline: minimal and deterministic
	var ds []diffmatchpatch.Diff
	var scratch []int
	for {
		x, y, whole := reach(ra, rb, maxSearchCost, searchWork(len(ra)+len(rb)), &scratch)
		if whole {
			return append(ds, dmp.DiffMainRunes(ra, rb, false)...)
		}
		ds = append(ds, dmp.DiffMainRunes(ra[:x], rb[:y], false)...)
		ra, rb = ra[x:], rb[y:]
	}
}

// searchWork is the step budget of reach on n elements in all: enough for
// every round of a maxSearchCost search plus following the matching runs of
// a few diagonals from end to end, as near-identical inputs need. Long
// matching runs on many diagonals at once (a text of mostly one repeated
// line) would otherwise make single rounds expensive.
func searchWork(n int) int {
	return 2*maxSearchCost*maxSearchCost + 4*n
}

// reach runs the forward half of the Myers search on a and b for at most
// maxCost edits, stopping after the first round that takes it past maxWork
// steps. It reports whole if it found a script of at most maxCost edits that
// turns a into b; it always does when there is one and the budget lasts.
// Otherwise it returns the point (x, y), x+y > 0, with the largest x+y that
// it found a script of at most maxCost edits of a[:x] into b[:y] for. scratch
// is reused between calls.
func reach(a, b []rune, maxCost, maxWork int, scratch *[]int) (x, y int, whole bool) {
	n, m := len(a), len(b)
	if n+m <= maxCost || n == 0 || m == 0 {
		// No script is longer than n+m, and with one side empty there is
		// only one script, which costs go-diff nothing to find.
		return n, m, true
	}
	// fx[off+k] is the furthest x reached on diagonal k (where y = x-k), -1
	// if none yet. Round d reads diagonals -d-1 and d+1 too.
	off := maxCost + 1
	if cap(*scratch) < 2*maxCost+3 {
		*scratch = make([]int, 2*maxCost+3)
	}
	fx := (*scratch)[:2*maxCost+3]
	for i := range fx {
		fx[i] = -1
	}
	bestX, bestY, work := 0, 0, 0
	for d := 0; d <= maxCost; d++ {
		for k := -d; k <= d; k += 2 {
			if k < -m || k > n {
				continue
			}
			x := fx[off+k] // reached two rounds ago: still reachable
			if d == 0 {
				x = 0
			}
			if down := fx[off+k+1]; down >= 0 && down-k <= m && down > x {
				x = down // one more line of b inserted
			}
			if right := fx[off+k-1]; right >= 0 && right < n && right+1 > x {
				x = right + 1 // one more line of a deleted
			}
			if x < 0 {
				continue
			}
			y := x - k
			start := x
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			work += 1 + x - start
			fx[off+k] = x
			if x == n && y == m {
				return n, m, true
			}
			if x+y > bestX+bestY {
				bestX, bestY = x, y
			}
		}
		if work > maxWork && bestX+bestY > 0 {
			break
		}
	}
	return bestX, bestY, false
}

// keptLines marks the lines of ids (which start at line lo of m) that have no
// rune number as changed, and returns the line numbers and runes of the rest.
func keptLines(m *marks, ids []int32, lo int, runeNo []int32) (keep []int, rs []rune) {
	keep = make([]int, 0, len(ids))
	rs = make([]rune, 0, len(ids))
	for i, id := range ids {
		if r := runeNo[id]; r >= 0 {
			keep = append(keep, lo+i)
			rs = append(rs, idRune(int(r)))
		} else {
			m.set(lo+i, true)
		}
	}
	return keep, rs
}

// applyDiffs marks the lines go-diff deleted or inserted. It reports false,
// marking nothing for sure, if the script does not turn ra into rb.
func applyDiffs(ma, mb *marks, keepA, keepB []int, ra, rb []rune, ds []diffmatchpatch.Diff) bool {
	// Check first, then mark, so a bad script leaves no half-done marks.
	pa, pb := 0, 0
	for _, d := range ds {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			if pa+n > len(ra) || pb+n > len(rb) {
				return false
			}
			for k := range n {
				if ra[pa+k] != rb[pb+k] {
					return false
				}
			}
			pa += n
			pb += n
		case diffmatchpatch.DiffDelete:
			pa += n
		case diffmatchpatch.DiffInsert:
			pb += n
		}
	}
	if pa != len(ra) || pb != len(rb) {
		return false
	}
	pa, pb = 0, 0
	for _, d := range ds {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			pa += n
			pb += n
		case diffmatchpatch.DiffDelete:
			for ; n > 0; n-- {
				ma.set(keepA[pa], true)
				pa++
			}
		case diffmatchpatch.DiffInsert:
			for ; n > 0; n-- {
				mb.set(keepB[pb], true)
				pb++
			}
		}
	}
	return true
}

// renumber gives the ids of a and b new numbers 0..n-1 in order of first
// appearance, so tables indexed by id are as small as the input. A slice
// indexed by the old id does it when nids is not much larger than the input;
// a small diff inside a large file (conflict refinement) uses a map.
func renumber(a, b []int32, nids int) (la, lb []int32, n int) {
	la, lb = make([]int32, len(a)), make([]int32, len(b))
	if nids <= 4*(len(a)+len(b))+1024 {
		table := make([]int32, nids) // new id + 1; 0 = not seen yet
		for _, p := range []struct{ in, out []int32 }{{a, la}, {b, lb}} {
			for i, id := range p.in {
				if table[id] == 0 {
					n++
					table[id] = int32(n)
				}
				p.out[i] = table[id] - 1
			}
		}
		return la, lb, n
	}
	m := make(map[int32]int32, len(a)+len(b))
	for _, p := range []struct{ in, out []int32 }{{a, la}, {b, lb}} {
		for i, id := range p.in {
			v, ok := m[id]
			if !ok {
				v = int32(len(m))
				m[id] = v
			}
			p.out[i] = v
		}
	}
	return la, lb, len(m)
}

// slideRuns moves each run of changed lines of f to its canonical place,
// leaving the changes of o where they are.
//
// A run of changed lines [s, e) can move down one line when line e is
// unchanged and equal to line s: s becomes unchanged and e changed, which
// describes the same edit. It can move up one line when line s-1 is unchanged
// and equal to line e-1. A run that comes to touch another run merges with it.
// Of all the places a run can reach, git puts it at the last one; we do the
// same, so that clean merges agree with git. The exception, also git's: if at
// some reachable place the run sits right across a change of the other side
// (together they read as one replacement), it goes to the last such place.
//
// Unchanged lines pair up in order between the two sides, so the place across
// from a run of f with k unchanged lines before it is the gap after the k-th
// unchanged line of o; o does not move here, so which of its gaps hold changes
// is computed once.
func slideRuns(f, o *marks) {
	across := changedGaps(o)
	k := 0 // unchanged lines of f before line i
	for i := 0; i < len(f.ids); {
		if !f.changed(i) {
			i++
			k++
			continue
		}
		e := i + 1
		for f.changed(e) {
			e++
		}
		_, e, k = f.settle(i, e, k, across)
		i = e
	}
}

// changedGaps returns, for k = 0 .. the number of unchanged lines of m,
// whether there are changed lines right after m's k-th unchanged line (for k
// = 0: before its first unchanged line).
func changedGaps(m *marks) []bool {
	gaps := make([]bool, 1, len(m.ids)+1)
	for i := range m.ids {
		if m.changed(i) {
			gaps[len(gaps)-1] = true
		} else {
			gaps = append(gaps, false)
		}
	}
	return gaps
}

// settle moves the run [s, e), which has k unchanged lines before it, to its
// canonical place (see slideRuns) and returns where it ended up.
func (f *marks) settle(s, e, k int, across []bool) (int, int, int) {
	n := len(f.ids)
	lastAcross := -1 // end of the last place seen that sits across a change
	for {
		size := e - s
		// Up as far as the run goes, swallowing runs it meets.
		for s > 0 && f.ids[s-1] == f.ids[e-1] {
			s--
			e--
			k--
			f.set(s, true)
			f.set(e, false)
			for f.changed(s - 1) {
				s--
			}
		}
		// Then down as far as it goes, noting where it faces a change.
		lastAcross = -1
		if across[k] {
			lastAcross = e
		}
		for e < n && f.ids[s] == f.ids[e] {
			f.set(s, false)
			f.set(e, true)
			s++
			e++
			k++
			for f.changed(e) {
				e++
			}
			if across[k] {
				lastAcross = e
			}
		}
		if e-s == size {
			// Nothing was swallowed: the run spans all its places.
			break
		}
		// It grew: the bigger run may reach further up; go round again.
	}
	// Back up to the last place across a change, if there was one. The run
	// met no other run on its way down, so it meets none going back up.
	for lastAcross >= 0 && e > lastAcross {
		s--
		e--
		k--
		f.set(s, true)
		f.set(e, false)
	}
	return s, e, k
}

// hunksOf turns the change marks of both sides into hunks: unchanged lines
// pair up in order, and everything changed between two pairs is one hunk.
func hunksOf(ma, mb *marks) []hunk {
	var hs []hunk
	na, nb := len(ma.ids), len(mb.ids)
	i, j := 0, 0
	for i < na || j < nb {
		if i < na && j < nb && !ma.changed(i) && !mb.changed(j) {
			i++
			j++
			continue
		}
		h := hunk{i1: i, i2: j}
		for i < na && ma.changed(i) {
			i++
		}
		for j < nb && mb.changed(j) {
			j++
		}
		if i == h.i1 && j == h.i2 {
			// One side ran out of unchanged lines before the other: the
			// marks disagree. Cannot happen; end with one last hunk rather
			// than loop.
			i, j = na, nb
		}
		h.chg1, h.chg2 = i-h.i1, j-h.i2
		hs = append(hs, h)
	}
	return hs
}
