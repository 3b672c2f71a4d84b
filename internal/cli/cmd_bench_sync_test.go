package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchSync_RefusesBadSizes: bench sync refuses sizes it cannot measure with (none,
// or fewer products than the push and the direct saves need between them) before it
// touches the store: no products made, no file made.
func TestBenchSync_RefusesBadSizes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--products", "1", "--changes", "1"},
		{"--products", "100", "--changes", "60"},
		{"--rounds", "0"},
		{"--changes", "-1"},
	} {
		file := filepath.Join(dir, "b.db")
		r := tandem(t, file, append([]string{"--create", "bench", "sync"}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "--") {
			t.Errorf("bench sync %v: exit %d, stderr %q; want exit 2 naming the flag", args, r.code, r.stderr)
		}
		if _, err := os.Stat(file); err == nil {
			t.Errorf("bench sync %v made %s", args, file)
		}
	}
}
