package merge

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// maxExitConflicts is git merge-file's cap on the conflict count in its exit status (the
// command itself lives in package main).
const maxExitConflicts = 127

// TestTextZDiff3 checks zealous diff3 on a conflict whose two sides begin and end alike:
// those lines leave the conflict, its base part stays whole, and the result is git's.
func TestTextZDiff3(t *testing.T) {
	base := []byte("a\nb\nc\nd\ne\n")
	ours := []byte("a\nX\nb2\nY\ne\n")
	theirs := []byte("a\nX\nb3\nY\ne\n")
	res := TextZDiff3(base, ours, theirs)
	got := string(res.Render(RenderOptions{Style: StyleDiff3}))
	want := "a\nX\n<<<<<<< ours\nb2\n||||||| base\nb\nc\nd\n=======\nb3\n>>>>>>> theirs\nY\ne\n"
	if got != want || res.Conflicts != 1 {
		t.Errorf("TextZDiff3: %d conflicts\n%s\nwant 1\n%s", res.Conflicts, got, want)
	}
	// diff3 keeps the common X and Y inside the conflict; that is the difference.
	if d3 := string(TextDiff3(base, ours, theirs).Render(RenderOptions{Style: StyleDiff3})); d3 == got {
		t.Errorf("TextDiff3 renders like TextZDiff3:\n%s", d3)
	}
	mustGit(t)
	wantGit, n := gitMergeFile(t, t.TempDir(), base, ours, theirs, "--zdiff3")
	if string(wantGit) != got || n != res.Conflicts {
		t.Errorf("git merge-file --zdiff3: %d conflicts\n%s\ntandem: %d\n%s", n, wantGit, res.Conflicts, got)
	}
}

// TestTextZDiff3_MatchesGit compares --zdiff3 with git on generated documents edited on
// both sides. zdiff3 only trims the conflicts of diff3, so wherever tandem's --diff3 output
// is git's (the two-way diffs agree), its --zdiff3 output must be git's too, conflicts
// included, byte for byte.
func TestTextZDiff3_MatchesGit(t *testing.T) {
	mustGit(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 35))
	var compared, trimmed int
	for iter := range 80 {
		base := genProse(rng, 100+rng.IntN(400))
		ours := editProse(rng, base, 1+rng.IntN(8))
		theirs := editProse(rng, base, 1+rng.IntN(8))
		// Both sides add the same lines around different ones at the end: what zdiff3 trims.
		if iter%2 == 0 {
			common := genProse(rng, 2)
			ours = append(slices.Clone(ours), common[0], []byte("ours\n"), common[1])
			theirs = append(slices.Clone(theirs), common[0], []byte("theirs\n"), common[1])
		}
		b, o, th := joinLines(base), joinLines(ours), joinLines(theirs)
		d3 := TextDiff3(b, o, th).Render(RenderOptions{Style: StyleDiff3})
		if gitD3, _ := gitMergeFile(t, dir, b, o, th, "--diff3"); !bytes.Equal(d3, gitD3) {
			continue // the two-way diffs differ; git_test.go judges those
		}
		res := TextZDiff3(b, o, th)
		got := res.Render(RenderOptions{Style: StyleDiff3})
		want, wantN := gitMergeFile(t, dir, b, o, th, "--zdiff3")
		if !bytes.Equal(got, want) || min(res.Conflicts, maxExitConflicts) != wantN {
			t.Errorf("iter %d: tandem %d conflicts, git %d\ngot:\n%s\nwant:\n%s", iter, res.Conflicts, wantN, got, want)
			continue
		}
		compared++
		if !bytes.Equal(got, d3) {
			trimmed++
		}
	}
	t.Logf("%d merges identical to git --zdiff3, %d of them trimmed conflicts", compared, trimmed)
	if compared < 60 || trimmed < 30 {
		t.Errorf("only %d merges compared, %d with trimmed conflicts: the corpus does not exercise zdiff3", compared, trimmed)
	}
}
