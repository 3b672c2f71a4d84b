package merge

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

type wordCase struct {
	name, want               string
	base, ours, theirs, text string
}

// readWordCases parses testdata/words.txt (its header says the format).
func readWordCases(t *testing.T) []wordCase {
	t.Helper()
	b, err := os.ReadFile("testdata/words.txt")
	if err != nil {
		t.Fatal(err)
	}
	var (
		out     []wordCase
		section *string
	)
	for _, line := range strings.SplitAfter(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "#") && len(out) == 0:
		case strings.HasPrefix(line, "=== "):
			out = append(out, wordCase{name: strings.TrimSpace(strings.TrimPrefix(line, "=== "))})
			section = nil
		case strings.HasPrefix(line, "want: ") && section == nil:
			out[len(out)-1].want = strings.TrimSpace(strings.TrimPrefix(line, "want: "))
		case line == "-- base --\n":
			section = &out[len(out)-1].base
		case line == "-- ours --\n":
			section = &out[len(out)-1].ours
		case line == "-- theirs --\n":
			section = &out[len(out)-1].theirs
		case line == "-- want --\n":
			section = &out[len(out)-1].text
		case section != nil:
			*section += line
		}
	}
	return out
}

// TestProposeWords_Corpus runs the corpus of prose edits (testdata/words.txt): each case is a
// long paragraph that both sides edited, so the line merge has one conflict hunk. Where the
// sides changed different words, the proposal is the base with both edits (written out in
// the corpus); where the changed words overlap or touch, it is refused with the words named.
func TestProposeWords_Corpus(t *testing.T) {
	cases := readWordCases(t)
	proposed, refused := 0, 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Text([]byte(c.base), []byte(c.ours), []byte(c.theirs))
			if res.Conflicts != 1 {
				t.Fatalf("line merge: %d conflicts, want 1 (the corpus case is wrong)", res.Conflicts)
			}
			ch := res.Chunks[res.ConflictIndex(0)]
			p, err := ProposeWords(ch)
			if reason, ok := strings.CutPrefix(c.want, "refuse: "); ok {
				var r *WordRefusal
				if !errors.As(err, &r) || !strings.HasPrefix(r.Reason, reason) {
					t.Fatalf("ProposeWords = %v, %v; want a refusal starting %q", p, err, reason)
				}
				refused++
				return
			}
			if err != nil {
				t.Fatalf("ProposeWords: %v; want a proposal", err)
			}
			// Applied as the merge view applies it: the hunk edited to the proposal.
			r := NewResolution(res)
			if err := r.Edit(0, p.Text); err != nil {
				t.Fatal(err)
			}
			if got := string(r.Bytes(RenderOptions{})); got != c.text {
				t.Fatalf("merged with the proposal:\n%s\nwant:\n%s", got, c.text)
			}
			var joined strings.Builder
			for _, pc := range p.Pieces {
				joined.WriteString(pc.Text)
			}
			if joined.String() != string(p.Text) || p.Ours == 0 || p.Theirs == 0 {
				t.Errorf("pieces %q do not make the text, or a side is missing (ours %d, theirs %d)", p.Pieces, p.Ours, p.Theirs)
			}
			proposed++
		})
	}
	t.Logf("%d cases: %d proposed, %d refused", len(cases), proposed, refused)
	if proposed == 0 || refused == 0 {
		t.Errorf("the corpus must show both outcomes")
	}
}

func TestProposeWords_Pieces(t *testing.T) {
	base := "The quick brown fox jumps over the lazy dog.\n"
	res := Text([]byte(base), []byte("The quick red fox jumps over the lazy dog.\n"), []byte("The quick brown fox jumps over the sleepy dog.\n"))
	p, err := ProposeWords(res.Chunks[res.ConflictIndex(0)])
	if err != nil {
		t.Fatal(err)
	}
	want := []WordPiece{{"The quick ", Unchanged}, {"red", ChangedOurs}, {" fox jumps over the ", Unchanged},
		{"sleepy", ChangedTheirs}, {" dog.\n", Unchanged}}
	if len(p.Pieces) != len(want) {
		t.Fatalf("pieces = %q, want %q", p.Pieces, want)
	}
	for i := range want {
		if p.Pieces[i] != want[i] {
			t.Errorf("piece %d = %+v, want %+v", i, p.Pieces[i], want[i])
		}
	}
	// A clean chunk, and a conflict where one side equals the base, have nothing to propose.
	if _, err := ProposeWords(Chunk{Kind: Unchanged}); err == nil {
		t.Error("a clean chunk got a proposal")
	}
	// Words with apostrophes and hyphens are one token: changing "don't" and "it's" apart.
	res = Text([]byte("I don't know if it's well-known.\n"), []byte("I can't know if it's well-known.\n"), []byte("I don't know if it's little-known.\n"))
	if p, err := ProposeWords(res.Chunks[res.ConflictIndex(0)]); err != nil || string(p.Text) != "I can't know if it's little-known.\n" {
		t.Errorf("ProposeWords = %v, %v", p, err)
	}
}

