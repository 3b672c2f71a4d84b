package merge

import (
	"bytes"
	"unsafe"
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
type interner struct {
	ids map[string]int32
}

// size returns the number of distinct lines seen so far: every id is below it.
func (t *interner) size() int { return len(t.ids) }

func newInterner(sizeHint int) *interner {
	return &interner{ids: make(map[string]int32, sizeHint)}
}

// intern returns the ids of lines, adding unseen lines to the table.
func (t *interner) intern(lines [][]byte) []int32 {
	out := make([]int32, len(lines))
	for i, l := range lines {
		if len(l) == 0 {
			continue // splitLines never yields empty lines
		}
		// The key aliases the input instead of copying it: the table lives
		// only for one merge, during which the input must not change anyway.
		key := unsafe.String(&l[0], len(l))
		id, ok := t.ids[key]
		if !ok {
			id = int32(len(t.ids))
			t.ids[key] = id
		}
		out[i] = id
	}
	return out
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
