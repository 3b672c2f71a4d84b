package cli

import (
	"path/filepath"
	"strconv"
	"testing"
)

// TestCLI_CopySavesAfterItTookTheSourcesVersion: a copy's three saves of a product
// (local versions 2 to 4) meet a save of the same field on the source (its version 2);
// the conflict is resolved with the source's value and synced, so the copy holds the
// source's version 2 again. Its next save must work, as version 3, and reach the source:
// the copy's own history of versions 2 to 4 once made it fail with a constraint error
// (exit 2) on every save of that record.
func TestCLI_CopySavesAfterItTookTheSourcesVersion(t *testing.T) {
	src := madeStore(t, "seed")
	cp := filepath.Join(t.TempDir(), "train.db")
	mustInProcess(t, src, "clone", src, cp)
	for v, name := range []string{"T1", "T2", "T3"} {
		mustInProcess(t, cp, "set", "product", "1", "name="+name, "--expect-version", strconv.Itoa(v+1))
	}
	mustInProcess(t, src, "set", "product", "1", "name=Office", "--expect-version", "1")
	wantExit(t, "sync into the conflict", tandem(t, cp, "sync"), exitConflict, "changed on both sides: name")
	mustInProcess(t, cp, "resolve", "product", "1", "name=theirs")
	mustInProcess(t, cp, "sync")
	if got := mustGet(t, cp, "product", 1); got.Version != 2 || got.Fields["name"] != "Office" {
		t.Fatalf("after the resolved sync the copy has v%d %v, want the source's v2 Office", got.Version, got.Fields["name"])
	}
	r := tandem(t, cp, "set", "product", "1", "name=Later", "--expect-version", "2")
	wantExit(t, "a save on the copy after it took the source's version", r, 0, "version 3")
	mustInProcess(t, cp, "sync")
	if got := mustGet(t, src, "product", 1); got.Version != 3 || got.Fields["name"] != "Later" {
		t.Errorf("the source has v%d %v, want v3 Later", got.Version, got.Fields["name"])
	}
}