// TestRecords_TakeWords: a record merge proposes and takes a hunk's word-level merge as one
// undo step, and Undo says so; a refused proposal changes nothing.
func TestRecords_TakeWords(t *testing.T) {
	reg := store.DefaultRegistry()
	base := store.Values{"body": "intro\nThe quick brown fox jumps over the lazy dog.\nend\n"}
	mine := store.Values{"body": "intro\nThe quick red fox jumps over the lazy dog.\nend\n"}
	theirs := store.Values{"body": "intro\nThe quick brown fox jumps over the sleepy dog.\nend\n"}
	r := Records(reg, store.KindDocument, base, mine, theirs)
	if _, err := r.ProposeWords("body", 0); err != nil {
		t.Fatal(err)
	}
	if r.Conflicts() != 1 {
		t.Fatal("ProposeWords changed the merge")
	}
	if _, err := r.TakeWords("body", 0); err != nil {
		t.Fatal(err)
	}
	v, ok := r.Field("body").Value()
	if want := "intro\nThe quick red fox jumps over the sleepy dog.\nend\n"; !ok || v != want {
		t.Fatalf("body = %q, %v; want %q", v, ok, want)
	}
	u, ok := r.Undo()
	if !ok || u.String() != "undid hunk 1: word-level merge in body" || u.Hunk != 0 || r.Conflicts() != 1 {
		t.Errorf("undo = %+v, %v; conflicts %d", u, ok, r.Conflicts())
	}

	theirs = store.Values{"body": "intro\nThe quick grey fox jumps over the lazy dog.\nend\n"}
	r = Records(reg, store.KindDocument, base, mine, theirs)
	var refusal *WordRefusal
	if _, err := r.TakeWords("body", 0); !errors.As(err, &refusal) || !strings.Contains(refusal.Reason, `"brown"`) {
		t.Errorf("TakeWords on overlapping words = %v, want a refusal naming brown", err)
	}
	if _, ok := r.Undo(); ok || r.Conflicts() != 1 {
		t.Error("a refused proposal left a step on the undo stack or resolved the field")
	}
}

// TestProposeWords_Random: in generated paragraphs of 80 words, each side replaces one word
// (ours word i, theirs word j). Whenever i and j differ the proposal is the paragraph with
// both replacements; when they are the same word with different replacements it is refused
// naming that word; the same replacement on both sides is taken once.
func TestProposeWords_Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	vocab := strings.Fields("the quick brown fox jumps over lazy dog river stone Straße Ёлка σοφία naïve café " +
		"report budget figures supplier contract season freight costs warehouse schedule board")
	proposed, refused := 0, 0
	for n := range 500 {
		words := make([]string, 80)
		for k := range words {
			words[k] = vocab[rng.IntN(len(vocab))]
		}
		i, j := rng.IntN(len(words)), rng.IntN(len(words))
		if n%10 == 0 {
			j = i
		}
		ours, theirs, want := slices.Clone(words), slices.Clone(words), slices.Clone(words)
		ours[i], theirs[j] = fmt.Sprintf("OURS%d", n), fmt.Sprintf("THEIRS%d", n)
		if n%20 == 0 {
			theirs[j] = ours[i] // the same change on both sides
		}
		want[i], want[j] = ours[i], theirs[j]
		line := func(ws []string) []byte { return []byte(strings.Join(ws, " ") + "\n") }
		res := Text(line(words), line(ours), line(theirs))
		if res.Conflicts != 1 {
			if ours[i] == theirs[j] && i == j {
				continue // the same edit: no conflict to propose for
			}
			t.Fatalf("case %d: %d conflicts", n, res.Conflicts)
		}
		p, err := ProposeWords(res.Chunks[res.ConflictIndex(0)])
		if i == j {
			var r *WordRefusal
			if !errors.As(err, &r) || !strings.Contains(r.Reason, strconv.Quote(words[i])) {
				t.Fatalf("case %d: both changed word %d (%q): %v, %v", n, i, words[i], p, err)
			}
			refused++
			continue
		}
		if err != nil {
			t.Fatalf("case %d: words %d and %d: %v", n, i, j, err)
		}
		if string(p.Text) != string(line(want)) {
			t.Fatalf("case %d: proposal\n%s\nwant\n%s", n, p.Text, line(want))
		}
		proposed++
	}
	t.Logf("%d proposed, %d refused", proposed, refused)
	if proposed < 400 || refused < 25 {
		t.Errorf("proposed %d, refused %d: the generator does not cover both", proposed, refused)
	}
}
