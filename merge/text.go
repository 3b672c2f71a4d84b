// Package merge is tandem's three-way merge: line-level text merge compatible
// with `git merge-file`, hunk resolution for merge UIs, and the per-field
// merge of records by their registry rule. It is pure: no I/O (the merge-file
// command lives in package main), and no imports beyond store's types.
package merge

import "sort"

// Kind says where the lines of a Chunk come from.
type Kind int

const (
	// Unchanged lines are the same in ours and theirs (usually untouched
	// since base; an identical change made on both sides can show up here too).
	Unchanged Kind = iota
	// ChangedOurs lines were changed by ours only and are taken from ours.
	ChangedOurs
	// ChangedTheirs lines were changed by theirs only and are taken from theirs.
	ChangedTheirs
	// ChangedBoth lines were changed on both sides in the same way; taken once.
	ChangedBoth
	// Conflict lines were changed differently on both sides; someone must pick.
	Conflict
)

// String returns the kind's name for logs and tests.
func (k Kind) String() string {
	switch k {
	case Unchanged:
		return "unchanged"
	case ChangedOurs:
		return "ours"
	case ChangedTheirs:
		return "theirs"
	case ChangedBoth:
		return "both"
	case Conflict:
		return "conflict"
	}
	return "unknown"
}

// Chunk is one consecutive piece of the merge. Clean chunks carry their merged
// lines in Lines; conflict chunks carry the three competing versions. Lines
// keep their line terminator (the last line of a file may have none) and alias
// the input slices: callers must not modify them.
type Chunk struct {
	Kind Kind
	// Lines is the merged text of a clean chunk; nil for a conflict.
	Lines [][]byte
	// Base, Ours and Theirs are the lines of each version this chunk covers.
	// For a clean chunk taken from one side, the other side's lines equal
	// Base (or, for Unchanged, all three agree).
	Base, Ours, Theirs [][]byte
	// BaseStart, OursStart and TheirsStart are 0-based line numbers of the
	// chunk's first line in each version.
	BaseStart, OursStart, TheirsStart int
}

// Result is a three-way text merge: the chunks in file order and how many of
// them are conflicts.
type Result struct {
	Chunks    []Chunk
	Conflicts int

	// The split inputs, kept for end-of-line decisions when rendering.
	base, ours, theirs [][]byte
}

