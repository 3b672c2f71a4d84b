package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/internal/testfs"
)

// TestCLI_SyncReadOnlyCopy syncs a working copy with a local change whose file, then whose
// directory, cannot be written: sync exits 2 saying so before it pushes, so the source does
// not get a change the copy could not mark as pushed, and the copy is unchanged.
func TestCLI_SyncReadOnlyCopy(t *testing.T) {
	besideOthers(t)
	for _, tc := range []struct{ name, why string }{
		{"File", "the file is not writable"},
		{"Directory", "its directory is not writable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := seededStore(t)
			file := filepath.Join(t.TempDir(), "copy.db")
			mustTandem(t, src, "clone", src, file)
			before := mustGet(t, src, "product", 7)
			mustTandem(t, file, "adjust", "product", "7", "stock", "+5")
			if tc.name == "File" {
				testfs.MakeReadOnly(t, file)
			} else {
				testfs.MakeReadOnly(t, filepath.Dir(file))
			}
			copySum := sum(t, file)
			r := tandem(t, file, "sync")
			want := "is read-only (" + tc.why + "): a sync writes"
			if r.code != exitUsage || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "nothing was pulled or pushed") {
				t.Errorf("sync: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitUsage, want)
			}
			if got := mustGet(t, src, "product", 7); got.Version != before.Version || got.Fields["stock"] != before.Fields["stock"] {
				t.Errorf("the source's product 7 is v%d stock %v after the refused sync; want v%d stock %v",
					got.Version, got.Fields["stock"], before.Version, before.Fields["stock"])
			}
			if sum(t, file) != copySum {
				t.Error("the read-only copy's file changed")
			}
		})
	}
}
