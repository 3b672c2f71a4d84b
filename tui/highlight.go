package tui

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Search matches are shown in the list and the editor the way a search finds them: the text
// and the query compared after store.SearchFold, so "strasse" marks "Straße" and "istanbul"
// marks "İstanbul". The mark turns underline and reverse video on and off (SGR 4;7 / 24;27)
// rather than resetting all attributes, so it sits inside a styled row (the selected one)
// without ending its style, and it shows without colour (NO_COLOR).
const (
	matchOn  = "\x1b[4;7m"
	matchOff = "\x1b[24;27m"
)

// highlight returns s, text already made safe for the terminal, with every match of query
// marked. A match covers whole characters of s (a letter and its combining marks), so "ss"
// marks all of "ß", and a decomposed "é" is marked with its accent.
func highlight(s, query string) string {
	spans := matchSpans(s, query)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp[0]])
		b.WriteString(matchOn + s[sp[0]:sp[1]] + matchOff)
		at = sp[1]
	}
	b.WriteString(s[at:])
	return b.String()
}

// matchSpans returns the byte ranges of s that the folded query matches, in order, without
// overlaps. s is cut into characters (a rune and the combining marks after it), each folded
// on its own; a match is mapped back to the characters its folded bytes come from.
func matchSpans(s, query string) [][2]int {
	q := store.SearchFold(query)
	if q == "" || s == "" || !strings.Contains(store.SearchFold(s), q) {
		return nil
	}
	var (
		folded strings.Builder
		starts []int // per character: its byte offset in s
		fstart []int // per character: its byte offset in folded
	)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		j := i + n
		for j < len(s) {
			r, m := utf8.DecodeRuneInString(s[j:])
			if !unicode.Is(unicode.M, r) {
				break
			}
			j += m
		}
		starts = append(starts, i)
		fstart = append(fstart, folded.Len())
		if r < utf8.RuneSelf && j == i+1 {
			// ASCII folds to its lower case (SearchFold's NFKC leaves it as it is).
			folded.WriteByte(byte(unicode.ToLower(r)))
		} else {
			folded.WriteString(store.SearchFold(s[i:j]))
		}
		i = j
	}
	starts = append(starts, len(s))
	fstart = append(fstart, folded.Len())
	f := folded.String()
	var out [][2]int
	for from := 0; from <= len(f)-len(q); {
		k := strings.Index(f[from:], q)
		if k < 0 {
			break
		}
		a, b := from+k, from+k+len(q)
		// The characters whose folded text the match touches: from the one whose folded
		// text ends after a to the last one whose folded text starts before b.
		first := sort.Search(len(fstart)-1, func(c int) bool { return fstart[c+1] > a })
		last := sort.Search(len(fstart)-1, func(c int) bool { return fstart[c] >= b }) - 1
		if first <= last {
			lo, hi := starts[first], starts[last+1]
			if n := len(out); n > 0 && out[n-1][1] >= lo {
				out[n-1][1] = max(out[n-1][1], hi)
			} else {
				out = append(out, [2]int{lo, hi})
			}
		}
		from = b
	}
	return out
}

// snippetScan and matchLineScan bound how much of a long text a redraw looks through for a
// match: the list folds the text of every visible row, the editor of every long field.
const (
	snippetScan   = 16 << 10
	matchLineScan = 256 << 10
)

// searchSnippet is, for a record the list shows during a search, where the search found it
// when its title does not show it, from the first line of the first field with a match (in
// its first 16 KiB): "description: …the freight costs remain…" (without the
// field's name when width is under 40), width columns at most, the match marked; "" when the title shows a match or no searched field matches.
func searchSnippet(reg *store.Registry, r *store.Record, query string, width int) string {
	if query == "" || len(matchSpans(safe.Line(reg.TitleOf(r)), query)) > 0 {
		return ""
	}
	q := store.SearchFold(query)
	for _, f := range reg.SearchFields(r.Kind) {
		text := f.Format(r.Fields[f.Name])
		if len(text) > snippetScan {
			text = text[:snippetScan] // a match further in is not shown: the list stays quick
		}
		// The first line with a match (folded whole, which is quick), then where in it.
		var sp [][2]int
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(store.SearchFold(l), q) {
				text = safe.Line(l)
				sp = matchSpans(text, query)
				break
			}
		}
		if len(sp) == 0 {
			continue
		}
		label := f.Label + ": "
		if width < 40 { // a narrow column shows the words alone
			label = ""
		}
		room := width - ansi.StringWidth(label)
		if room < 8 {
			return ""
		}
		// Start a third of the room before the match, at a character boundary.
		start := sp[0][0]
		for back := room / 3; back > 0 && start > 0; back-- {
			_, n := utf8.DecodeLastRuneInString(text[:start])
			start -= n
		}
		cut := text[start:]
		if start > 0 {
			cut = "…" + cut
		}
		return label + ansi.Truncate(highlight(cut, query), room, "…")
	}
	return ""
}

// matchLine says where in a long text the search matched when the line shown does not: " ·
// match on line N"; "" when the first line shows it or nothing matches.
func matchLine(text, query string) string {
	if query == "" {
		return ""
	}
	if len(text) > matchLineScan {
		text = text[:matchLineScan]
	}
	q := store.SearchFold(query)
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(store.SearchFold(l), q) {
			if i == 0 {
				return ""
			}
			return " · match on line " + strconv.Itoa(i+1)
		}
	}
	return ""
}

// searchCell is the list's title column, width wide, for r during a search: the title (with
// its matches marked), and when the match is in another field, a snippet of it beside.
func searchCell(reg *store.Registry, r *store.Record, title, query string, width int) string {
	if snip := searchSnippet(reg, r, query, width-min(ansi.StringWidth(title), width/2)-1); snip != "" {
		title = ansi.Truncate(title, width/2, "…") + " " + snip
	}
	return padRight(ansi.Truncate(title, width, "…"), width)
}

// matchLineMemo remembers matchLine's last answers, so that a redraw (every key press) does
// not fold the same long text again: the editor's other fields do not change while one is
// typed in. Comparing a string with the one remembered is quick (the same string is the same
// memory).
type matchLineMemo struct {
	entries [4]struct{ text, query, out string }
	next    int
}

// matchLine is matchLine(text, query), remembered.
func (m *matchLineMemo) matchLine(text, query string) string {
	if query == "" {
		return ""
	}
	for _, e := range m.entries {
		if e.query == query && len(e.text) == len(text) && e.text == text {
			return e.out
		}
	}
	out := matchLine(text, query)
	m.entries[m.next] = struct{ text, query, out string }{text, query, out}
	m.next = (m.next + 1) % len(m.entries)
	return out
}
