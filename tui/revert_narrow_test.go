package tui

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestHistory_RevertNamesKeptFieldsOn80Columns: reverting to a version whose checksum a
// worker changed since names checksum as not reverted; on an 80-column terminal the status
// line is clipped, so the name must come before the advice, not after it.
func TestHistory_RevertNamesKeptFieldsOn80Columns(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	mustSave(t, s, "bob", 1, store.Values{"price": int64(2000)})
	sys := store.WithActor(t.Context(), store.Actor{Name: "worker:checksum", Role: store.RoleSystem})
	if _, err := s.UpdateRecord(sys, store.KindProduct, 1, store.Update{BaseVersion: 2, Set: store.Values{"checksum": "sha256:x"}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice") // 80 columns
	d.key("h")
	d.waitFor("v2")
	d.key("j")
	d.key("r")
	d.waitFor("reverting to v1")
	if scr := d.screen(); !strings.Contains(scr, "not reverted: checksum") {
		t.Fatalf("the revert's note does not name checksum on 80 columns:\n%s", scr)
	}
}
