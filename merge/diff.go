package merge

// hunk is one change of a two-way line diff: lines a[i1:i1+chg1] were
// replaced by b[i2:i2+chg2]. Either count may be zero.
type hunk struct {
	i1, chg1 int
	i2, chg2 int
}

// The diff follows git's xdiff pipeline step by step, because the merge has
// to agree with `git merge-file` byte for byte and a three-way merge is only
// as stable as the two-way diffs under it: trim common ends, drop lines that
// cannot match (and runs of too-common lines), run xdiff's Myers variant on
// what is left (xdl.go), then slide change groups to canonical positions the
// way xdl_change_compact does.
//
// go-diff's Myers was tried first (line ids encoded as runes): it finds
// equally short diffs but picks a different one among equals often enough
// (4 of 1082 clean random merges) to break byte-identity with git.

const (
	disNo    = 0 // line has no match in the other file: changed for sure
	disYes   = 1 // line has a match: goes to Myers
	disMaybe = 2 // line has very many matches: dropped when inside a run of changes

	simscanWindow = 100  // xdiff's XDL_SIMSCAN_WINDOW
	maxEqLimit    = 1024 // xdiff's XDL_MAX_EQLIMIT
	kpdisRun      = 4    // xdiff's XDL_KPDIS_RUN

)

// bogosqrt is xdiff's cheap square root, used to decide when a line is "too
// common" to be worth matching.
func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// file is one side of a two-way diff: its line ids and which lines changed.
// rchg has a false sentinel at both ends so group walks need no bounds checks.
type file struct {
	ids  []int32
	rchg []bool
}

func newFile(ids []int32) *file {
	return &file{ids: ids, rchg: make([]bool, len(ids)+2)}
}

func (f *file) changed(i int) bool { return f.rchg[i+1] }
func (f *file) set(i int, v bool)  { f.rchg[i+1] = v }
func (f *file) n() int             { return len(f.ids) }

// diffIDs diffs two sequences of line ids, all below nids, and returns the
// hunks in order.
func diffIDs(a, b []int32, nids int) []hunk {
	if nids > 4*(len(a)+len(b))+1024 {
		// A small diff inside a large file (conflict refinement): renumber
		// so the per-id tables below stay proportional to the input.
		a, b, nids = densify(a, b)
	}
	fa, fb := newFile(a), newFile(b)
	markChanges(fa, fb, nids)
	compact(fa, fb)
	compact(fb, fa)
	return buildScript(fa, fb)
}

// markChanges sets rchg on both files so that the unchanged lines form a
// longest common subsequence (modulo xdiff's discard heuristics).
func markChanges(fa, fb *file, nids int) {
	a, b := fa.ids, fb.ids
	// Trim common ends: cheap, and most merges touch a small part of a file.
	start := 0
	for start < len(a) && start < len(b) && a[start] == b[start] {
		start++
	}
	endA, endB := len(a), len(b)
	for endA > start && endB > start && a[endA-1] == b[endB-1] {
		endA--
		endB--
	}
	if start == endA && start == endB {
		return
	}

	// Count occurrences over the whole files, as xdiff's classifier does.
	countA, countB := countIDs(a, b, nids)

	disA := classify(a, start, endA, countB)
	disB := classify(b, start, endB, countA)
	keepA := keptLines(fa, disA, start, endA)
	keepB := keptLines(fb, disB, start, endB)
	xdlDiff(fa, fb, keepA, keepB)
}

// countIDs returns, per id, how often it occurs in a and in b.
func countIDs(a, b []int32, nids int) (countA, countB []int32) {
	countA = make([]int32, nids)
	countB = make([]int32, nids)
	for _, id := range a {
		countA[id]++
	}
	for _, id := range b {
		countB[id]++
	}
	return countA, countB
}

// densify renumbers the ids of a and b to 0..n-1.
func densify(a, b []int32) (da, db []int32, n int) {
	m := make(map[int32]int32, len(a)+len(b))
	re := func(ids []int32) []int32 {
		out := make([]int32, len(ids))
		for i, id := range ids {
			d, ok := m[id]
			if !ok {
				d = int32(len(m))
				m[id] = d
			}
			out[i] = d
		}
		return out
	}
	da, db = re(a), re(b)
	return da, db, len(m)
}

