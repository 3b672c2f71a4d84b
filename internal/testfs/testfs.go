// Package testfs holds file-system helpers shared by tests of several packages. Only tests
// import it, so the tandem binary does not link the testing package.
package testfs

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// MakeReadOnly makes path (a file or a directory) impossible to write for this process until
// the test ends. As a normal user that is chmod a-w; root ignores permission bits, so as root
// it is chattr +i (immutable: refused even to root), and the test is skipped where that is
// not available. Either way it checks that writing really fails, so the test means something.
func MakeReadOnly(t testing.TB, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
			t.Skipf("running as root, which ignores permission bits, and chattr +i is not available: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
	} else {
		if err := os.Chmod(path, fi.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(path, fi.Mode().Perm()) })
	}
	if fi.IsDir() {
		probe := filepath.Join(path, "probe")
		if f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			f.Close()
			os.Remove(probe)
			t.Fatalf("%s is still writable", path)
		}
	} else if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		f.Close()
		t.Fatalf("%s is still writable", path)
	}
}

// CopyFile copies the file from to the new file to, mode 0600 as tandem makes its stores
// (to must not exist): a test's own copy of a template store made once per test binary.
func CopyFile(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
