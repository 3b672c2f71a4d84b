//go:build unix

package cli

import (
	"io"
	"io/fs"
	"os"
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
