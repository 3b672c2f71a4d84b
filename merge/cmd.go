package merge

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Exit statuses of FileMain, as git merge-file uses them.
const (
	// ExitError is returned when a file cannot be read or written, or is binary.
	ExitError = 255
	// ExitUsage is returned for bad command-line usage.
	ExitUsage = 129
	// maxExitConflicts caps the conflict count in the exit status.
	maxExitConflicts = 127
)

const fileUsage = `usage: tandem merge-file [<options>] [-L <name1> [-L <orig> [-L <name2>]]] <current> <base> <other>

    -p, --stdout          send results to standard output
    --diff3               use a diff3 based merge
    --ours                for conflicts, use our version
    --theirs              for conflicts, use their version
    --union               for conflicts, use a union version
    --marker-size <n>     for conflicts, use this marker size
    -q, --quiet           do not warn about conflicts
    -L <name>             set labels for current/base/other
`

// fileArgs is the parsed command line of merge-file.
type fileArgs struct {
	stdout bool
	quiet  bool
	style  Style
	favor  Favor
	marker int
	labels []string
	files  []string
}

// usageError is a command-line mistake; FileMain prints it with the usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func parseFileArgs(args []string) (*fileArgs, error) {
	a := &fileArgs{}
	bad := func(format string, v ...any) error { return &usageError{fmt.Sprintf(format, v...)} }
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			a.files = append(a.files, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			a.files = append(a.files, arg)
			continue
		}
		switch {
		case arg == "-p" || arg == "--stdout":
			a.stdout = true
		case arg == "-q" || arg == "--quiet":
			a.quiet = true
		case arg == "--diff3":
			a.style = StyleDiff3
		case arg == "--no-diff3":
			a.style = StyleMerge
		case arg == "--ours":
			a.favor = FavorOurs
		case arg == "--theirs":
			a.favor = FavorTheirs
		case arg == "--union":
			a.favor = FavorUnion
		case arg == "-L" || arg == "--marker-size":
			if i+1 >= len(args) {
				return nil, bad("option `%s' requires a value", strings.TrimLeft(arg, "-"))
			}
			i++
			if err := a.setValue(arg, args[i]); err != nil {
				return nil, err
			}
		case strings.HasPrefix(arg, "-L"):
			if err := a.setValue("-L", arg[2:]); err != nil {
				return nil, err
			}
		case strings.HasPrefix(arg, "--marker-size="):
			if err := a.setValue("--marker-size", strings.TrimPrefix(arg, "--marker-size=")); err != nil {
				return nil, err
			}
		default:
			return nil, bad("unknown option `%s'", strings.TrimLeft(arg, "-"))
		}
	}
	if len(a.files) != 3 {
		return nil, bad("want 3 files (current, base, other), got %d", len(a.files))
	}
	return a, nil
}

func (a *fileArgs) setValue(opt, v string) error {
	if opt == "-L" {
		if len(a.labels) == 3 {
			return &usageError{"too many labels on the command line"}
		}
		a.labels = append(a.labels, v)
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return &usageError{fmt.Sprintf("option `marker-size' expects a numerical value, got %q", v)}
	}
	a.marker = n
	return nil
}

// FileMain runs `tandem merge-file [-p] [--diff3] [-L label]... current base
// other` with git merge-file's arguments and conventions: the result replaces
// current (atomically, keeping its mode) unless -p sends it to stdout; labels
// default to the file names; the exit status is the number of conflicts
// (at most 127), ExitError (255) when a file cannot be read or written or is
// binary, and ExitUsage (129) for bad usage, which is what git uses.
func FileMain(args []string, stdout, stderr io.Writer) int {
	a, err := parseFileArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n%s", err, fileUsage)
		return ExitUsage
	}
	// A merge holds a few times its input in short-lived tables; in a fresh
	// process the default GC target (4 MB) would collect many times while the
	// heap grows to that size. This is a command entry point, so trading
	// memory for time here (and restoring the setting after) is fine.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var texts [3][]byte
	for i, name := range a.files {
		b, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "error: merge-file: read %v\n", err)
			return ExitError
		}
		// git refuses binary files (a NUL in the first 8000 bytes); do the
		// same, so tandem behaves like git as a merge driver.
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			fmt.Fprintf(stderr, "error: merge-file: cannot merge binary file %s\n", name)
			return ExitError
		}
		texts[i] = b
	}
	labels := append([]string(nil), a.labels...)
	for i := len(labels); i < 3; i++ {
		labels = append(labels, a.files[i])
	}
	var res Result
	if a.style == StyleDiff3 {
		res = TextDiff3(texts[1], texts[0], texts[2])
	} else {
		res = Text(texts[1], texts[0], texts[2])
	}
	out := res.Render(RenderOptions{
		Style: a.style, Favor: a.favor, MarkerSize: a.marker,
		OursLabel: labels[0], BaseLabel: labels[1], TheirsLabel: labels[2],
	})
	conflicts := res.Conflicts
	if a.favor != FavorNone {
		conflicts = 0 // every conflict was resolved by the favored side
	}
	if a.stdout {
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "error: merge-file: write result: %v\n", err)
			return ExitError
		}
	} else if err := writeFileAtomic(a.files[0], out); err != nil {
		fmt.Fprintf(stderr, "error: merge-file: %v\n", err)
		return ExitError
	}
	if conflicts > 0 && !a.quiet {
		fmt.Fprintf(stderr, "warning: merge-file: %d conflict(s) in %s\n", conflicts, a.files[0])
	}
	return min(conflicts, maxExitConflicts)
}

// writeFileAtomic replaces path with data through a temporary file in the
// same directory and a rename, so a crash never leaves a half-written file;
// the file keeps its permission bits.
func writeFileAtomic(path string, data []byte) (err error) {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	// Follow a symlink so the link keeps pointing at the merged file.
	if target, lerr := filepath.EvalSymlinks(path); lerr == nil {
		path = target
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".merge-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err = f.Chmod(info.Mode().Perm()); err != nil {
		return fmt.Errorf("chmod %s: %w", f.Name(), err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}
