package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"
)

// MergeSizes are the line counts tandem bench merge measures.
var MergeSizes = []int{1_000, 10_000, 100_000}

// MergeResult compares tandem merge-file with git merge-file on one generated input.
type MergeResult struct {
	Lines      int           `json:"lines"`
	Tandem     time.Duration `json:"tandem_ns"` // best of the runs, whole process
	Git        time.Duration `json:"git_ns"`    // 0 when git is not on PATH
	Ratio      float64       `json:"ratio"`     // Tandem / Git; below 1 means tandem is faster
	TandemExit int           `json:"tandem_exit"`
	GitExit    int           `json:"git_exit"`
	Agree      bool          `json:"agree"` // same bytes, or both conflicted
}

// GenerateMerge returns base, ours and theirs texts of about n lines: ours and theirs each
// edit, insert and delete lines at scattered places, mostly apart from each other so that
// most merges are clean, as real concurrent edits are.
func GenerateMerge(n int, seed uint64) (base, ours, theirs []byte) {
	rng := rand.New(rand.NewPCG(seed, 0x7a4d3))
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d: %s", i, words[rng.IntN(len(words))]+" "+words[rng.IntN(len(words))])
	}
	edit := func(side string, offset int) []byte {
		var b bytes.Buffer
		for i, l := range lines {
			// Each side touches about one line in 50, at positions that rarely meet.
			switch {
			case (i+offset)%50 == 0:
				fmt.Fprintf(&b, "%s (edited by %s)\n", l, side)
			case (i+offset)%97 == 0:
				fmt.Fprintf(&b, "%s\ninserted by %s after %d\n", l, side, i)
			case (i+offset)%113 == 0:
				// deleted
			default:
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
		return b.Bytes()
	}
	var bb bytes.Buffer
	for _, l := range lines {
		bb.WriteString(l)
		bb.WriteByte('\n')
	}
	return bb.Bytes(), edit("ours", 0), edit("theirs", 25)
}

var words = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
	"juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"}

// Merge runs `tandem merge-file -p` (the binary exe) and, when git is on PATH, `git
// merge-file -p` on the same generated inputs, runs times each, alternating, and keeps the
// best time of each.
func Merge(ctx context.Context, exe string, sizes []int, runs int) ([]MergeResult, error) {
	dir, err := os.MkdirTemp("", "tandem-bench-merge-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	git, _ := exec.LookPath("git")
	var out []MergeResult
	for _, n := range sizes {
		base, ours, theirs := GenerateMerge(n, uint64(n))
		paths := make([]string, 3)
		for i, data := range [][]byte{ours, base, theirs} {
			paths[i] = filepath.Join(dir, fmt.Sprintf("%d-%d", n, i))
			if err := os.WriteFile(paths[i], data, 0o600); err != nil {
				return nil, err
			}
		}
		r := MergeResult{Lines: n}
		var tOut, gOut []byte
		for range runs {
			d, code, o, err := timeRun(ctx, exe, append([]string{"merge-file", "-p"}, paths...))
			if err != nil {
				return nil, err
			}
			r.Tandem, r.TandemExit, tOut = minDur(r.Tandem, d), code, o
			if git != "" {
				d, code, o, err := timeRun(ctx, git, append([]string{"merge-file", "-p"}, paths...))
				if err != nil {
					return nil, err
				}
				r.Git, r.GitExit, gOut = minDur(r.Git, d), code, o
			}
		}
		if r.Git > 0 {
			r.Ratio = float64(r.Tandem) / float64(r.Git)
			r.Agree = bytes.Equal(tOut, gOut) || (r.TandemExit > 0 && r.GitExit > 0)
		}
		out = append(out, r)
	}
	return out, nil
}

func minDur(a, b time.Duration) time.Duration {
	if a == 0 || b < a {
		return b
	}
	return a
}

// timeRun runs a command to completion and returns its wall time, exit code and stdout.
func timeRun(ctx context.Context, name string, args []string) (time.Duration, int, []byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 && ee.ExitCode() < 128 {
		return d, ee.ExitCode(), stdout.Bytes(), nil
	}
	if err != nil {
		return 0, 0, nil, fmt.Errorf("run %s: %w", name, err)
	}
	return d, 0, stdout.Bytes(), nil
}

// WriteMerge prints merge results as a table.
func WriteMerge(w io.Writer, results []MergeResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "lines\ttandem\tgit\ttandem/git\tconflicts (tandem, git)\tsame result\t")
	for _, r := range results {
		git, ratio, agree := "-", "-", "-"
		if r.Git > 0 {
			git, ratio, agree = round(r.Git), fmt.Sprintf("%.2f", r.Ratio), fmt.Sprint(r.Agree)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d, %d\t%s\t\n", r.Lines, round(r.Tandem), git, ratio, r.TandemExit, r.GitExit, agree)
	}
	if n := len(results); n >= 2 && results[n-2].Tandem > 0 {
		a, b := results[n-2], results[n-1]
		fmt.Fprintf(tw, "\ngrowth %d→%d lines: %.1fx time for %.0fx lines\t\t\t\t\t\t\n", a.Lines, b.Lines,
			float64(b.Tandem)/float64(a.Tandem), float64(b.Lines)/float64(a.Lines))
	}
	return tw.Flush()
}
