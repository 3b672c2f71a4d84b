package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_RestoreSubtree: restoring a document deleted with --subtree names the documents
// deleted with it that stay deleted; --subtree brings them back, parents first, also after
// the document alone was restored. On a working copy each restore cancels the pending
// delete of what it brings back, and only that, so the source loses nothing at the sync.
func TestCLI_RestoreSubtree(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, train)

	out := mustTandem(t, team, "delete", "document", "2", "--expect-version", "1", "--subtree")
	if !strings.Contains(out, "tandem restore document 2 --subtree") {
		t.Errorf("subtree delete: %q, want the restore that brings them all back", out)
	}
	r := tandem(t, team, "restore", "document", "2")
	wantExit(t, "restore of the top", r, 0, "restored document 2", "3 documents deleted with it stay deleted",
		`document 3 "First day checklist"`, "tandem restore document 2 --subtree")
	for _, id := range []string{"3", "4", "5"} {
		if r := tandem(t, team, "get", "document", id); r.code != 5 {
			t.Errorf("document %s after restoring the top alone: exit %d, want 5 (still deleted)", id, r.code)
		}
	}
	r = tandem(t, team, "restore", "document", "2", "--subtree", "--json")
	wantExit(t, "restore --subtree after the top", r, 0)
	var recs []record
	if err := json.Unmarshal([]byte(r.stdout), &recs); err != nil {
		t.Fatalf("restore --subtree --json: %v\n%s", err, r.stdout)
	}
	if len(recs) != 3 || recs[0].ID != 3 || recs[1].ID != 4 || recs[2].ID != 5 {
		t.Errorf("restored %+v, want documents 3, 4, 5", recs)
	}
	for _, id := range []int64{3, 4, 5} {
		if got := mustGet(t, team, "document", id); got.Fields["parent_id"] != float64(2) {
			t.Errorf("document %d back under %v, want 2", id, got.Fields["parent_id"])
		}
	}
	wantExit(t, "restore --subtree with nothing left", tandem(t, team, "restore", "document", "2", "--subtree"), 2, "nothing deleted with it")
	wantExit(t, "restore --subtree of a product", tandem(t, team, "restore", "product", "2", "--subtree"), 2, "a product has nothing below it")

	// A working copy: the top's restore cancels its own pending delete only.
	mustTandem(t, train, "delete", "document", "2", "--expect-version", "1", "--subtree")
	wantExit(t, "restore of the top on the copy", tandem(t, train, "restore", "document", "2"), 0, "3 documents deleted with it stay deleted")
	st := mustTandem(t, train, "status")
	if !strings.Contains(st, "3 deletes") || strings.Contains(st, "pending delete: document 2") {
		t.Errorf("status after restoring the top: %s", st)
	}
	mustTandem(t, train, "restore", "document", "2", "--subtree")
	if st := mustTandem(t, train, "status"); !strings.Contains(st, "0 pending") {
		t.Errorf("status after restore --subtree: %s", st)
	}
	mustTandem(t, train, "sync")
	for _, id := range []int64{2, 3, 4, 5} {
		mustGet(t, team, "document", id)
	}
}
