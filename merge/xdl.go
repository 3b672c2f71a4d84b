package merge

// This file is a Go rendering of the Myers search in git's xdiff (xdl_split
// and xdl_recs_cmp), including its cost heuristics. Any minimal diff is
// correct, but when several are equally short the three-way merge result can
// depend on which one is picked; picking the same one git picks is what makes
// clean merges byte-identical to `git merge-file`.

const (
	xdlMaxCostMin = 256 // XDL_MAX_COST_MIN
	xdlHeurMin    = 256 // XDL_HEUR_MIN_COST
	xdlSnakeCnt   = 20  // XDL_SNAKE_CNT
	xdlKHeur      = 4   // XDL_K_HEUR
	xdlLineMax    = int(^uint(0) >> 1)
)

// xdlEnv holds the k-vectors and limits of one diff.
type xdlEnv struct {
	a, b       []int32 // the kept line ids
	fa, fb     *file
	keepA      []int // index in the file of each kept line
	keepB      []int
	kvdf, kvdb []int
	koff       int // offset of diagonal 0 in kvdf/kvdb
	mxcost     int
}

// xdlDiff marks the changed kept lines of fa and fb.
func xdlDiff(fa, fb *file, keepA, keepB []int) {
	e := &xdlEnv{fa: fa, fb: fb, keepA: keepA, keepB: keepB}
	e.a = make([]int32, len(keepA))
	for k, i := range keepA {
		e.a[k] = fa.ids[i]
	}
	e.b = make([]int32, len(keepB))
	for k, i := range keepB {
		e.b[k] = fb.ids[i]
	}
	ndiags := len(e.a) + len(e.b) + 3
	e.kvdf = make([]int, ndiags)
	e.kvdb = make([]int, ndiags)
	e.koff = len(e.b) + 1
	e.mxcost = max(bogosqrt(ndiags), xdlMaxCostMin)
	e.recsCmp(0, len(e.a), 0, len(e.b), false)
}

// recsCmp diffs a[off1:lim1] against b[off2:lim2] by divide and conquer.
// It recurses only on the two halves of a split, so the depth is O(log n)
// for typical inputs; the worst case depth is bounded by the edit cost.
func (e *xdlEnv) recsCmp(off1, lim1, off2, lim2 int, needMin bool) {
	for {
		for off1 < lim1 && off2 < lim2 && e.a[off1] == e.b[off2] {
			off1++
			off2++
		}
		for off1 < lim1 && off2 < lim2 && e.a[lim1-1] == e.b[lim2-1] {
			lim1--
			lim2--
		}
		switch {
		case off1 == lim1:
			for ; off2 < lim2; off2++ {
				e.fb.set(e.keepB[off2], true)
			}
			return
		case off2 == lim2:
			for ; off1 < lim1; off1++ {
				e.fa.set(e.keepA[off1], true)
			}
			return
		}
		s1, s2, minLo, minHi := e.split(off1, lim1, off2, lim2, needMin)
		e.recsCmp(off1, s1, off2, s2, minLo)
		// Loop instead of recursing on the upper half.
		off1, off2, needMin = s1, s2, minHi
	}
}

func (e *xdlEnv) kf(d int) int   { return e.kvdf[d+e.koff] }
func (e *xdlEnv) setKf(d, v int) { e.kvdf[d+e.koff] = v }
func (e *xdlEnv) kb(d int) int   { return e.kvdb[d+e.koff] }
func (e *xdlEnv) setKb(d, v int) { e.kvdb[d+e.koff] = v }

// split finds where a shortest edit path crosses the middle of the box (or,
// past the cost limits, a good-enough point) and says whether each half still
// needs a minimal diff.
func (e *xdlEnv) split(off1, lim1, off2, lim2 int, needMin bool) (i1s, i2s int, minLo, minHi bool) {
	// Slicing to the box lets the compiler drop most bounds checks in the
	// snake loops, which is where the time goes on very different inputs.
	a, b := e.a[:lim1], e.b[:lim2]
	kvdf, kvdb, ko := e.kvdf, e.kvdb, e.koff
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid
	e.setKf(fmid, off1)
	e.setKb(bmid, lim1)

	for ec := 1; ; ec++ {
		gotSnake := false
		if fmin > dmin {
			fmin--
			e.setKf(fmin-1, -1)
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			e.setKf(fmax+1, -1)
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			i1 := kvdf[ko+d+1]
			if lo := kvdf[ko+d-1]; lo >= i1 {
				i1 = lo + 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < len(a) && i2 < len(b) && a[i1] == b[i2] {
				i1++
				i2++
			}
			if i1-prev1 > xdlSnakeCnt {
				gotSnake = true
			}
			kvdf[ko+d] = i1
			if odd && bmin <= d && d <= bmax && kvdb[ko+d] <= i1 {
				return i1, i2, true, true
			}
		}

		if bmin > dmin {
			bmin--
			e.setKb(bmin-1, xdlLineMax)
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			e.setKb(bmax+1, xdlLineMax)
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			i1 := kvdb[ko+d-1]
			if hi := kvdb[ko+d+1]; i1 >= hi {
				i1 = hi - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && a[i1-1] == b[i2-1] {
				i1--
				i2--
			}
			if prev1-i1 > xdlSnakeCnt {
				gotSnake = true
			}
			kvdb[ko+d] = i1
			if !odd && fmin <= d && d <= fmax && i1 <= kvdf[ko+d] {
				return i1, i2, true, true
			}
		}

		if needMin {
			continue
		}

		// Past the heuristic trigger, accept a diagonal that has made
		// good progress and ends in a long snake.
		if gotSnake && ec > xdlHeurMin {
			best := 0
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := e.kf(d)
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > xdlKHeur*ec && v > best &&
					off1+xdlSnakeCnt <= i1 && i1 < lim1 &&
					off2+xdlSnakeCnt <= i2 && i2 < lim2 {
					for k := 1; a[i1-k] == b[i2-k]; k++ {
						if k == xdlSnakeCnt {
							best, i1s, i2s = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return i1s, i2s, true, false
			}
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := e.kb(d)
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > xdlKHeur*ec && v > best &&
					off1 < i1 && i1 <= lim1-xdlSnakeCnt &&
					off2 < i2 && i2 <= lim2-xdlSnakeCnt {
					for k := 0; a[i1+k] == b[i2+k]; k++ {
						if k == xdlSnakeCnt-1 {
							best, i1s, i2s = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return i1s, i2s, false, true
			}
		}

		// Too expensive: take the furthest-reaching path and move on. This
		// is what keeps xdiff (and us) near-linear on very different inputs.
		if ec >= e.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(e.kf(d), lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1, i2 = lim2+d, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := xdlLineMax, xdlLineMax
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, e.kb(d))
				i2 := i1 - d
				if i2 < off2 {
					i1, i2 = off2+d, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return fbest1, fbest - fbest1, true, false
			}
			return bbest1, bbest - bbest1, false, true
		}
	}
}
