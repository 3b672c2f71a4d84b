package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// TestCLI_MergeFile checks that merge-file keeps git merge-file's conventions: the merged
// text on stdout with -p, exit 0 for a clean merge and the number of conflicts otherwise,
// global flags before the command ignored.
func TestCLI_MergeFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base", "one\ntwo\nthree\nfour\nfive\n")
	mine := write("mine", "ONE\ntwo\nthree\nfour\nfive\n")
	clean := write("clean", "one\ntwo\nthree\nfour\nFIVE\n")
	clash := write("clash", "uno\ntwo\nthree\nfour\nfive\n")

	r := tandem(t, "", "--user", "x", "merge-file", "-p", mine, base, clean)
	if r.code != 0 || r.stdout != "ONE\ntwo\nthree\nfour\nFIVE\n" {
		t.Errorf("clean merge: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tandem(t, "", "merge-file", "-p", "-L", "mine", "-L", "base", "-L", "theirs", mine, base, clash)
	if r.code != 1 || !strings.Contains(r.stdout, "<<<<<<< mine\nONE\n=======\nuno\n>>>>>>> theirs\n") {
		t.Errorf("one conflict: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "tandem: ") {
		t.Errorf("a conflict count is not an error message: %q", r.stderr)
	}
}

// TestHardening_MergeFileWritesLikeGit runs tandem merge-file and git merge-file side by
// side as a user who may write the directory but not the file: git refuses with exit 255
// "Permission denied" and leaves the file alone, and tandem must do the same. On a file the
// user may write, both write in place: same inode, same owner. Run as root the commands run
// as nobody (root may write any file).
func TestHardening_MergeFileWritesLikeGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	// A directory everybody may write, outside the test's private temp dir, with a copy of
	// the binary everybody may run.
	dir, err := os.MkdirTemp("", "tandem-merge-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "tandem")
	bin, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	asUser := func(argv []string) (int, string) {
		name := argv[0]
		cmd := exec.Command(name, argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%s: %v", name, err)
		}
		return cmd.ProcessState.ExitCode(), errb.String()
	}
	write := func(name, text string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		os.Remove(p)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // not masked by the umask
			t.Fatal(err)
		}
		return p
	}
	inode := func(p string) (uint64, uint32) {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		return st.Ino, st.Uid
	}
	write("base", "a\nb\nc\n", 0o644)
	write("other", "a\nb\nC\n", 0o644)
	const cur = "A\nb\nc\n"

	for _, tool := range []struct {
		name string
		argv func(file string) []string
	}{
		{"git", func(f string) []string { return []string{"git", "merge-file", f, "base", "other"} }},
		{"tandem", func(f string) []string { return []string{exe, "merge-file", f, "base", "other"} }},
	} {
		t.Run(tool.name+" read-only file", func(t *testing.T) {
			p := write("cur-"+tool.name, cur, 0o444)
			ino, uid := inode(p)
			code, stderr := asUser(tool.argv(filepath.Base(p)))
			if code != mergeExitError || !strings.Contains(stderr, "Permission denied") {
				t.Errorf("exit %d %q, want %d and Permission denied", code, stderr, mergeExitError)
			}
			if got, _ := os.ReadFile(p); string(got) != cur {
				t.Errorf("the read-only file was changed: %q", got)
			}
			if gotIno, gotUID := inode(p); gotIno != ino || gotUID != uid {
				t.Errorf("the read-only file was replaced: inode %d→%d, owner %d→%d", ino, gotIno, uid, gotUID)
			}
		})
		t.Run(tool.name+" writable file", func(t *testing.T) {
			p := write("cur-"+tool.name, cur, 0o666)
			ino, uid := inode(p)
			if code, stderr := asUser(tool.argv(filepath.Base(p))); code != 0 {
				t.Fatalf("exit %d %q, want a clean merge", code, stderr)
			}
			if got, _ := os.ReadFile(p); string(got) != "A\nb\nC\n" {
				t.Errorf("merged file %q", got)
			}
			if gotIno, gotUID := inode(p); gotIno != ino || gotUID != uid {
				t.Errorf("the file was replaced, not written: inode %d→%d, owner %d→%d", ino, gotIno, uid, gotUID)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o666 {
				t.Errorf("mode %v, want 0666", fi.Mode().Perm())
			}
		})
	}
}
