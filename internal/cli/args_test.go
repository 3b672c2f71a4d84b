package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestParseAssignments_At: field=@path reads a file into a text field only. On any other
// field "@..." is the value as given, unless it names a file that exists: then the caller
// surely meant the file, and the assignment is refused rather than saved as "@n.txt".
func TestParseAssignments_At(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("n.txt", []byte("from the file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := store.DefaultRegistry()
	vals, err := parseAssignments(reg, store.KindProduct, []string{"description=@n.txt", "name=@home", "sku=@"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if vals["description"] != "from the file\n" || vals["name"] != "@home" || vals["sku"] != "@" {
		t.Errorf("values %q", vals)
	}
	for _, arg := range []string{"name=@n.txt", "categories=@n.txt", "availability=@" + filepath.Join(".", "n.txt")} {
		_, err := parseAssignments(reg, store.KindProduct, []string{arg}, true)
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "is a file, but only a text field reads its value from a file") {
			t.Errorf("%s: err %v, want a usage error saying only text fields read files", arg, err)
		}
	}
}

// TestReadLimited reads a regular file and a pipe (a source of unknown size, read in
// chunks) of sizes around the limit and across several chunks: each is read whole up to the
// limit, byte for byte, and one byte more is refused naming the limit.
func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	const max = 3<<20 + 7 // over the first chunks of readChunks, not a multiple of any
	data := make([]byte, max+1)
	for i := range data {
		data[i] = byte(i*7 + i>>16)
	}
	for _, n := range []int{0, 1, 64 << 10, 64<<10 + 1, 1 << 20, max, max + 1} {
		want := data[:n]
		file := filepath.Join(dir, "f")
		if err := os.WriteFile(file, want, 0o600); err != nil {
			t.Fatal(err)
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			_, _ = pw.Write(want)
			pw.Close()
		}()
		for what, path := range map[string]string{"file": file, "pipe": fmt.Sprint("/dev/fd/", pr.Fd())} {
			got, err := readLimited(path, max)
			switch {
			case n > max:
				if err == nil || !strings.Contains(err.Error(), "is over the limit of 3145735 bytes") {
					t.Errorf("%s of %d bytes: %d bytes, error %v; want refused over the limit", what, n, len(got), err)
				}
			case err != nil:
				t.Errorf("%s of %d bytes: %v", what, n, err)
			case !bytes.Equal(got, want):
				t.Errorf("%s of %d bytes: read %d bytes that differ", what, n, len(got))
			}
		}
		// Drain what the writer may still hold after a refusal, so that it ends.
		_, _ = io.Copy(io.Discard, pr)
		pr.Close()
	}
}