// classify marks each line of ids[start:end] as disNo, disYes or disMaybe by
// how often it occurs in the other file.
func classify(ids []int32, start, end int, other []int32) []byte {
	mlim := bogosqrt(len(ids))
	if mlim > maxEqLimit {
		mlim = maxEqLimit
	}
	dis := make([]byte, len(ids))
	for i := start; i < end; i++ {
		switch nm := int(other[ids[i]]); {
		case nm == 0:
			dis[i] = disNo
		case nm >= mlim:
			dis[i] = disMaybe
		default:
			dis[i] = disYes
		}
	}
	return dis
}

// keptLines returns the indexes of the lines that take part in Myers and marks
// every other line of [start, end) as changed.
func keptLines(f *file, dis []byte, start, end int) []int {
	keep := make([]int, 0, end-start)
	for i := start; i < end; i++ {
		if dis[i] == disYes || (dis[i] == disMaybe && !cleanMultiMatch(dis, i, start, end-1)) {
			keep = append(keep, i)
		} else {
			f.set(i, true)
		}
	}
	return keep
}

// cleanMultiMatch reports whether the too-common line i sits inside a run of
// unmatched lines, where matching it would only produce a freak match.
func cleanMultiMatch(dis []byte, i, s, e int) bool {
	if i-s > simscanWindow {
		s = i - simscanWindow
	}
	if e-i > simscanWindow {
		e = i + simscanWindow
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == disNo {
			rdis0++
		} else if dis[i-r] == disMaybe {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == disNo {
			rdis1++
		} else if dis[i+r] == disMaybe {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*kpdisRun < rpdis1+rdis1
}

// group is a run of changed lines [start, end) in one file; an empty group
// sits between two unchanged lines.
type group struct{ start, end int }

func groupInit(f *file) group {
	g := group{}
	for f.changed(g.end) {
		g.end++
	}
	return g
}

func groupNext(f *file, g *group) bool {
	if g.end == f.n() {
		return false
	}
	g.start = g.end + 1
	g.end = g.start
	for f.changed(g.end) {
		g.end++
	}
	return true
}

func groupPrevious(f *file, g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	g.start = g.end
	for f.changed(g.start - 1) {
		g.start--
	}
	return true
}

func groupSlideDown(f *file, g *group) bool {
	if g.end < f.n() && f.ids[g.start] == f.ids[g.end] {
		f.set(g.start, false)
		g.start++
		f.set(g.end, true)
		g.end++
		for f.changed(g.end) {
			g.end++
		}
		return true
	}
	return false
}

func groupSlideUp(f *file, g *group) bool {
	if g.start > 0 && f.ids[g.start-1] == f.ids[g.end-1] {
		g.start--
		f.set(g.start, true)
		g.end--
		f.set(g.end, false)
		for f.changed(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

// compact slides every change group of f as far down as it goes, merging
// groups that touch, unless it can line up with a change in other. This is
// what xdl_change_compact does (without the indent heuristic, which `git
// merge-file` does not enable); it makes ambiguous diffs canonical.
func compact(f, other *file) {
	g := groupInit(f)
	og := groupInit(other)
	for {
		if g.end != g.start {
			var earliestEnd, endMatchingOther int
			for {
				size := g.end - g.start
				endMatchingOther = -1
				for groupSlideUp(f, &g) {
					if !groupPrevious(other, &og) {
						return // groups out of sync: cannot happen; keep what we have
					}
				}
				earliestEnd = g.end
				if og.end > og.start {
					endMatchingOther = g.end
				}
				for groupSlideDown(f, &g) {
					if !groupNext(other, &og) {
						return
					}
					if og.end > og.start {
						endMatchingOther = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			if g.end != earliestEnd && endMatchingOther != -1 {
				for og.end == og.start {
					if !groupSlideUp(f, &g) || !groupPrevious(other, &og) {
						return
					}
				}
			}
		}
		if !groupNext(f, &g) {
			return
		}
		if !groupNext(other, &og) {
			return
		}
	}
}

// buildScript turns the change marks into hunks, walking backwards as xdiff
// does so that unchanged lines pair up from the end.
func buildScript(fa, fb *file) []hunk {
	var rev []hunk
	i1, i2 := fa.n(), fb.n()
	chA := func(i int) bool { return i >= -1 && i <= fa.n() && fa.changed(i) }
	chB := func(i int) bool { return i >= -1 && i <= fb.n() && fb.changed(i) }
	for i1 >= 0 || i2 >= 0 {
		if chA(i1-1) || chB(i2-1) {
			l1, l2 := i1, i2
			for chA(i1 - 1) {
				i1--
			}
			for chB(i2 - 1) {
				i2--
			}
			rev = append(rev, hunk{i1: i1, chg1: l1 - i1, i2: i2, chg2: l2 - i2})
		}
		i1--
		i2--
	}
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	return rev
}
