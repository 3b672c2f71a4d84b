package merge

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gitMergeFile runs `git merge-file -p` on the three texts and returns its
// output and conflict count.
func gitMergeFile(t testing.TB, dir string, base, ours, theirs []byte, extra ...string) ([]byte, int) {
	t.Helper()
	paths := map[string][]byte{"ours": ours, "base": base, "theirs": theirs}
	for name, b := range paths {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"merge-file", "-p"}, extra...)
	args = append(args, "ours", "base", "theirs")
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out, 0
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128:
		return out, ee.ExitCode()
	default:
		t.Fatalf("git merge-file: %v: %s", err, stderr.Bytes())
		return nil, 0
	}
}

func mustGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}

// genText makes a random text; vocab small means many repeated lines, which
// is where diff alignment gets ambiguous.
func genText(rng *rand.Rand, n, vocab int) [][]byte {
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = genLine(rng, vocab)
	}
	return lines
}

func genLine(rng *rand.Rand, vocab int) []byte {
	switch rng.IntN(12) {
	case 0:
		return []byte("\n")
	case 1:
		return []byte("}\n")
	}
	return fmt.Appendf(nil, "line %d\n", rng.IntN(vocab))
}

// genEdit applies a few random edits to lines.
func genEdit(rng *rand.Rand, lines [][]byte, edits, vocab int) [][]byte {
	out := append([][]byte(nil), lines...)
	for range edits {
		p := 0
		if len(out) > 0 {
			p = rng.IntN(len(out) + 1)
		}
		switch rng.IntN(4) {
		case 0: // insert
			ins := genText(rng, 1+rng.IntN(3), vocab)
			out = append(out[:p], append(ins, out[p:]...)...)
		case 1: // delete
			if p < len(out) {
				n := min(1+rng.IntN(3), len(out)-p)
				out = append(out[:p], out[p+n:]...)
			}
		case 2: // replace
			if p < len(out) {
				out[p] = genLine(rng, vocab)
			}
		case 3: // duplicate a line elsewhere
			if p < len(out) && len(out) > 0 {
				out = append(out[:p], append([][]byte{out[rng.IntN(len(out))]}, out[p:]...)...)
			}
		}
	}
	return out
}

func mangle(rng *rand.Rand, b []byte) []byte {
	// Sometimes drop the final newline or convert to CRLF.
	switch rng.IntN(6) {
	case 0:
		if len(b) > 0 && b[len(b)-1] == '\n' {
			b = b[:len(b)-1]
		}
	case 1:
		b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
	}
	return b
}

// TestText_MatchesGit compares with `git merge-file -p` (and --diff3) on
// seeded random inputs: small files with few edits, where clean merges are
// common, and large ones with many edits, where xdiff's cost heuristics kick
// in. Where git merges cleanly the output must be identical; where git
// reports conflicts, tandem must report at least one.
func TestText_MatchesGit(t *testing.T) {
	mustGit(t)
	t.Run("small", func(t *testing.T) {
		iters := 1500
		if testing.Short() {
			iters = 200
		}
		compareWithGit(t, iters, 40, 3)
	})
	t.Run("large", func(t *testing.T) {
		if testing.Short() {
			t.Skip("short")
		}
		compareWithGit(t, 60, 3000, 400)
	})
	t.Run("real", compareRealWithGit)
}

// compareRealWithGit merges this package's own source files (real code:
// braces, blank lines, repeated idioms) edited the way people edit: moving,
// duplicating, deleting and rewriting lines taken from other files.
func compareRealWithGit(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	var files [][][]byte
	var pool [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ls := splitLines(b)
		files = append(files, ls)
		pool = append(pool, ls...)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	edit := func(ls [][]byte) [][]byte {
		out := append([][]byte(nil), ls...)
		for range 1 + rng.IntN(6) {
			p := rng.IntN(len(out) + 1)
			switch rng.IntN(3) {
			case 0:
				n := 1 + rng.IntN(4)
				ins := make([][]byte, n)
				for i := range ins {
					ins[i] = pool[rng.IntN(len(pool))]
				}
				out = append(out[:p], append(ins, out[p:]...)...)
			case 1:
				if p < len(out) {
					out = append(out[:p], out[min(len(out), p+1+rng.IntN(5)):]...)
				}
			case 2:
				if p < len(out) {
					out[p] = append(bytes.TrimSuffix(bytes.Clone(out[p]), []byte("\n")), " // edited\n"...)
				}
			}
		}
		return out
	}
	var clean, conflicted int
	for iter := range 200 {
		base := files[iter%len(files)]
		b, o, th := joinLines(base), joinLines(edit(base)), joinLines(edit(base))
		want, wantN := gitMergeFile(t, dir, b, o, th)
		res := Text(b, o, th)
		got := res.Render(RenderOptions{})
		switch {
		case wantN == 0:
			clean++
			if res.Conflicts != 0 || !bytes.Equal(got, want) {
				t.Errorf("iter %d: git merged cleanly, tandem differs (%d conflicts)", iter, res.Conflicts)
			}
		case res.Conflicts == 0:
			t.Errorf("iter %d: git reports %d conflicts, tandem none", iter, wantN)
		default:
			conflicted++
		}
	}
	t.Logf("clean %d, conflicted %d", clean, conflicted)
}

func compareWithGit(t *testing.T, iters, maxLines, maxEdits int) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(maxLines), 2))
	var clean, conflicted, mismatched, identical int
	for iter := range iters {
		vocab := []int{4, 20, 1000}[iter%3]
		n := rng.IntN(maxLines)
		base := genText(rng, n, vocab)
		ours := genEdit(rng, base, 1+rng.IntN(1+rng.IntN(maxEdits)), vocab)
		theirs := genEdit(rng, base, 1+rng.IntN(1+rng.IntN(maxEdits)), vocab)
		crlf := rng.IntN(5) == 0
		enc := func(ls [][]byte) []byte {
			b := joinLines(ls)
			if crlf {
				b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
			}
			return mangle(rng, b)
		}
		b, o, th := enc(base), enc(ours), enc(theirs)
		for _, diff3 := range []bool{false, true} {
			var extra []string
			res := Text(b, o, th)
			opts := RenderOptions{}
			if diff3 {
				extra = []string{"--diff3"}
				res = TextDiff3(b, o, th)
				opts.Style = StyleDiff3
			}
			want, wantN := gitMergeFile(t, dir, b, o, th, extra...)
			got := res.Render(opts)
			if wantN == 0 {
				clean++
				if res.Conflicts != 0 || !bytes.Equal(got, want) {
					mismatched++
					if mismatched <= 3 {
						t.Errorf("iter %d diff3=%v: git merged cleanly, tandem conflicts=%d\nbase:\n%q\nours:\n%q\ntheirs:\n%q\ngot:\n%s\nwant:\n%s",
							iter, diff3, res.Conflicts, b, o, th, got, want)
					}
				}
				continue
			}
			conflicted++
			if bytes.Equal(got, want) && min(res.Conflicts, maxExitConflicts) == wantN {
				identical++
			}
			if res.Conflicts == 0 {
				t.Errorf("iter %d diff3=%v: git reports %d conflicts, tandem none", iter, diff3, wantN)
			}
		}
	}
	t.Logf("clean %d (mismatched %d), conflicted %d (identical output and count: %d)",
		clean, mismatched, conflicted, identical)
}
