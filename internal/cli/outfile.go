package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tandem-editor/tandem/internal/safe"
)

// outFile is where a command writes a file the user named with -o. A regular file (new or
// old) is written beside itself under a temporary name and renamed over at Commit, so a
// failed or killed command never leaves half a file under the user's name; a link is
// followed and its target written that way; a FIFO, a device or a socket is written
// directly, as a shell's redirection would (renaming over it would replace the device with
// a file, and a reader on the FIFO would get nothing).
type outFile struct {
	*os.File
	path   string // the name the user gave, for messages
	target string // the file the name leads to, links followed
	temp   bool   // File is a temporary file beside target, renamed over it at Commit
	// inherited: File is a copy of a descriptor this process was given (-o /dev/stdout)
	// that leads to the regular file target, written where the descriptor points.
	inherited bool
	done      bool
}

// refuseDatabase refuses to replace an existing SQLite database (any tandem store, a
// working copy with edits not yet synced, another program's database): a command writing
// CSV or JSON over one was given the wrong name. The caller Aborts o after the refusal, so
// nothing is written. Commands that know more (the store they read, a working copy's
// source) say so first.
func (o *outFile) refuseDatabase() error {
	if !o.temp && !o.inherited || !isSQLiteFile(o.target) {
		return nil
	}
	return usagef("-o %s is an SQLite database (a tandem store or another program's): the export would replace it; nothing was written, name another file", safe.Line(o.path))
}

// createOutput opens path for writing (see outFile). A directory is refused.
func createOutput(path string) (*outFile, error) {
	if n, ok := descriptorOf(path); ok {
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			// /dev/stdout, /dev/fd/N: the descriptor this process was given, written
			// through a copy of it as a shell's >&N would. Opened again by name, a file
			// behind it would be replaced by the rename (losing what the shell appends
			// (>>) or writes around the export) and a socket could not be opened at all.
			f, err := dupDescriptor(n, path)
			if err != nil {
				return nil, outputError(path, err)
			}
			target, _ := followLinks(path)
			o := &outFile{File: f, path: path, target: target, inherited: fi.Mode().IsRegular()}
			// Refused here, before anything is written: there is no temporary file to
			// drop, and what a refused export had written would stay in the database.
			if err := o.refuseDatabase(); err != nil {
				f.Close()
				return nil, err
			}
			return o, nil
		}
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		// A device, a FIFO or a socket, reached by the kernel's own lookup: /dev/stdout
		// and /dev/fd/N are links to /proc/self/fd/N, whose text ("pipe:[…]") names no
		// file, so they are opened as the system resolves them.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, outputError(path, err)
		}
		return &outFile{File: f, path: path, target: path}, nil
	}
	target, err := followLinks(path)
	if err != nil {
		return nil, outputError(path, err)
	}
	fi, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fi = nil
	case err != nil:
		return nil, outputError(path, err)
	case fi.IsDir():
		return nil, fmt.Errorf("-o %s: is a directory; name a file", path)
	case !fi.Mode().IsRegular():
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, outputError(path, err)
		}
		return &outFile{File: f, path: path, target: target}, nil
	}
	// The mode a new file gets, as from a shell: 0666 less the umask, which the kernel
	// applies at creation (os.CreateTemp would make it 0600). An old file keeps its own.
	mode := fs.FileMode(0o666)
	if fi != nil {
		mode = fi.Mode().Perm()
	}
	f, err := createBeside(target, mode)
	if err != nil {
		return nil, outputError(path, err)
	}
	if fi != nil {
		if err := f.Chmod(mode); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, outputError(path, err)
		}
	}
	return &outFile{File: f, path: path, target: target, temp: true}, nil
}

// sqliteHeader is how every SQLite database file begins.
const sqliteHeader = "SQLite format 3\x00"

// isSQLiteFile reports whether the regular file at path begins as an SQLite database does.
func isSQLiteFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(sqliteHeader))
	n, _ := io.ReadFull(f, b)
	return n == len(b) && string(b) == sqliteHeader
}

// refuseStoreFile refuses an -o path that names the SQLite store db (the file --db names,
// or its -wal, -shm or -journal): writing there would replace the store, its history with
// it, by the export it read. The path is compared after following links: as a name (its
// directory's links resolved too, for a -wal that does not exist yet) and as a file
// (os.SameFile: a hard link, or a second name for the store's directory). db "" (a
// PostgreSQL store) refuses nothing.
func refuseStoreFile(path, db string) error {
	return refuseFileOf(path, db, "the store it reads")
}

