package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCLI_SyncMessages: what sync and delete say on a working copy is what happens. A
// missing source is "cannot be reached" with the way to name where it moved (never "tandem
// seed", which would make another store); another store is refused without promising that
// the next sync continues; deleting a record created in the copy and never synced does not
// promise a delete on the source.
func TestCLI_SyncMessages(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	team, train, other := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db"), filepath.Join(dir, "other.db")
	madeStoreAt(t, team, "init", "--sample")
	madeStoreAt(t, other, "init", "--sample")
	mustTandem(t, team, "clone", team, train)

	moved := filepath.Join(dir, "moved.db")
	if err := os.Rename(team, moved); err != nil {
		t.Fatal(err)
	}
	r := tandem(t, train, "sync")
	wantExit(t, "sync with the source moved away", r, 1, "cannot be reached", "--source")
	if strings.Contains(r.stderr, "seed") {
		t.Errorf("a missing source suggests seed: %q", r.stderr)
	}
	if _, err := os.Stat(team); err == nil {
		t.Errorf("sync made a store at the source's old place")
	}
	mustTandem(t, train, "sync", "--source", moved)

	r = tandem(t, train, "sync", "--source", other)
	wantExit(t, "sync with another store", r, 2, "not the store this copy was cloned from", "nothing was pulled or pushed")
	if strings.Contains(r.stderr, "continues") {
		t.Errorf("a refused sync promises the next one continues: %q", r.stderr)
	}

	created := mustCreate(t, train, "document", "title=local only", "parent_id=1")
	out := mustTandem(t, train, "delete", "document", strconv.FormatInt(created.ID, 10), "--expect-version", "1")
	if strings.Contains(out, "deletes it on the source") || !strings.Contains(out, "never synced") {
		t.Errorf("delete of a local create: %q", out)
	}
	under := mustCreate(t, train, "document", "title=local child", "parent_id=15")
	out = mustTandem(t, train, "delete", "document", "15", "--expect-version", "1", "--subtree")
	if !strings.Contains(out, "tandem sync deletes on the source what it has") || !strings.Contains(out, "document "+strconv.FormatInt(under.ID, 10)+", created here and never synced") {
		t.Errorf("subtree delete with a local create in it: %q", out)
	}
	out = mustTandem(t, train, "delete", "product", "3", "--expect-version", "1")
	if !strings.Contains(out, "tandem sync deletes it on the source") {
		t.Errorf("delete of a record the source has: %q", out)
	}
	if st := mustTandem(t, train, "status"); !strings.Contains(st, "2 deletes") {
		t.Errorf("status after the deletes: %s", st)
	}
}

// TestCLI_SyncCountsAfterResolve: the sync after `resolve ... theirs` says it pulled the
// record it brought back, and removed the document the source deleted once nothing held it
// in the copy; a move under a document the source deleted names the parent as gone, not
// the moved document (review 2, finding 6).
func TestCLI_SyncCountsAfterResolve(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, train)
	mustTandem(t, train, "move", "11", "12")
	mustTandem(t, team, "delete", "document", "12", "--expect-version", "1")
	mustTandem(t, train, "delete", "document", "5", "--expect-version", "1")
	mustTandem(t, team, "set", "document", "5", "title=buddy 2", "--expect-version", "1")

	r := tandem(t, train, "sync")
	wantExit(t, "sync with a move and a delete in conflict", r, 3, "document 11 (move): the new parent is not on the source: parent 12 not found")
	if strings.Contains(r.stdout, "not on the source any more") {
		t.Errorf("the move's conflict says document 11 is gone: %q", r.stdout)
	}
	mustTandem(t, train, "resolve", "document", "5", "theirs")
	mustTandem(t, train, "resolve", "document", "11", "parent_id=theirs")
	out := mustTandem(t, train, "sync")
	if !strings.Contains(out, "pulled 1 record,") || !strings.Contains(out, "removed 1 record the source deleted") || !strings.Contains(out, "in sync") {
		t.Errorf("sync after the resolutions: %q, want document 5 pulled and document 12 removed", out)
	}
}
