package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_SyncDelete: a delete in a working copy waits in the outbox (status lists it), a
// restore cancels it, sync carries it to the source; one that meets a source change is a
// conflict (exit 3) answered for the whole record with resolve mine or theirs.
func TestCLI_SyncDelete(t *testing.T) {
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, train)

	out := mustTandem(t, train, "--user", "alice", "delete", "product", "41", "--expect-version", mustVersion(t, train, 41))
	if !strings.Contains(out, "tandem sync deletes it on the source") {
		t.Errorf("delete on a working copy says %q", out)
	}
	mustTandem(t, train, "--user", "alice", "delete", "product", "42", "--expect-version", mustVersion(t, train, 42))
	mustTandem(t, train, "--user", "alice", "delete", "product", "43", "--expect-version", mustVersion(t, train, 43))
	out = mustTandem(t, train, "status")
	for _, want := range []string{"3 pending (3 deletes)", "pending delete: product 41", "pending delete: product 43"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	mustTandem(t, train, "--user", "alice", "restore", "product", "42")
	var st struct {
		Pending int `json:"pending"`
		Deletes []struct {
			Kind string `json:"kind"`
			ID   int64  `json:"id"`
		} `json:"pending_deletes"`
	}
	if err := json.Unmarshal([]byte(mustTandem(t, train, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Pending != 2 || len(st.Deletes) != 2 || st.Deletes[0].ID != 41 || st.Deletes[1].ID != 43 {
		t.Errorf("status --json after the restore: %+v, want the deletes of 41 and 43", st)
	}

	mustTandem(t, team, "--user", "bob", "set", "product", "43", "name=Bob's", "--expect-version", mustVersion(t, team, 43))
	r := tandem(t, train, "sync", "--json")
	if r.code != 3 {
		t.Fatalf("sync with a delete against a source edit: exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rep struct {
		Conflicts []struct {
			ID     int64  `json:"id"`
			Op     string `json:"op"`
			Reason string `json:"reason"`
		} `json:"conflicts"`
		Deletes []any `json:"pending_deletes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("sync --json: %v\n%s", err, r.stdout)
	}
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].ID != 43 || rep.Conflicts[0].Op != "delete" || len(rep.Deletes) != 0 {
		t.Fatalf("sync --json: %s", r.stdout)
	}
	if r := tandem(t, team, "get", "product", "41"); r.code == 0 {
		t.Errorf("product 41 is still on the source after the sync")
	}
	if r := tandem(t, team, "get", "product", "42"); r.code != 0 {
		t.Errorf("product 42, whose delete was cancelled, is gone from the source: %s", r.stderr)
	}
	if out := mustTandem(t, train, "status"); !strings.Contains(out, "conflict: product 43 (delete): deleted here, changed on the source") {
		t.Errorf("status does not list the delete's conflict:\n%s", out)
	}
	if r := tandem(t, train, "resolve", "product", "43", "name=mine"); r.code != 2 {
		t.Errorf("a field answer to a delete's conflict: exit %d %q, want 2", r.code, r.stderr)
	}
	if r := tandem(t, train, "resolve", "product", "43", "base"); r.code != 2 {
		t.Errorf("resolve product 43 base: exit %d %q, want 2", r.code, r.stderr)
	}
	out = mustTandem(t, train, "--user", "alice", "resolve", "product", "43", "mine")
	if !strings.Contains(out, "delete it on the source too") {
		t.Errorf("resolve mine says %q", out)
	}
	if r := tandem(t, train, "sync"); r.code != 0 {
		t.Fatalf("sync after resolve mine: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := tandem(t, team, "get", "product", "43"); r.code == 0 {
		t.Errorf("product 43 is still on the source after resolve mine")
	}
	if out := mustTandem(t, team, "history", "product", "41"); !strings.Contains(out, "alice (offline copy") {
		t.Errorf("the source's history of product 41 does not say the delete came from a working copy:\n%s", out)
	}

	// A restore of what the source no longer has is refused, naming the source.
	if r := tandem(t, train, "--user", "alice", "restore", "product", "41"); r.code != 2 || !strings.Contains(r.stderr, "Restore it on the source") {
		t.Errorf("restore in the copy after the delete was synced: exit %d %q, want 2", r.code, r.stderr)
	}
}