// refuseSourceFile refuses an -o path that names the SQLite store a working copy was cloned
// from (its source, as the copy keeps it): an export of the copy written there would
// replace the shared store the copy syncs with. A PostgreSQL source refuses nothing.
func refuseSourceFile(path, source string) error {
	if !isFileDSN(source) {
		return nil
	}
	return refuseFileOf(path, source, "the store this working copy was cloned from and syncs with")
}

// refuseFileOf is refuseStoreFile for the store db, named whose in the message.
func refuseFileOf(path, db, whose string) error {
	f, what := storeFileAt(path, db)
	if f == "" {
		return nil
	}
	return usagef("-o %s is %s (%s): the export would replace %s; nothing was written, name another file",
		safe.Line(path), what, safe.Line(f), whose)
}

// storeFileAt reports whether path names the SQLite store db or one of its -wal, -shm and
// -journal files, compared as refuseStoreFile says: it returns the store's file that path
// names and what it is ("the store's file", "the store's wal file", ...), or "" and "" when
// path names none of them (or db is "").
func storeFileAt(path, db string) (file, what string) {
	if db == "" {
		return "", ""
	}
	target, err := followLinks(path)
	if err != nil {
		return "", "" // the caller's own open of path reports it
	}
	out, outErr := os.Stat(target)
	name, real := canonicalName(target), canonicalName(db)
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		// SQLite keeps the -wal and -shm beside the file a linked --db leads to.
		for _, f := range []string{db + suffix, real + suffix} {
			same := name != "" && (name == canonicalName(f))
			if !same && outErr == nil {
				fi, err := os.Stat(f)
				same = err == nil && os.SameFile(out, fi)
			}
			if !same {
				continue
			}
			what := "the store's file"
			if suffix != "" {
				what = "the store's " + suffix[1:] + " file"
			}
			return f, what
		}
	}
	return "", ""
}

// canonicalName returns path made absolute with the links of its directory and of itself
// resolved, the file need not exist; "" when it cannot be worked out.
func canonicalName(path string) string {
	target, err := followLinks(path)
	if err != nil {
		return ""
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(target))
	if err != nil {
		return ""
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return ""
	}
	return filepath.Join(dir, filepath.Base(target))
}

// descriptorOf reports whether path names one of this process's open descriptors, itself
// or through links (/dev/stdout is a link to /proc/self/fd/1): /dev/fd/N, /proc/self/fd/N,
// /proc/thread-self/fd/N or /proc/PID/fd/N with this process's PID. It returns N.
func descriptorOf(path string) (int, bool) {
	for range 40 { // the kernel's own limit on a chain of links
		p := filepath.Clean(path)
		for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"} {
			if rest, ok := strings.CutPrefix(p, dir); ok {
				if n, err := strconv.Atoi(rest); err == nil && n >= 0 && strconv.Itoa(n) == rest {
					return n, true
				}
			}
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return 0, false
		}
		to, err := os.Readlink(p)
		if err != nil {
			return 0, false
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(p), to)
		}
		path = to
	}
	return 0, false
}

// followLinks returns the file path leads to: path itself unless it is a symbolic link,
// else the end of the chain of links (which need not exist yet: a link to a new file).
func followLinks(path string) (string, error) {
	for range 40 { // the kernel's own limit on a chain of links
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// createBeside creates a new file with a hidden random name in target's directory (so the
// rename at Commit stays on one file system) with mode perm less the umask.
func createBeside(target string, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Split(target)
	for range 10 {
		var b [6]byte
		_, _ = rand.Read(b[:])
		name := filepath.Join(dir, "."+base+".tandem-"+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("could not make a temporary file in %s", dir)
}

// terminal reports whether o is a terminal (-o /dev/tty, or /dev/stdout when stdout is
// one): what is written there must pass through the sanitiser, as on stdout.
func (o *outFile) terminal() bool {
	return !o.temp && isTerminal(o.File)
}

// Commit closes the file and, for a temporary file, renames it over the target.
func (o *outFile) Commit() error {
	o.done = true
	if err := o.File.Close(); err != nil {
		if o.temp {
			os.Remove(o.File.Name())
		}
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	if !o.temp {
		return nil
	}
	if err := os.Rename(o.File.Name(), o.target); err != nil {
		os.Remove(o.File.Name())
		return outputError(o.path, err)
	}
	return nil
}

// Abort closes the file and removes a temporary one, unless Commit ran; it is safe to
// defer.
func (o *outFile) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.File.Close()
	if o.temp {
		os.Remove(o.File.Name())
	}
}
