package merge

import (
	"bytes"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// A line merge stops at lines: two people who each changed one sentence of the same long
// paragraph (one line) conflict, though they changed different words. ProposeWords looks
// inside such a hunk word by word: each side's hunk is diffed against the base's as a
// sequence of tokens (a word, a run of white space, or one other character), and when every
// change of one side is apart from every change of the other (at least one untouched token
// between them), both are applied to the base. Changes that overlap, or touch, are not
// guessed at: the proposal is refused, naming the words both sides changed. It is only a
// proposal: the merge view shows it, with each side's words marked, and applies it (as an
// edited hunk) only when asked.

// WordPiece is one piece of a word-level proposal, in order, with where it comes from:
// Unchanged (the base's text), ChangedOurs, ChangedTheirs, or ChangedBoth (the same change on
// both sides).
type WordPiece struct {
	Text string
	From Kind
}

// WordProposal is a word-level merge of one conflict hunk: the merged text and its pieces.
type WordProposal struct {
	Text   []byte
	Pieces []WordPiece
	// Ours and Theirs count the changes taken from each side.
	Ours, Theirs int
}

// WordRefusal says why a hunk has no word-level proposal.
type WordRefusal struct {
	// Reason is a sentence for people: "both sides changed "quick brown"".
	Reason string
}

func (r *WordRefusal) Error() string { return "no word-level proposal: " + r.Reason }

// maxProposalTokens bounds the tokens of one hunk side: a word merge is for paragraphs, and
// a hunk of many pages is better resolved by its lines.
const maxProposalTokens = 100_000

// ProposeWords returns a word-level merge of the conflict chunk ch, or a *WordRefusal when
// the two sides' changes overlap (or touch), when one side is the base (nothing to combine),
// or when the hunk is too large.
func ProposeWords(ch Chunk) (*WordProposal, error) {
	if ch.Kind != Conflict {
		return nil, &WordRefusal{Reason: "not a conflict"}
	}
	base, ours, theirs := bytes.Join(ch.Base, nil), bytes.Join(ch.Ours, nil), bytes.Join(ch.Theirs, nil)
	ids := map[string]int32{}
	bt, bi := tokenize(base, ids)
	ot, oi := tokenize(ours, ids)
	tt, ti := tokenize(theirs, ids)
	if len(bt) > maxProposalTokens || len(ot) > maxProposalTokens || len(tt) > maxProposalTokens {
		return nil, &WordRefusal{Reason: fmt.Sprintf("the hunk has over %d words", maxProposalTokens)}
	}
	oh := diffIDs(bi, oi, len(ids))
	th := diffIDs(bi, ti, len(ids))
	if len(oh) == 0 || len(th) == 0 {
		return nil, &WordRefusal{Reason: "one side left the hunk's words as they were"}
	}
	// Walk both sides' changes in base order; a change of one side must end before the
	// next change of the other begins, with an unchanged token in between. The same change
	// on both sides is taken once.
	p := &WordProposal{}
	var out bytes.Buffer
	emit := func(text string, from Kind) {
		if text == "" {
			return
		}
		out.WriteString(text)
		if n := len(p.Pieces); n > 0 && p.Pieces[n-1].From == from {
			p.Pieces[n-1].Text += text
			return
		}
		p.Pieces = append(p.Pieces, WordPiece{Text: text, From: from})
	}
	at, i, j := 0, 0, 0 // at: next base token to copy
	for i < len(oh) || j < len(th) {
		var h hunk
		var side []string
		from := ChangedOurs
		switch {
		case j == len(th) || (i < len(oh) && oh[i].i1 <= th[j].i1):
			h, side = oh[i], ot
			if j < len(th) && touches(oh[i], th[j]) {
				if sameChange(oh[i], th[j], ot, tt) {
					from = ChangedBoth
					j++
				} else {
					return nil, overlapRefusal(bt, ot, tt, oh[i], th[j])
				}
			}
			i++
		default:
			h, side, from = th[j], tt, ChangedTheirs
			if i < len(oh) && touches(th[j], oh[i]) {
				return nil, overlapRefusal(bt, ot, tt, oh[i], th[j])
			}
			j++
		}
		if h.i1 < at { // a change touching one already taken (after a change made on both)
			return nil, overlapRefusal(bt, ot, tt, oh[max(i-1, 0)], th[max(j-1, 0)])
		}
		emit(join(bt[at:h.i1]), Unchanged)
		emit(join(side[h.i2:h.i2+h.chg2]), from)
		at = h.i1 + h.chg1
		switch from {
		case ChangedOurs:
			p.Ours++
		case ChangedTheirs:
			p.Theirs++
		default:
			p.Ours++
			p.Theirs++
		}
	}
	emit(join(bt[at:]), Unchanged)
	p.Text = out.Bytes()
	return p, nil
}

// touches reports whether two changes of base (from different sides) overlap or are
// adjacent: base ranges [i1, i1+chg1) that share a token, or meet with no unchanged token
// between them (two insertions at one place included).
func touches(a, b hunk) bool {
	return a.i1 <= b.i1+b.chg1 && b.i1 <= a.i1+a.chg1
}

// sameChange reports whether two sides made the same change at the same place.
func sameChange(a, b hunk, at, bt []string) bool {
	return a.i1 == b.i1 && a.chg1 == b.chg1 && join(at[a.i2:a.i2+a.chg2]) == join(bt[b.i2:b.i2+b.chg2])
}

// overlapRefusal names the base words both sides changed (or the place both inserted at).
func overlapRefusal(bt, ot, tt []string, o, t hunk) *WordRefusal {
	lo, hi := min(o.i1, t.i1), max(o.i1+o.chg1, t.i1+t.chg1)
	what := bytes.TrimSpace([]byte(join(bt[lo:hi])))
	if len(what) == 0 {
		what = bytes.TrimSpace([]byte(join(ot[o.i2:o.i2+o.chg2]) + " / " + join(tt[t.i2:t.i2+t.chg2])))
	}
	s := string(what)
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:59]) + "…"
	}
	return &WordRefusal{Reason: fmt.Sprintf("both sides changed %q", s)}
}

// tokenize splits text into words (letters, digits, marks, and the apostrophes and hyphens
// inside a word), runs of white space, and single other characters, and gives each distinct
// token an id from ids.
func tokenize(text []byte, ids map[string]int32) ([]string, []int32) {
	var toks []string
	for len(text) > 0 {
		r, n := utf8.DecodeRune(text)
		switch {
		case isWordRune(r):
			for n < len(text) {
				r2, m := utf8.DecodeRune(text[n:])
				if !isWordRune(r2) && !((r2 == '\'' || r2 == '’' || r2 == '-') && n+m < len(text) && nextIsWord(text[n+m:])) {
					break
				}
				n += m
			}
		case unicode.IsSpace(r):
			for n < len(text) {
				r2, m := utf8.DecodeRune(text[n:])
				if !unicode.IsSpace(r2) {
					break
				}
				n += m
			}
		}
		toks = append(toks, string(text[:n]))
		text = text[n:]
	}
	out := make([]int32, len(toks))
	for i, t := range toks {
		id, ok := ids[t]
		if !ok {
			id = int32(len(ids))
			ids[t] = id
		}
		out[i] = id
	}
	return toks, out
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func nextIsWord(b []byte) bool {
	r, _ := utf8.DecodeRune(b)
	return isWordRune(r)
}

func join(toks []string) string {
	n := 0
	for _, t := range toks {
		n += len(t)
	}
	var b []byte
	b = make([]byte, 0, n)
	for _, t := range toks {
		b = append(b, t...)
	}
	return string(b)
}
