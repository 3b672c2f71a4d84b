package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/merge"
)

// Exit statuses of merge-file, as git merge-file uses them.
const (
	// mergeExitError: a file cannot be read or written, is binary or is too large.
	mergeExitError = 255
	// mergeExitUsage: bad command-line usage.
	mergeExitUsage = 129
	// mergeMaxConflicts caps the conflict count in the exit status.
	mergeMaxConflicts = 127
)

// maxMergeInput bounds each of merge-file's three inputs. A merge holds about three times
// its inputs in memory (48 MB of each input took 440 MB); git refuses files over 1 GiB the
// same way, as binary. The limit is what is read, whatever the file's reported size:
// /dev/stdin or a pipe may never end.
const maxMergeInput = 64 << 20

const mergeFileUsage = `usage: tandem merge-file [<options>] [-L <name1> [-L <orig> [-L <name2>]]] <current> <base> <other>

    -p, --stdout          send results to standard output
    --diff3               use a diff3 based merge
    --zdiff3              use a zealous diff3 based merge
    --ours                for conflicts, use our version
    --theirs              for conflicts, use their version
    --union               for conflicts, use a union version
    --marker-size <n>     for conflicts, use this marker size
    -q, --quiet           do not warn about conflicts
    -L <name>             set labels for current/base/other
`

func newMergeFileCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "merge-file [-p] [--diff3|--zdiff3] [-L label]... CURRENT BASE OTHER",
		Short: "Three-way merge of text files, compatible with git merge-file",
		Long: `Merge-file merges the changes from BASE to OTHER into CURRENT, line by line, with the
same arguments, output and exit status as git merge-file: the result is written over
CURRENT in place (it keeps its owner and permissions; a file you may not write is an
error, exit 255, as with git) unless -p prints it; the exit status is the number of
conflicts (at most 127), 255 when a file cannot be read or written, is binary or is over
64 MiB. It needs no store, so it also serves as a git merge driver:

  git config merge.tandem.driver "tandem merge-file -L ours -L base -L theirs %A %O %B"
  echo "*.md merge=tandem" >> .gitattributes

Options: -p/--stdout, --diff3, --zdiff3 (diff3 with the lines both sides agree on at
the edges of a conflict moved out of it), --ours, --theirs, --union, --marker-size N,
-q/--quiet (accepted; as with git, conflicts are never reported on stderr, only
counted in the exit status), -L NAME (up to three labels for current, base and other).`,
		Example: `  tandem merge-file -p mine.txt base.txt theirs.txt
  tandem merge-file --diff3 -L mine -L base -L theirs mine.txt base.txt theirs.txt`,
		// git merge-file's own flags pass through untouched, and its exit status is kept.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Cobra hands over global flags given before the command too; git's arguments
			// are only those after it.
			if i := slices.Index(a.args, cmd.Name()); i >= 0 {
				args = a.args[i+1:]
			}
			for _, arg := range args {
				if arg == "-h" || arg == "--help" {
					return cmd.Help()
				}
			}
			if code := mergeFile(args, a.stdout, a.stderr); code != 0 {
				return &exitCodeError{code: code}
			}
			return nil
		},
	}
}

// mergeStyle is how merge-file merges and writes conflicts.
type mergeStyle int

const (
	styleMerge  mergeStyle = iota // git's default: conflicts shrunk to the lines that differ
	styleDiff3                    // --diff3: the whole base region of each conflict
	styleZDiff3                   // --zdiff3: diff3 with the common edges moved out
)

// mergeFileArgs is the parsed command line of merge-file.
type mergeFileArgs struct {
	stdout bool
	style  mergeStyle
	favor  merge.Favor
	marker int
	labels []string
	files  []string
}

// mergeUsageError is a command-line mistake; mergeFile prints it with the usage.
type mergeUsageError struct{ msg string }

func (e *mergeUsageError) Error() string { return e.msg }

