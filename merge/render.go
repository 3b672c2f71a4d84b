package merge

import "bytes"

// Style chooses how conflicts are written.
type Style int

const (
	// StyleMerge writes ours and theirs between <<<<<<<, ======= and >>>>>>>.
	StyleMerge Style = iota
	// StyleDiff3 also writes the base version after a ||||||| marker. Use it
	// with a Result from TextDiff3, whose conflicts cover the whole base region.
	StyleDiff3
)

// Favor resolves every conflict one way while rendering, like git merge-file's
// --ours, --theirs and --union.
type Favor int

const (
	// FavorNone leaves conflicts as marked hunks.
	FavorNone Favor = iota
	// FavorOurs takes our side of every conflict.
	FavorOurs
	// FavorTheirs takes their side of every conflict.
	FavorTheirs
	// FavorUnion takes ours, then theirs, of every conflict.
	FavorUnion
)

// DefaultMarkerSize is the length of git's conflict markers.
const DefaultMarkerSize = 7

// RenderOptions controls Render. The zero value renders like `git merge-file
// -p` with the labels "ours", "base" and "theirs".
type RenderOptions struct {
	Style Style
	Favor Favor
	// OursLabel, BaseLabel and TheirsLabel follow the markers; empty means
	// "ours", "base" and "theirs".
	OursLabel, BaseLabel, TheirsLabel string
	// MarkerSize is the marker length; 0 or less means DefaultMarkerSize.
	MarkerSize int
}

func (o RenderOptions) withDefaults() RenderOptions {
	if o.OursLabel == "" {
		o.OursLabel = "ours"
	}
	if o.BaseLabel == "" {
		o.BaseLabel = "base"
	}
	if o.TheirsLabel == "" {
		o.TheirsLabel = "theirs"
	}
	if o.MarkerSize <= 0 {
		o.MarkerSize = DefaultMarkerSize
	}
	return o
}

// Render writes the merged text: clean chunks as they are, conflicts with
// git's markers. Conflict markers use CRLF when the surrounding lines do, and
// a side whose last line has no newline gets one inside the conflict, both as
// git does, so a clean merge is byte-identical to `git merge-file -p`.
func (r Result) Render(opts RenderOptions) []byte {
	opts = opts.withDefaults()
	var buf bytes.Buffer
	buf.Grow(r.sizeHint())
	for _, c := range r.Chunks {
		if c.Kind != Conflict {
			writeLines(&buf, c.Lines, false, false)
			continue
		}
		r.writeConflict(&buf, c, opts)
	}
	return buf.Bytes()
}

// sizeHint estimates the rendered size so the buffer is allocated once.
func (r Result) sizeHint() int {
	n := 0
	for _, c := range r.Chunks {
		lines := c.Lines
		if c.Kind == Conflict {
			lines = c.Ours
			n += 4*(DefaultMarkerSize+32) + bytesIn(c.Theirs) + bytesIn(c.Base)
		}
		n += bytesIn(lines)
	}
	return n
}

func bytesIn(lines [][]byte) int {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n
}

// writeConflict writes one conflict hunk (or, with a Favor, its resolution).
func (r Result) writeConflict(buf *bytes.Buffer, c Chunk, opts RenderOptions) {
	crlf := r.needsCR(c)
	switch opts.Favor {
	case FavorOurs:
		writeLines(buf, c.Ours, false, false)
		return
	case FavorTheirs:
		writeLines(buf, c.Theirs, false, false)
		return
	case FavorUnion:
		writeLines(buf, c.Ours, true, crlf)
		writeLines(buf, c.Theirs, false, false)
		return
	}
	writeMarker(buf, '<', opts.MarkerSize, opts.OursLabel, crlf)
	writeLines(buf, c.Ours, true, crlf)
	if opts.Style == StyleDiff3 {
		writeMarker(buf, '|', opts.MarkerSize, opts.BaseLabel, crlf)
		writeLines(buf, c.Base, true, crlf)
	}
	writeMarker(buf, '=', opts.MarkerSize, "", crlf)
	writeLines(buf, c.Theirs, true, crlf)
	writeMarker(buf, '>', opts.MarkerSize, opts.TheirsLabel, crlf)
}

func writeMarker(buf *bytes.Buffer, c byte, size int, label string, crlf bool) {
	for range size {
		buf.WriteByte(c)
	}
	if label != "" {
		buf.WriteByte(' ')
		buf.WriteString(label)
	}
	if crlf {
		buf.WriteByte('\r')
	}
	buf.WriteByte('\n')
}

// writeLines copies lines; with addNL a missing final newline is supplied,
// so that a following marker starts on its own line.
func writeLines(buf *bytes.Buffer, lines [][]byte, addNL, crlf bool) {
	for _, l := range lines {
		buf.Write(l)
	}
	if addNL && len(lines) > 0 && !hasEOL(lines[len(lines)-1]) {
		if crlf {
			buf.WriteByte('\r')
		}
		buf.WriteByte('\n')
	}
}

// eolCRLF says whether line i of lines ends in CRLF (1), LF (0) or cannot
// tell (-1); a last line without newline is judged by the line before it.
func eolCRLF(lines [][]byte, i int) int {
	isCRLF := func(l []byte) int {
		if len(l) > 1 && l[len(l)-2] == '\r' {
			return 1
		}
		return 0
	}
	n := len(lines)
	if n == 0 {
		return -1
	}
	if i >= n {
		i = n - 1
	}
	if i < n-1 {
		return isCRLF(lines[i])
	}
	if hasEOL(lines[i]) {
		return isCRLF(lines[i])
	}
	if i == 0 {
		return -1
	}
	return isCRLF(lines[i-1])
}

// needsCR decides the line ending of markers and supplied newlines for a
// conflict the way git does: the lines just before the conflict in ours and
// theirs, then base's first line, must all agree on CRLF.
func (r Result) needsCR(c Chunk) bool {
	prev := func(start int) int {
		if start > 0 {
			return start - 1
		}
		return 0
	}
	v := eolCRLF(r.ours, prev(c.OursStart))
	if v != 0 {
		v = eolCRLF(r.theirs, prev(c.TheirsStart))
	}
	if v != 0 {
		v = eolCRLF(r.base, 0)
	}
	return v > 0
}