// ConflictIndex returns the index in Chunks of the n-th conflict (0-based),
// or -1 if there is no such conflict.
func (r Result) ConflictIndex(n int) int {
	for i, c := range r.Chunks {
		if c.Kind == Conflict {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// level chooses how hard the merge tries to shrink conflicts.
type level int

const (
	// levelEager merges identical changes but leaves every other overlap as
	// one conflict, so the base shown in diff3 style is exactly right.
	levelEager level = iota
	// levelZealous also diffs ours against theirs inside each conflict, keeps
	// their common lines out of it, and joins conflicts separated only by a few
	// lines (or lines without letters and digits): git's default.
	levelZealous
	// levelZDiff3 is levelEager, then moves the lines ours and theirs agree on
	// at the start and the end of each conflict out of it, leaving its base
	// part whole: git's zdiff3.
	levelZDiff3
)

// Text merges ours and theirs, both derived from base, line by line, the way
// `git merge-file` does by default: changes made on one side are taken, the
// same change made on both sides is taken once, and overlapping or adjacent
// different changes become conflicts, shrunk to the lines that really differ.
// It never fails: any bytes (CRLF, no final newline, invalid UTF-8, NUL) are
// merged as lines and copied unchanged.
func Text(base, ours, theirs []byte) Result {
	return text(base, ours, theirs, levelZealous)
}

// TextDiff3 is Text without shrinking conflicts, as `git merge-file --diff3`
// does: each conflict keeps the whole base region both sides changed, which is
// what a diff3-style view (ours, base, theirs) needs to be truthful.
func TextDiff3(base, ours, theirs []byte) Result {
	return text(base, ours, theirs, levelEager)
}

// TextZDiff3 is TextDiff3 with the lines both sides agree on at the start and
// the end of each conflict taken out of it, as `git merge-file --zdiff3` does.
// The conflict's base part stays whole, so render it with StyleDiff3; a
// conflict stays a conflict even when one side is left with no lines.
func TextZDiff3(base, ours, theirs []byte) Result {
	return text(base, ours, theirs, levelZDiff3)
}

// mergeEntry is one region of the merge where something changed, in ours (i1, chg1),
// theirs (i2, chg2) and base (i0, chg0) coordinates.
type mergeEntry struct {
	mode      int // modeConflict, modeOurs, modeTheirs or modeSame
	i0, chg0  int
	i1, chg1  int
	i2, chg2  int
	baseStale bool // i0/chg0 no longer describe the region (after refinement)
}

const (
	modeConflict = 0
	modeOurs     = 1
	modeTheirs   = 2
	modeSame     = 4 // both sides' text is identical after refinement
)

func text(base, ours, theirs []byte, lvl level) Result {
	bl, ol, tl := splitLines(base), splitLines(ours), splitLines(theirs)
	in := newInterner(len(bl) + len(ol)/8 + 16)
	bi, oi, ti := in.intern(bl), in.intern(ol), in.intern(tl)

	h1 := diffIDs(bi, oi, in.size()) // base -> ours
	h2 := diffIDs(bi, ti, in.size()) // base -> theirs
	r := Result{base: bl, ours: ol, theirs: tl}
	if len(h1) == 0 || len(h2) == 0 {
		// One side did not change anything: the other side is the result,
		// byte for byte (git copies the file as is here).
		r.Chunks = cleanOnly(bl, ol, tl, h1, h2)
		return r
	}
	entries := doMerge(bi, oi, ti, ol, h1, h2, lvl, in.size())
	r.Chunks = buildChunks(bl, ol, tl, h1, h2, entries)
	for _, c := range r.Chunks {
		if c.Kind == Conflict {
			r.Conflicts++
		}
	}
	return r
}

// cleanOnly builds the chunks when at most one side changed anything: the
// unchanged side is then line for line equal to base.
func cleanOnly(bl, ol, tl [][]byte, h1, h2 []hunk) []Chunk {
	kind, side, hs := ChangedTheirs, tl, h2
	if len(h2) == 0 {
		kind, side, hs = ChangedOurs, ol, h1
	}
	var chunks []Chunk
	add := func(k Kind, b0, b1, s0, s1 int) {
		c := Chunk{Kind: k, Lines: side[s0:s1], Base: bl[b0:b1], BaseStart: b0}
		c.Ours, c.OursStart, c.Theirs, c.TheirsStart = bl[b0:b1], b0, side[s0:s1], s0
		if kind == ChangedOurs {
			c.Ours, c.OursStart, c.Theirs, c.TheirsStart = side[s0:s1], s0, bl[b0:b1], b0
		}
		chunks = append(chunks, c)
	}
	bpos, spos := 0, 0
	for _, h := range hs {
		if h.i1 > bpos {
			add(Unchanged, bpos, h.i1, spos, spos+h.i1-bpos)
		}
		add(kind, h.i1, h.i1+h.chg1, h.i2, h.i2+h.chg2)
		bpos, spos = h.i1+h.chg1, h.i2+h.chg2
	}
	if len(bl) > bpos {
		add(Unchanged, bpos, len(bl), spos, len(side))
	}
	return chunks
}

// appendMerge adds a region to the list. A region that overlaps or touches
// the previous one in ours or in theirs cannot be merged apart from it: the
// two become one region, a conflict unless both were taken from the same side.
func appendMerge(list []mergeEntry, mode, i0, chg0, i1, chg1, i2, chg2 int) []mergeEntry {
	if n := len(list); n > 0 {
		last := &list[n-1]
		if i1 <= last.i1+last.chg1 || i2 <= last.i2+last.chg2 {
			if mode != last.mode {
				last.mode = modeConflict
			}
			// Stretch the previous region to this one's ends.
			last.chg0 = i0 + chg0 - last.i0
			last.chg1 = i1 + chg1 - last.i1
			last.chg2 = i2 + chg2 - last.i2
			return list
		}
	}
	return append(list, mergeEntry{mode: mode, i0: i0, chg0: chg0, i1: i1, chg1: chg1, i2: i2, chg2: chg2})
}

// doMerge walks the two diffs against base side by side, in base order, and
// classifies every changed region: changed by ours only, by theirs only, or
// by both. A change made by both is taken once when it is the same change
// (same base lines, same new text); otherwise, and also when the two changes
// merely touch (one ends where the other starts), it is a conflict.
//
// Between its hunks a side is equal to base, shifted by the lines its earlier
// hunks added or removed; that is how a base position is carried to the side
// that did not change there.
func doMerge(bi, oi, ti []int32, ol [][]byte, x1, x2 []hunk, lvl level, nids int) []mergeEntry {
	var list []mergeEntry
	a, b := 0, 0
	for a < len(x1) && b < len(x2) {
		o, t := x1[a], x2[b]
		oEnd, tEnd := o.i1+o.chg1, t.i1+t.chg1 // ends in base
		switch {
		case oEnd < t.i1: // ours' change comes first, clear of theirs'
			shift := t.i2 - t.i1 // theirs is base shifted by this, up to t
			list = appendMerge(list, modeOurs, o.i1, o.chg1, o.i2, o.chg2, o.i1+shift, o.chg1)
			a++
			continue
		case tEnd < o.i1: // theirs' change comes first
			shift := o.i2 - o.i1
			list = appendMerge(list, modeTheirs, t.i1, t.chg1, t.i1+shift, t.chg1, t.i2, t.chg2)
			b++
			continue
		}
		same := o.i1 == t.i1 && o.chg1 == t.chg1 && o.chg2 == t.chg2 &&
			equalIDs(oi[o.i2:o.i2+o.chg2], ti[t.i2:t.i2+t.chg2])
		if !same {
			// The conflict spans the base lines either side changed. Each
			// side's part is its own change widened by the base lines around
			// it that only the other side changed (unchanged on this side,
			// so one for one).
			lo, hi := min(o.i1, t.i1), max(oEnd, tEnd)
			o0, o1 := o.i2-(o.i1-lo), o.i2+o.chg2+(hi-oEnd)
			t0, t1 := t.i2-(t.i1-lo), t.i2+t.chg2+(hi-tEnd)
			list = appendMerge(list, modeConflict, lo, hi-lo, o0, o1-o0, t0, t1-t0)
		}
		// Move past whichever change ends first in base (both if together);
		// the other may still overlap the next hunk of this side.
		if oEnd >= tEnd {
			b++
		}
		if tEnd >= oEnd {
			a++
		}
	}
	for ; a < len(x1); a++ { // theirs has no changes left: it is base shifted by its net growth
		o := x1[a]
		list = appendMerge(list, modeOurs, o.i1, o.chg1, o.i2, o.chg2, o.i1+len(ti)-len(bi), o.chg1)
	}
	for ; b < len(x2); b++ {
		t := x2[b]
		list = appendMerge(list, modeTheirs, t.i1, t.chg1, t.i1+len(oi)-len(bi), t.chg1, t.i2, t.chg2)
	}
	switch lvl {
	case levelZealous:
		list = refineConflicts(oi, ti, list, nids)
		list = simplifyNonConflicts(ol, list)
	case levelZDiff3:
		trimConflicts(oi, ti, list)
	}
	return list
}

// trimConflicts moves the lines ours and theirs have in common at the start
// and at the end of each conflict out of it (git's zdiff3). Unlike
// refineConflicts it does not diff the inside: a conflict keeps one piece,
// and its base range (i0, chg0) is left as it was.
func trimConflicts(oi, ti []int32, list []mergeEntry) {
	for k := range list {
		m := &list[k]
		if m.mode != modeConflict {
			continue
		}
		for m.chg1 > 0 && m.chg2 > 0 && oi[m.i1] == ti[m.i2] {
			m.i1++
			m.i2++
			m.chg1--
			m.chg2--
		}
		for m.chg1 > 0 && m.chg2 > 0 && oi[m.i1+m.chg1-1] == ti[m.i2+m.chg2-1] {
			m.chg1--
			m.chg2--
		}
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// refineConflicts diffs ours against theirs inside each conflict and keeps
// only the parts where they differ as conflicts (git's default does the
// same): lines both sides wrote alike leave the conflict, and two sides that
// made the same edit, aligned differently against base, merge cleanly.
func refineConflicts(oi, ti []int32, list []mergeEntry, nids int) []mergeEntry {
	out := make([]mergeEntry, 0, len(list))
	for _, m := range list {
		if m.mode != modeConflict || m.chg1 == 0 || m.chg2 == 0 {
			out = append(out, m)
			continue
		}
		hs := diffIDs(oi[m.i1:m.i1+m.chg1], ti[m.i2:m.i2+m.chg2], nids)
		if len(hs) == 0 {
			m.mode = modeSame
			out = append(out, m)
			continue
		}
		for _, h := range hs {
			out = append(out, mergeEntry{
				mode: modeConflict, i0: m.i0, chg0: m.chg0,
				i1: m.i1 + h.i1, chg1: h.chg1, i2: m.i2 + h.i2, chg2: h.chg2,
				baseStale: true,
			})
		}
	}
	return out
}

// simplifyNonConflicts joins two conflicts separated by at most three lines,
// or by lines without any ASCII letter or digit: one bigger conflict reads
// better than two with a scrap of braces between them (git's ZEALOUS_ALNUM).
func simplifyNonConflicts(ol [][]byte, list []mergeEntry) []mergeEntry {
	if len(list) == 0 {
		return list
	}
	out := []mergeEntry{list[0]}
	for _, next := range list[1:] {
		m := &out[len(out)-1]
		if m.mode == modeConflict && next.mode == modeConflict {
			begin, end := m.i1+m.chg1, next.i1
			if end-begin <= 3 || !alnumIn(ol[begin:end]) {
				m.chg1 = next.i1 + next.chg1 - m.i1
				m.chg2 = next.i2 + next.chg2 - m.i2
				m.baseStale = true
				continue
			}
		}
		out = append(out, next)
	}
	return out
}

// alnumIn reports whether any of lines contains an ASCII letter or digit
// (git's isalnum ignores the locale).
func alnumIn(lines [][]byte) bool {
	for _, l := range lines {
		for _, c := range l {
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return true
			}
		}
	}
	return false
}

// baseMap translates line boundaries of one side to base, using that side's
// diff against base: a boundary inside (or at the edge of) a changed region
// maps to that region's whole base range.
type baseMap struct{ hs []hunk }

// bounds returns the lowest and highest base boundary for side boundary p.
func (m baseMap) bounds(p int) (lo, hi int) {
	// First hunk whose side range ends at or after p.
	k := sort.Search(len(m.hs), func(k int) bool { return m.hs[k].i2+m.hs[k].chg2 >= p })
	if k < len(m.hs) && m.hs[k].i2 <= p {
		h := m.hs[k]
		return h.i1, h.i1 + h.chg1
	}
	delta := 0
	if k > 0 {
		h := m.hs[k-1]
		delta = (h.i2 + h.chg2) - (h.i1 + h.chg1)
	}
	return p - delta, p - delta
}

// buildChunks turns merge entries into chunks, copying unchanged stretches
// from ours (equal ids mean equal bytes, so either side would do).
func buildChunks(bl, ol, tl [][]byte, h1, h2 []hunk, list []mergeEntry) []Chunk {
	om, tm := baseMap{h1}, baseMap{h2}
	chunks := make([]Chunk, 0, 2*len(list)+1)
	i := 0 // next ours line to emit
	unchanged := func(end, theirsEnd int) {
		if end <= i {
			return
		}
		n := end - i
		ts := theirsEnd - n
		bs, _ := om.bounds(i)
		be, _ := om.bounds(end)
		chunks = append(chunks, Chunk{
			Kind: Unchanged, Lines: ol[i:end],
			Base: clampLines(bl, bs, be), Ours: ol[i:end], Theirs: clampLines(tl, ts, theirsEnd),
			BaseStart: bs, OursStart: i, TheirsStart: ts,
		})
	}
	for _, m := range list {
		unchanged(m.i1, m.i2)
		i0, chg0 := m.i0, m.chg0
		if m.baseStale {
			lo1, _ := om.bounds(m.i1)
			lo2, _ := tm.bounds(m.i2)
			_, hi1 := om.bounds(m.i1 + m.chg1)
			_, hi2 := tm.bounds(m.i2 + m.chg2)
			i0 = min(lo1, lo2)
			chg0 = max(hi1, hi2) - i0
		}
		c := Chunk{
			Base: clampLines(bl, i0, i0+chg0), BaseStart: i0,
			Ours: ol[m.i1 : m.i1+m.chg1], OursStart: m.i1,
			Theirs: clampLines(tl, m.i2, m.i2+m.chg2), TheirsStart: m.i2,
		}
		switch m.mode {
		case modeConflict:
			c.Kind = Conflict
		case modeOurs:
			c.Kind, c.Lines = ChangedOurs, c.Ours
		case modeTheirs:
			c.Kind, c.Lines = ChangedTheirs, c.Theirs
		case modeSame:
			c.Kind, c.Lines = ChangedBoth, c.Ours
		}
		chunks = append(chunks, c)
		i = m.i1 + m.chg1
	}
	unchanged(len(ol), len(tl))
	return chunks
}

// clampLines returns lines[lo:hi] clipped to the slice, so a region computed
// from diff bookkeeping can never index out of range.
func clampLines(lines [][]byte, lo, hi int) [][]byte {
	lo = max(0, min(lo, len(lines)))
	hi = max(lo, min(hi, len(lines)))
	return lines[lo:hi]
}