func parseMergeFileArgs(args []string) (*mergeFileArgs, error) {
	a := &mergeFileArgs{}
	bad := func(format string, v ...any) error { return &mergeUsageError{fmt.Sprintf(format, v...)} }
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
			// Accepted as git accepts it. git merge-file (2.39) prints nothing about
			// conflicts with or without it: the exit status counts them.
		case arg == "--diff3":
			a.style = styleDiff3
		case arg == "--zdiff3":
			a.style = styleZDiff3
		case arg == "--no-diff3":
			a.style = styleMerge
		case arg == "--ours":
			a.favor = merge.FavorOurs
		case arg == "--theirs":
			a.favor = merge.FavorTheirs
		case arg == "--union":
			a.favor = merge.FavorUnion
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

func (a *mergeFileArgs) setValue(opt, v string) error {
	if opt == "-L" {
		if len(a.labels) == 3 {
			return &mergeUsageError{"too many labels on the command line"}
		}
		a.labels = append(a.labels, v)
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return &mergeUsageError{fmt.Sprintf("option `marker-size' expects a numerical value, got %q", v)}
	}
	a.marker = n
	return nil
}

// mergeFile runs `tandem merge-file` with git merge-file's arguments and conventions: the
// result is written over current in place unless -p sends it to stdout; labels default to
// the file names; the exit status is the number of conflicts (at most 127), mergeExitError
// (255) when a file cannot be read or written, is binary or too large, and mergeExitUsage
// (129) for bad usage, which is what git uses. Its messages name files through safe.Line.
func mergeFile(args []string, stdout, stderr io.Writer) int {
	a, err := parseMergeFileArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n%s", safe.Line(err.Error()), mergeFileUsage)
		return mergeExitUsage
	}
	var texts [3][]byte
	for i, name := range a.files {
		b, err := readLimited(name, maxMergeInput)
		if err != nil {
			fmt.Fprintf(stderr, "error: merge-file: %s\n", safe.Line(err.Error()))
			return mergeExitError
		}
		// git refuses binary files (a NUL in the first 8000 bytes); do the
		// same, so tandem behaves like git as a merge driver.
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			fmt.Fprintf(stderr, "error: merge-file: cannot merge binary file %s\n", safe.Line(name))
			return mergeExitError
		}
		texts[i] = b
	}
	// A merge holds a few times its input in short-lived tables; in a fresh
	// process the default GC target (4 MB) would collect many times while the
	// heap grows to that size. This is a command entry point, so trading
	// memory for time here (and restoring the setting after) is fine; not
	// before the inputs are read, whose growing buffers are garbage at once.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	labels := append([]string(nil), a.labels...)
	for i := len(labels); i < 3; i++ {
		labels = append(labels, a.files[i])
	}
	var res merge.Result
	render := merge.StyleMerge
	switch a.style {
	case styleDiff3:
		res, render = merge.TextDiff3(texts[1], texts[0], texts[2]), merge.StyleDiff3
	case styleZDiff3:
		res, render = merge.TextZDiff3(texts[1], texts[0], texts[2]), merge.StyleDiff3
	default:
		res = merge.Text(texts[1], texts[0], texts[2])
	}
	out := res.Render(merge.RenderOptions{
		Style: render, Favor: a.favor, MarkerSize: a.marker,
		OursLabel: labels[0], BaseLabel: labels[1], TheirsLabel: labels[2],
	})
	conflicts := res.Conflicts
	if a.favor != merge.FavorNone {
		conflicts = 0 // every conflict was resolved by the favored side
	}
	if a.stdout {
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "error: merge-file: write result: %s\n", safe.Line(err.Error()))
			return mergeExitError
		}
	} else if err := writeInPlace(a.files[0], out); err != nil {
		fmt.Fprintf(stderr, "error: %s\n", safe.Line(err.Error()))
		return mergeExitError
	}
	// Like git merge-file, nothing on stderr about conflicts: the exit status is their
	// number, and a merge driver or script reads that.
	return min(conflicts, mergeMaxConflicts)
}

// writeInPlace writes data over the file at path as git merge-file does: the file is opened
// for writing and truncated, not replaced by a rename, so it keeps its inode, owner,
// permissions and hard links, a symlink keeps pointing at it, and a user who may not write
// the file cannot replace it even when they may write its directory (exit 255 with git's
// "Could not open … for writing: Permission denied"). Like git's, the write is not atomic;
// the merge is complete in memory before the file is opened.
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return &mergeWriteError{"open " + path + " for writing", err}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return &mergeWriteError{"write " + path, err}
	}
	if err := f.Close(); err != nil {
		return &mergeWriteError{"write " + path, err}
	}
	return nil
}

// mergeWriteError is a failed write of merge-file's result, worded as git words it: "Could
// not open cur for writing: Permission denied".
type mergeWriteError struct {
	op  string
	err error
}

func (e *mergeWriteError) Error() string {
	msg := e.err.Error()
	var errno syscall.Errno
	if errors.As(e.err, &errno) {
		msg = errno.Error() // without the *PathError's repetition of the operation and path
	}
	return "Could not " + e.op + ": " + upperFirst(msg)
}

func (e *mergeWriteError) Unwrap() error { return e.err }

// upperFirst returns s with its first letter upper case, as the C library's error texts are.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
