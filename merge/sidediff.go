package merge

// Op is the kind of an Edit.
type Op int

const (
	// OpEqual lines are in both texts.
	OpEqual Op = iota
	// OpDelete lines are only in the old text.
	OpDelete
	// OpInsert lines are only in the new text.
	OpInsert
)

// String returns the op as a diff prefix character.
func (o Op) String() string {
	switch o {
	case OpDelete:
		return "-"
	case OpInsert:
		return "+"
	}
	return " "
}

// Edit is a run of lines with the same Op in a line diff.
type Edit struct {
	Op    Op
	Lines [][]byte
}

// DiffLines returns the line diff from old to new with the same algorithm the
// merge uses, as runs of equal, deleted and inserted lines (a replacement is a
// delete followed by an insert).
func DiffLines(old, new [][]byte) []Edit {
	in := newInterner(len(old) + len(new))
	ia, ib := in.intern(old), in.intern(new)
	hs := diffIDs(ia, ib, in.size())
	var out []Edit
	i := 0
	for _, h := range hs {
		if h.i1 > i {
			out = append(out, Edit{OpEqual, old[i:h.i1]})
		}
		if h.chg1 > 0 {
			out = append(out, Edit{OpDelete, old[h.i1 : h.i1+h.chg1]})
		}
		if h.chg2 > 0 {
			out = append(out, Edit{OpInsert, new[h.i2 : h.i2+h.chg2]})
		}
		i = h.i1 + h.chg1
	}
	if i < len(old) {
		out = append(out, Edit{OpEqual, old[i:]})
	}
	return out
}

// OursDiff shows what ours changed in this chunk relative to base, so a merge
// view can show each side's intent rather than just its text.
func (c Chunk) OursDiff() []Edit { return DiffLines(c.Base, c.Ours) }

// TheirsDiff shows what theirs changed in this chunk relative to base.
func (c Chunk) TheirsDiff() []Edit { return DiffLines(c.Base, c.Theirs) }
