package merge

import (
	"bytes"
	"hash/maphash"
)

// splitLines cuts b into lines that keep their terminating '\n' (and any
// '\r' before it); the last line may lack one. The lines alias b, so no byte is
// copied or re-encoded: invalid UTF-8 and NUL bytes pass through untouched.
func splitLines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	lines := make([][]byte, 0, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b) - 1
		}
		lines = append(lines, b[:i+1:i+1])
		b = b[i+1:]
	}
	return lines
}

// interner gives every distinct line a small integer, so that the diff
// compares integers instead of bytes and equal ids mean byte-equal lines.
// It is an open-addressing table over the lines themselves: denser than a
// map[string]int32 and without copying keys, which matters at 100k lines.
type interner struct {
	seed  maphash.Seed
	slots []int32  // id+1 per slot, 0 = empty
	hash  []uint32 // low hash bits of each slot's line, to skip most compares
	lines [][]byte // the first line seen for each id
	mask  uint64
}

func newInterner(sizeHint int) *interner {
	n := 64
	for n < 2*sizeHint {
		n <<= 1
	}
	return &interner{
		seed:  maphash.MakeSeed(),
		slots: make([]int32, n),
		hash:  make([]uint32, n),
		lines: make([][]byte, 0, sizeHint),
		mask:  uint64(n - 1),
	}
}

// size returns the number of distinct lines seen so far: every id is below it.
func (t *interner) size() int { return len(t.lines) }

// intern returns the ids of lines, adding unseen lines to the table.
func (t *interner) intern(lines [][]byte) []int32 {
	out := make([]int32, len(lines))
	for i, l := range lines {
		out[i] = t.id(l)
	}
	return out
}

func (t *interner) id(l []byte) int32 {
	h := maphash.Bytes(t.seed, l)
	for j := h & t.mask; ; j = (j + 1) & t.mask {
		s := t.slots[j]
		if s == 0 {
			id := int32(len(t.lines))
			t.lines = append(t.lines, l)
			t.slots[j], t.hash[j] = id+1, uint32(h)
			if 2*len(t.lines) > len(t.slots) {
				t.grow()
			}
			return id
		}
		if t.hash[j] == uint32(h) && bytes.Equal(t.lines[s-1], l) {
			return s - 1
		}
	}
}

// grow doubles the table when it is half full, keeping probe chains short.
func (t *interner) grow() {
	n := 2 * len(t.slots)
	t.slots, t.hash, t.mask = make([]int32, n), make([]uint32, n), uint64(n-1)
	for id, l := range t.lines {
		h := maphash.Bytes(t.seed, l)
		j := h & t.mask
		for t.slots[j] != 0 {
			j = (j + 1) & t.mask
		}
		t.slots[j], t.hash[j] = int32(id)+1, uint32(h)
	}
}

// joinLines concatenates lines into one new slice.
func joinLines(lines [][]byte) []byte {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	out := make([]byte, 0, n)
	for _, l := range lines {
		out = append(out, l...)
	}
	return out
}

// hasEOL reports whether line ends with '\n'.
func hasEOL(line []byte) bool {
	return len(line) > 0 && line[len(line)-1] == '\n'
}
