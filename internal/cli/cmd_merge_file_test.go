package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func mustWriteFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// TestMergeFile runs merge-file in-process: labels, diff3, writing in place with the file's
// mode, favoring a side, usage and read errors, and the same output and exit status as git.
func TestMergeFile(t *testing.T) {
	dir := t.TempDir()
	cur, base, other := filepath.Join(dir, "cur"), filepath.Join(dir, "base"), filepath.Join(dir, "other")
	setup := func() {
		mustWriteFile(t, base, "a\nb\nc\nd\ne\nf\ng\n", 0o644)
		mustWriteFile(t, cur, "a\nB\nc\nd\ne\nf\nG\n", 0o640)
		mustWriteFile(t, other, "a\nb2\nc\nd\ne\nf\ng\n", 0o644)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := mergeFile(args, &out, &errb)
		return code, out.String(), errb.String()
	}

	t.Run("StdoutConflict", func(t *testing.T) {
		setup()
		code, out, _ := run("-p", "-L", "mine", "-L", "orig", "-L", "yours", "--diff3", cur, base, other)
		want := "a\n<<<<<<< mine\nB\n||||||| orig\nb\n=======\nb2\n>>>>>>> yours\nc\nd\ne\nf\nG\n"
		if code != 1 || out != want {
			t.Errorf("code %d out %q, want 1 %q", code, out, want)
		}
	})
	t.Run("InPlaceKeepsMode", func(t *testing.T) {
		setup()
		mustWriteFile(t, other, "a\nb\nc\nd\nE\nf\ng\n", 0o644)
		code, out, _ := run(cur, base, other)
		got, _ := os.ReadFile(cur)
		if code != 0 || out != "" || string(got) != "a\nB\nc\nd\nE\nf\nG\n" {
			t.Errorf("code %d out %q file %q", code, out, got)
		}
		if fi, _ := os.Stat(cur); fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", fi.Mode().Perm())
		}
	})
	t.Run("Favor", func(t *testing.T) {
		setup()
		code, out, _ := run("-p", "--theirs", cur, base, other)
		if code != 0 || out != "a\nb2\nc\nd\ne\nf\nG\n" {
			t.Errorf("code %d out %q", code, out)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		setup()
		for _, tt := range []struct {
			args []string
			code int
		}{
			{[]string{cur, base}, mergeExitUsage},
			{[]string{"--bogus", cur, base, other}, mergeExitUsage},
			{[]string{"-L", "a", "-L", "b", "-L", "c", "-L", "d", cur, base, other}, mergeExitUsage},
			{[]string{"-p", filepath.Join(dir, "missing"), base, other}, mergeExitError},
		} {
			if code, _, stderr := run(tt.args...); code != tt.code || stderr == "" {
				t.Errorf("%v: code %d (stderr %q), want %d with a message", tt.args, code, stderr, tt.code)
			}
		}
		mustWriteFile(t, cur, "a\x00b\n", 0o644)
		if code, _, _ := run("-p", cur, base, other); code != mergeExitError {
			t.Errorf("binary: code %d, want %d", code, mergeExitError)
		}
	})
	t.Run("SameAsGit", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git not installed")
		}
		setup()
		for _, args := range [][]string{{"-p"}, {"-p", "--diff3"}, {"-p", "--zdiff3"}, {"-p", "--union"}, {"-p", "--marker-size=3", "-L", "x"}, {"-p", "-q"}} {
			full := append(append([]string(nil), args...), cur, base, other)
			code, out, errOut := run(full...)
			cmd := exec.Command("git", append([]string{"merge-file"}, full...)...)
			var gitErr bytes.Buffer
			cmd.Stderr = &gitErr
			want, _ := cmd.Output()
			if code != cmd.ProcessState.ExitCode() || out != string(want) || errOut != gitErr.String() {
				t.Errorf("%v: tandem %d %q stderr %q, git %d %q stderr %q", args, code, out, errOut, cmd.ProcessState.ExitCode(), want, gitErr.String())
			}
		}
		// In place, on copies of the same conflicting files: the same file, status and stderr.
		mine, theirs := filepath.Join(dir, "mine"), filepath.Join(dir, "git")
		mustWriteFile(t, mine, "a\nB\nc\nd\ne\nf\nG\n", 0o644)
		mustWriteFile(t, theirs, "a\nB\nc\nd\ne\nf\nG\n", 0o644)
		code, _, errOut := run(mine, base, other)
		cmd := exec.Command("git", "merge-file", theirs, base, other)
		var gitErr bytes.Buffer
		cmd.Stderr = &gitErr
		_ = cmd.Run()
		got, _ := os.ReadFile(mine)
		want, _ := os.ReadFile(theirs)
		if code != cmd.ProcessState.ExitCode() || errOut != gitErr.String() || string(got) != strings.ReplaceAll(string(want), theirs, mine) {
			t.Errorf("in place: tandem %d stderr %q file %q; git %d stderr %q file %q", code, errOut, got, cmd.ProcessState.ExitCode(), gitErr.String(), want)
		}
	})
}
