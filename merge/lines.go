package merge

// splitLines cuts b into lines that keep their terminating '\n' (and any
// '\r' before it); the last line may lack one. The lines alias b, so no byte is
// copied or re-encoded: invalid UTF-8 and NUL bytes pass through untouched.
func splitLines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	lines := make([][]byte, 0, n+1)
	start := 0
	for i, c := range b {
		if c == '\n' {
			lines = append(lines, b[start:i+1:i+1])
			start = i + 1
		}
	}
	if start < len(b) {
		lines = append(lines, b[start:len(b):len(b)])
	}
	return lines
}

// interner gives every distinct line a small integer, so that the diff
// compares integers instead of bytes and equal ids mean byte-equal lines.
type interner struct {
	ids map[string]int32
}

func newInterner(sizeHint int) *interner {
	return &interner{ids: make(map[string]int32, sizeHint)}
}

// intern returns the ids of lines, adding unseen lines to the table.
func (t *interner) intern(lines [][]byte) []int32 {
	out := make([]int32, len(lines))
	for i, l := range lines {
		// The map lookup with string(l) does not allocate; only new keys do.
		id, ok := t.ids[string(l)]
		if !ok {
			id = int32(len(t.ids))
			t.ids[string(l)] = id
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
