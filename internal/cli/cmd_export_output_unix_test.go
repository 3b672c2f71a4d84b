//go:build unix

package cli

import (
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestCLI_ExportOutputSpecialFiles: -o follows a link to its target and writes a FIFO or a
// device directly, where renaming a finished file over the name would replace the link, the
// FIFO or the device with a plain file; a new file gets the umask's mode, an old one keeps
// its own; a directory is refused.
func TestCLI_ExportOutputSpecialFiles(t *testing.T) {
	dsn := newSQLiteStore(t)
	mustTandem(t, dsn, "import", writeFile(t, "base.csv", importBase(2)))
	want := mustTandem(t, dsn, "export", "products")
	dir := t.TempDir()

	target := filepath.Join(dir, "target.csv")
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink("target.csv", link); err != nil {
		t.Fatal(err)
	}
	mustTandem(t, dsn, "export", "products", "-o", link)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("export -o LINK: the link is now %v (%v); want it kept", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(target); string(got) != want {
		t.Errorf("export -o LINK wrote the link's target:\n%s\nwant:\n%s", got, want)
	}

	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A second name for the FIFO, to let the reader go should the export not open it.
	if err := os.Link(fifo, fifo+".keep"); err != nil {
		t.Fatal(err)
	}
	read := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the export opens the other end
		if err != nil {
			read <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		read <- string(b)
	}()
	mustTandem(t, dsn, "export", "products", "-o", fifo)
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("export -o FIFO: the FIFO is now %v (%v)", fi.Mode(), err)
		if w, err := os.OpenFile(fifo+".keep", os.O_WRONLY, 0); err == nil {
			w.Close()
		}
	}
	if got := <-read; got != want {
		t.Errorf("export -o FIFO: the reader got:\n%s\nwant:\n%s", got, want)
	}
	os.Remove(fifo + ".keep")

	// A device: a node of the null device made in the test's directory (never the system's
	// own /dev/null, which a broken export would replace), where the tests may make one.
	// Linux numbers it 1,3 (major << 8 | minor for numbers this small).
	t.Run("device", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("the device case is tested on Linux only (the null device's numbers differ elsewhere)")
		}
		dev := filepath.Join(t.TempDir(), "null.csv")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Skipf("no device node can be made here (%v): the device case needs CAP_MKNOD", err)
		}
		mustTandem(t, dsn, "export", "products", "-o", dev)
		if fi, err := os.Lstat(dev); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("export -o DEVICE replaced the device: %v (%v)", fi.Mode(), err)
		}
	})

	// /dev/stdout into a pipe: /proc/self/fd/1's text is "pipe:[…]", no file; the export
	// opens the name as the system resolves it and writes into the pipe.
	if _, err := os.Stat("/dev/stdout"); err == nil {
		if r := tandem(t, dsn, "export", "products", "--format", "csv", "-o", "/dev/stdout"); r.code != 0 || r.stdout != want {
			t.Errorf("export -o /dev/stdout into a pipe: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
		}
	}

	old := filepath.Join(dir, "old.csv")
	if err := os.WriteFile(old, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o640); err != nil {
		t.Fatal(err)
	}
	mustTandem(t, dsn, "export", "products", "-o", old)
	if fi, _ := os.Stat(old); fi.Mode().Perm() != 0o640 {
		t.Errorf("export -o over a 0640 file left mode %v", fi.Mode().Perm())
	}
	fresh := filepath.Join(dir, "new.csv")
	mustTandem(t, dsn, "export", "products", "-o", fresh)
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != fs.FileMode(0o666&^umask) {
		t.Errorf("export -o NEW made mode %v; want 0666 less the umask %03o", fi.Mode().Perm(), umask)
	}

	r := tandem(t, dsn, "export", "products", "--format", "csv", "-o", dir)
	if r.code != 2 || !strings.Contains(r.stderr, "is a directory") {
		t.Errorf("export -o DIR: exit %d, stderr %q; want 2 saying it is a directory", r.code, r.stderr)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tandem-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestCLI_ExportOutputDescriptor: -o /dev/stdout (or /dev/fd/N, or a link to either) writes
// through the descriptor the process was given, as a shell's >&N does: a file opened for
// appending (>>) keeps what it held, what the shell writes around the export stays in
// order, and a socket is written too. Opened again by name, the file behind it was replaced
// by a new one (losing both) and a socket could not be opened. An SQLite database behind
// the descriptor is still refused.
func TestCLI_ExportOutputDescriptor(t *testing.T) {
	if _, err := os.Stat("/dev/fd/0"); err != nil {
		t.Skipf("no /dev/fd here (%v)", err)
	}
	dsn := newSQLiteStore(t)
	mustTandem(t, dsn, "import", writeFile(t, "base.csv", importBase(2)))
	want := mustTandem(t, dsn, "export", "products")
	dir := t.TempDir()
	link := filepath.Join(dir, "out.csv")
	if err := os.Symlink("/dev/stdout", link); err != nil {
		t.Fatal(err)
	}

	// run exports into fd 1 (stdout) and fd 3 and returns its exit code and stderr.
	run := func(stdout, fd3 *os.File, args ...string) (int, string) {
		t.Helper()
		cmd := tandemCmd(dsn, append([]string{"export", "products", "--format", "csv"}, args...)...)
		var errb strings.Builder
		cmd.Stdout, cmd.Stderr = stdout, &errb
		if fd3 != nil {
			cmd.ExtraFiles = []*os.File{fd3}
		}
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), errb.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, errb.String()
	}

	for _, name := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", link} {
		t.Run("append "+name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "all.csv")
			if err := os.WriteFile(path, []byte("before\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			code, stderr := run(f, nil, "-o", name)
			f.Close()
			got, _ := os.ReadFile(path)
			if code != 0 || string(got) != "before\n"+want {
				t.Errorf("export -o %s >> FILE: exit %d, stderr %q, the file holds:\n%s\nwant what it held, then the export", name, code, stderr, got)
			}
		})
	}

	t.Run("around", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "out.csv")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.WriteString("first\n")
		code, stderr := run(nil, f, "-o", "/dev/fd/3")
		f.WriteString("last\n")
		got, _ := os.ReadFile(path)
		if code != 0 || string(got) != "first\n"+want+"last\n" {
			t.Errorf("{ echo first; export -o /dev/fd/3; echo last; } 3> FILE: exit %d, stderr %q, the file holds:\n%s\nwant first, the export, last", code, stderr, got)
		}
	})

	t.Run("socket", func(t *testing.T) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Skipf("socketpair: %v", err)
		}
		w, r := os.NewFile(uintptr(fds[0]), "w"), os.NewFile(uintptr(fds[1]), "r")
		defer r.Close()
		read := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(r)
			read <- string(b)
		}()
		code, stderr := run(w, nil, "-o", "/dev/stdout")
		w.Close()
		if got := <-read; code != 0 || got != want {
			t.Errorf("export -o /dev/stdout into a socket: exit %d, stderr %q, the reader got:\n%s\nwant:\n%s", code, stderr, got, want)
		}
	})

	t.Run("database", func(t *testing.T) {
		other := newSQLiteStore(t)
		before, err := os.ReadFile(other)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(other, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		code, stderr := run(f, nil, "-o", "/dev/stdout")
		f.Close()
		after, _ := os.ReadFile(other)
		if code != 2 || !strings.Contains(stderr, "is an SQLite database") || string(after) != string(before) {
			t.Errorf("export -o /dev/stdout >> DATABASE: exit %d, stderr %q, database changed %v; want exit 2, refused, unchanged", code, stderr, string(after) != string(before))
		}
	})
}
