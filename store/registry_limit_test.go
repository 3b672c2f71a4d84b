package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestLoadRegistry_Limit checks that a registry file over MaxRegistryBytes is refused with a
// message naming the limit, and one just under it is parsed (its problems are YAML's, not
// its size). The process test TestHardening_BoundedReads reads /dev/zero under a memory
// limit; this one needs no device.
func TestLoadRegistry_Limit(t *testing.T) {
	dir := t.TempDir()
	// A YAML comment of any length is valid YAML: only the size can refuse it.
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("#"+strings.Repeat("x", store.MaxRegistryBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := store.LoadRegistry(big)
	want := fmt.Sprintf("over the limit of %d bytes", store.MaxRegistryBytes)
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("LoadRegistry(%d bytes) = %v, want EINVALID %q", store.MaxRegistryBytes+1, err, want)
	}

	fits := filepath.Join(dir, "fits.yaml")
	if err := os.WriteFile(fits, []byte("#"+strings.Repeat("x", store.MaxRegistryBytes-2)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = store.LoadRegistry(fits)
	if err == nil || strings.Contains(err.Error(), "over the limit") {
		t.Errorf("LoadRegistry(%d bytes) = %v, want a parse error, not the size limit", store.MaxRegistryBytes, err)
	}
}
