package cli

import (
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
	vals, err := parseAssignments(reg, store.KindProduct, []string{"description=@n.txt", "name=@home", "sku=@"})
	if err != nil {
		t.Fatal(err)
	}
	if vals["description"] != "from the file\n" || vals["name"] != "@home" || vals["sku"] != "@" {
		t.Errorf("values %q", vals)
	}
	for _, arg := range []string{"name=@n.txt", "categories=@n.txt", "availability=@" + filepath.Join(".", "n.txt")} {
		_, err := parseAssignments(reg, store.KindProduct, []string{arg})
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "is a file, but only a text field reads its value from a file") {
			t.Errorf("%s: err %v, want a usage error saying only text fields read files", arg, err)
		}
	}
}
