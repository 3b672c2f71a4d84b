package store

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// A text patch is how a history delta stores a long text field that changed a little: the
// edit that turns the field's value at the previous history version into its new value, as
// a line diff. It is decided and applied here, once, for every store.
//
// The patch is made of whole lines, so every inserted piece is valid UTF-8 (and survives
// JSON); the copy and skip counts are bytes. It carries the length and CRC-32 of the text it
// produces, so a patch applied to the wrong base is an error, never a silently wrong text.
// A patch is only kept when it is much smaller than the value, and only after applying it
// gave the new value back exactly.

// textPatch is the stored form: {"n": length, "crc": crc32, "ops": [...]}, where a positive
// number copies that many bytes of the base, a negative one skips that many, and a string
// is inserted.
type textPatch struct {
	N   int    `json:"n"`
	CRC uint32 `json:"crc"`
	Ops []any  `json:"ops"`
}

// patchDiffTimeout bounds go-diff's search on texts that share little: the patch it then
// returns is still exact, only longer, and a long patch is dropped for the plain value.
const patchDiffTimeout = 200 * time.Millisecond

// makePatch returns the patch that turns old into new, or false when none is worth keeping
// (not at most half the size of new).
func makePatch(old, new string) (*textPatch, bool) {
	a, b := splitLines(old), splitLines(new)
	lo := 0
	for lo < len(a) && lo < len(b) && a[lo] == b[lo] {
		lo++
	}
	hiA, hiB := len(a), len(b)
	for hiA > lo && hiB > lo && a[hiA-1] == b[hiB-1] {
		hiA--
		hiB--
	}
	p := &textPatch{N: len(new), CRC: crc32.ChecksumIEEE([]byte(new))}
	p.copy(byteLen(a[:lo]))
	for _, d := range diffMiddle(a[lo:hiA], b[lo:hiB]) {
		switch d.op {
		case diffmatchpatch.DiffEqual:
			p.copy(byteLen(d.lines))
		case diffmatchpatch.DiffDelete:
			p.skip(byteLen(d.lines))
		case diffmatchpatch.DiffInsert:
			p.insert(strings.Join(d.lines, ""))
		}
	}
	p.copy(byteLen(a[hiA:]))
	enc, err := json.Marshal(p)
	if err != nil || len(enc) > len(new)/2 {
		return nil, false
	}
	// Keep only a patch proven to give new back, after the same JSON round trip it takes in
	// the database.
	var back textPatch
	if err := unmarshalNumbers(enc, &back); err != nil {
		return nil, false
	}
	if got, err := back.apply(old); err != nil || got != new {
		return nil, false
	}
	return p, true
}

func (p *textPatch) copy(n int) {
	if n == 0 {
		return
	}
	if k := len(p.Ops); k > 0 {
		if prev, ok := p.Ops[k-1].(int); ok && prev > 0 {
			p.Ops[k-1] = prev + n
			return
		}
	}
	p.Ops = append(p.Ops, n)
}

func (p *textPatch) skip(n int) {
	if n == 0 {
		return
	}
	if k := len(p.Ops); k > 0 {
		if prev, ok := p.Ops[k-1].(int); ok && prev < 0 {
			p.Ops[k-1] = prev - n
			return
		}
	}
	p.Ops = append(p.Ops, -n)
}

func (p *textPatch) insert(s string) {
	if s == "" {
		return
	}
	if k := len(p.Ops); k > 0 {
		if prev, ok := p.Ops[k-1].(string); ok {
			p.Ops[k-1] = prev + s
			return
		}
	}
	p.Ops = append(p.Ops, s)
}

// apply returns the text the patch makes of base. An error when the patch does not fit base
// or does not produce the text it promises.
func (p *textPatch) apply(base string) (string, error) {
	var b strings.Builder
	b.Grow(p.N)
	pos := 0
	for _, op := range p.Ops {
		switch x := op.(type) {
		case string:
			b.WriteString(x)
		case json.Number, int:
			n, err := opCount(x)
			if err != nil {
				return "", err
			}
			switch {
			case n > 0 && pos+n <= len(base):
				b.WriteString(base[pos : pos+n])
				pos += n
			case n < 0 && pos-n <= len(base):
				pos -= n
			default:
				return "", fmt.Errorf("patch op %d at byte %d does not fit a base of %d bytes", n, pos, len(base))
			}
		default:
			return "", fmt.Errorf("patch op of type %T", op)
		}
	}
	out := b.String()
	if pos != len(base) {
		return "", fmt.Errorf("patch leaves %d bytes of the base unused", len(base)-pos)
	}
	if len(out) != p.N || crc32.ChecksumIEEE([]byte(out)) != p.CRC {
		return "", fmt.Errorf("patch result differs from the text it was made for (%d bytes, want %d)", len(out), p.N)
	}
	return out, nil
}

func opCount(x any) (int, error) {
	switch n := x.(type) {
	case int:
		return n, nil
	case json.Number:
		v, err := n.Int64()
		if err != nil || v == 0 {
			return 0, fmt.Errorf("patch op %q is not a byte count", n)
		}
		return int(v), nil
	}
	return 0, fmt.Errorf("patch op of type %T", x)
}

// splitLines splits s after every newline; the last line may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func byteLen(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n
}

// lineDiff is one step of a line diff: lines kept, deleted from a or inserted from b.
type lineDiff struct {
	op    diffmatchpatch.Operation
	lines []string
}

// diffMiddle diffs what is left between the common prefix and suffix, one rune per distinct
// line so go-diff's Myers search works on lines. Runes skip the UTF-16 surrogates, which
// go-diff's strings would turn into U+FFFD (making different lines equal); past the runes
// there are, the middle counts as replaced whole, which is exact, only longer.
func diffMiddle(a, b []string) []lineDiff {
	whole := []lineDiff{{diffmatchpatch.DiffDelete, a}, {diffmatchpatch.DiffInsert, b}}
	if len(a) == 0 || len(b) == 0 {
		return whole
	}
	ids := map[string]rune{}
	toRunes := func(lines []string) ([]rune, bool) {
		rs := make([]rune, len(lines))
		for i, l := range lines {
			r, ok := ids[l]
			if !ok {
				n := len(ids)
				if n >= 0xD800 {
					n += 0xE000 - 0xD800
				}
				if n > utf8.MaxRune {
					return nil, false
				}
				r = rune(n)
				ids[l] = r
			}
			rs[i] = r
		}
		return rs, true
	}
	ra, okA := toRunes(a)
	rb, okB := toRunes(b)
	if !okA || !okB {
		return whole
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = patchDiffTimeout
	var out []lineDiff
	ia, ib := 0, 0
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(d.Text)
		if ia+n > len(a) && d.Type != diffmatchpatch.DiffInsert || ib+n > len(b) && d.Type != diffmatchpatch.DiffDelete {
			return whole // a script that does not fit the input; makePatch checks the result anyway
		}
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			out = append(out, lineDiff{d.Type, a[ia : ia+n]})
			ia += n
			ib += n
		case diffmatchpatch.DiffDelete:
			out = append(out, lineDiff{d.Type, a[ia : ia+n]})
			ia += n
		case diffmatchpatch.DiffInsert:
			out = append(out, lineDiff{d.Type, b[ib : ib+n]})
			ib += n
		}
	}
	return out
}
