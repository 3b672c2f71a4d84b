package cli

import (
	"fmt"
	"strings"
	"testing"
)

// The store's rules seen from the command line, as real processes of the built binary on
// SQLite and PostgreSQL (issue 10, points 2, 3, 5, 9 and 13).

// TestCLI_RegistryCannotFreeParentID: a --fields file that drops readonly from parent_id is
// refused at load, naming the file and the field, so "set parent_id" can never make a cycle.
func TestCLI_RegistryCannotFreeParentID(t *testing.T) {
	fields := writeFields(t, "readonly: true, label: parent}", "label: parent}")
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			a := mustCreate(t, dsn, "document", "title=A")
			c := mustCreate(t, dsn, "document", "title=B", fmt.Sprintf("parent_id=%d", a.ID))
			r := tandem(t, dsn, "--fields", fields, "set", "document", fmt.Sprint(a.ID), fmt.Sprintf("parent_id=%d", c.ID), "--expect-version", "1")
			wantExit(t, "set parent_id under a registry without readonly", r, exitUsage, fields, "document.parent_id", "readonly")
			if got := mustGet(t, dsn, "document", a.ID); got.Fields["parent_id"] != nil || got.Version != 1 {
				t.Errorf("document %d = parent %v v%d, want still at the root, v1", a.ID, got.Fields["parent_id"], got.Version)
			}
		})
	}
}

// TestCLI_NoEmptyVersions: a move to where a document is, an adjust by 0 and a set of the
// values a record has write nothing and say "no change".
func TestCLI_NoEmptyVersions(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			d := mustCreate(t, dsn, "document", "title=Root doc")
			p := mustCreate(t, dsn, "product", "sku=SAME-1", "name=Same", "price=3.50", "stock=4")
			pid := fmt.Sprint(p.ID)
			for what, args := range map[string][]string{
				"move to the root": {"move", fmt.Sprint(d.ID), "root"},
				"adjust by 0":      {"adjust", "product", pid, "stock", "0"},
				"set equal values": {"set", "product", pid, "name=Same", "price=3.5", "--expect-version", "1"},
			} {
				out := mustTandem(t, dsn, args...)
				if !strings.HasPrefix(out, "no change") {
					t.Errorf("%s says %q, want no change", what, out)
				}
			}
			// A stale base is a conflict even when the values are equal: a read-modify-write
			// script must learn that it read an old version.
			mustTandem(t, dsn, "adjust", "product", pid, "stock", "1")
			wantExit(t, "set, stale, equal", tandem(t, dsn, "set", "product", pid, "price=3.50", "--expect-version", "1"), exitConflict)
			if got := mustGet(t, dsn, "document", d.ID); got.Version != 1 {
				t.Errorf("document version = %d, want 1", got.Version)
			}
			if got := mustGet(t, dsn, "product", p.ID); got.Version != 2 {
				t.Errorf("product version = %d, want 2 (the create and the adjust by 1)", got.Version)
			}
			if n := historyLen(t, dsn, "product", p.ID); n != 2 {
				t.Errorf("product history = %d versions, want 2", n)
			}
			if n := historyLen(t, dsn, "document", d.ID); n != 1 {
				t.Errorf("document history = %d versions, want 1", n)
			}
		})
	}
}
