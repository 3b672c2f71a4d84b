package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCLI_Sync walks the working-copy commands through each exit code of sync.
func TestCLI_Sync(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, train)

	if r := tandem(t, team, "clone", team, train); r.code != 2 || !strings.Contains(r.stderr, "exists") {
		t.Errorf("clone into an existing file: exit %d %q, want 2", r.code, r.stderr)
	}
	if r := tandem(t, team, "sync"); r.code != 2 || !strings.Contains(r.stderr, "not a working copy") {
		t.Errorf("sync on a store that is no copy: exit %d %q, want 2", r.code, r.stderr)
	}
	if r := tandem(t, train, "lease", "acquire", "product", "42"); r.code != 2 || !strings.Contains(r.stderr, "working copy") {
		t.Errorf("lease on a working copy: exit %d %q, want 2", r.code, r.stderr)
	}

	// A collision: exit 3 with the conflict as a record in --json; the local value stays.
	mustTandem(t, train, "--user", "alice", "set", "product", "42", "price=92.00", "--expect-version", "1")
	mustTandem(t, team, "--user", "bob", "set", "product", "42", "price=95.00", "--expect-version", "1")
	r := tandem(t, train, "sync", "--json")
	if r.code != 3 {
		t.Fatalf("sync with a collision: exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rep struct {
		InSync    bool `json:"in_sync"`
		Conflicts []struct {
			Kind   string         `json:"kind"`
			ID     int64          `json:"id"`
			Fields []string       `json:"fields"`
			Mine   map[string]any `json:"mine"`
			Theirs map[string]any `json:"theirs"`
		} `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("sync --json: %v\n%s", err, r.stdout)
	}
	if rep.InSync || len(rep.Conflicts) != 1 || rep.Conflicts[0].ID != 42 || rep.Conflicts[0].Mine["price"] != "92.00" || rep.Conflicts[0].Theirs["price"] != "95.00" {
		t.Errorf("sync --json: %s", r.stdout)
	}
	if out := mustTandem(t, train, "get", "product", "42", "--json"); !strings.Contains(out, `"price": "92.00"`) {
		t.Errorf("local value after the conflict: %s", out)
	}
	if r := tandem(t, train, "resolve", "product", "42", "name=mine"); r.code != 2 || !strings.Contains(r.stderr, "no answer for price") {
		t.Errorf("resolve without the colliding field: exit %d %q, want 2", r.code, r.stderr)
	}
	mustTandem(t, train, "--user", "alice", "resolve", "product", "42", "price=theirs")

	// A lease on the source: exit 4 naming the holder; nothing written.
	lease := mustTandem(t, team, "--user", "dave", "lease", "acquire", "product", "42")
	mustTandem(t, train, "--user", "alice", "set", "product", "42", "name=Lamp", "--expect-version", mustVersion(t, train, 42))
	r = tandem(t, train, "sync")
	if r.code != 4 || !strings.Contains(r.stdout, "leased by dave") {
		t.Errorf("sync with a leased record: exit %d, want 4\n%s%s", r.code, r.stdout, r.stderr)
	}
	var l struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(lease), &l); err != nil || l.Token == "" {
		t.Fatalf("decode lease acquire --json (token %q): %v\n%s", l.Token, err, lease)
	}
	mustTandem(t, team, "--user", "dave", "lease", "release", l.Token)

	// The source gone: exit 1, nothing lost; back: exit 0, the edit arrives.
	moved := team + ".away"
	if err := os.Rename(team, moved); err != nil {
		t.Fatal(err)
	}
	if r := tandem(t, train, "sync"); r.code != 1 {
		t.Errorf("sync without its source: exit %d, want 1\n%s", r.code, r.stderr)
	} else if !strings.Contains(r.stderr, "the source cannot be reached; 1 local change stays in the copy") {
		t.Errorf("sync without its source says %q", r.stderr)
	}
	if err := os.Rename(moved, team); err != nil {
		t.Fatal(err)
	}
	if r := tandem(t, train, "sync"); r.code != 0 || !strings.Contains(r.stdout, "in sync") {
		t.Fatalf("sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := mustTandem(t, team, "get", "product", "42", "--json"); !strings.Contains(out, `"name": "Lamp"`) || !strings.Contains(out, `"price": "95.00"`) {
		t.Errorf("source after sync: %s", out)
	}

	// Another store where the source was: refused, nothing written.
	other := filepath.Join(dir, "other.db")
	madeStoreAt(t, other, "init", "--sample")
	if r := tandem(t, train, "sync", "--source", other); r.code != 2 || !strings.Contains(r.stderr, "not the store this copy was cloned from") {
		t.Errorf("sync against another store: exit %d %q, want 2", r.code, r.stderr)
	}
}

// mustVersion returns product id's current version on dsn, as an argument.
func mustVersion(t *testing.T, dsn string, id int64) string {
	t.Helper()
	var rec record
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "get", "product", strconv.FormatInt(id, 10), "--json")), &rec); err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(rec.Version, 10)
}

// TestCLI_SyncSourceDeletes: the tester's findings on working copies, run with the binary:
// a delete on the source reaches the copy, an edit of a deleted record is never dropped
// silently, status tells the last sync after an exit 3, a copy is not cloned, --subtree of
// a non-root document clones, --source is checked under its own name and remembered.
func TestCLI_SyncSourceDeletes(t *testing.T) {
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, train)

	// Finding 1: a delete on the source leaves the copy at the next sync.
	mustTandem(t, team, "delete", "product", "6", "--expect-version", "1")
	out := mustTandem(t, train, "sync")
	if !strings.Contains(out, "removed 1 record the source deleted") {
		t.Errorf("sync after a delete on the source says %q", out)
	}
	if r := tandem(t, train, "get", "product", "6"); r.code != 5 {
		t.Errorf("product 6, deleted on the source, in the copy: exit %d %s", r.code, r.stdout)
	}
	mustTandem(t, team, "restore", "product", "6")
	mustTandem(t, train, "sync")
	mustTandem(t, train, "get", "product", "6")

	// Finding 2: an edit of a record the source deletes is a conflict, and resolve mine
	// is refused rather than drop it; theirs accepts the delete, saying so.
	mustTandem(t, train, "--user", "alice", "set", "product", "8", "name=Mine8", "--expect-version", "1")
	mustTandem(t, train, "--user", "alice", "set", "product", "9", "name=Mine9", "--expect-version", "1")
	mustTandem(t, team, "delete", "product", "8", "--expect-version", "1")
	mustTandem(t, team, "delete", "product", "9", "--expect-version", "1")
	r := tandem(t, train, "sync")
	if r.code != 3 || !strings.Contains(r.stdout, "product 8 (save): not on the source any more") {
		t.Fatalf("sync with an edit of a deleted record: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Finding 9: that sync ran, so status does not say "synced never".
	if st := mustTandem(t, train, "status"); !strings.Contains(st, "synced just now") || !strings.Contains(st, "2 conflicts") {
		t.Errorf("status after a sync that left conflicts: %q", st)
	}
	r = tandem(t, train, "resolve", "product", "8", "name=mine")
	if r.code != 2 || !strings.Contains(r.stderr, "deleted on the source; your edit stays in the copy") {
		t.Errorf("resolve mine of a deleted record: exit %d %q, want 2 and why", r.code, r.stderr)
	}
	if r := tandem(t, train, "sync"); r.code != 3 {
		t.Errorf("sync after a refused resolve: exit %d, want 3 (the conflict stays)\n%s", r.code, r.stdout)
	}
	if out := mustTandem(t, train, "resolve", "product", "9", "name=theirs"); !strings.Contains(out, "dropped product 9 from the copy with its local edit") {
		t.Errorf("resolve theirs of a deleted record says %q", out)
	}
	mustTandem(t, team, "restore", "product", "8")
	if r := tandem(t, train, "sync"); r.code != 3 {
		t.Errorf("sync after the source restored product 8: exit %d, want 3\n%s", r.code, r.stdout)
	}
	mustTandem(t, train, "--user", "alice", "resolve", "product", "8", "name=mine")
	if out := mustTandem(t, train, "sync"); !strings.Contains(out, "in sync") {
		t.Errorf("sync after resolving against the restored record: %q", out)
	}
	if out := mustTandem(t, team, "get", "product", "8"); !strings.Contains(out, "Mine8") {
		t.Errorf("the edit of product 8 did not reach the restored record:\n%s", out)
	}

	// Finding 5: a working copy is not a source.
	if r := tandem(t, team, "clone", train, filepath.Join(dir, "second.db")); r.code != 2 || !strings.Contains(r.stderr, "itself a working copy") {
		t.Errorf("clone of a working copy: exit %d %q, want 2", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "second.db")); err == nil {
		t.Errorf("a refused clone left its file")
	}

	// Finding 7: --subtree of a document that has a parent.
	sub := filepath.Join(dir, "sub.db")
	mustTandem(t, team, "clone", team, sub, "--kind", "document", "--subtree", "2")
	mustTandem(t, sub, "get", "document", "2")

	// Finding 13: a bad --source is named --source; finding 8: a good one is remembered.
	if r := tandem(t, train, "sync", "--source", "postgres://a:b@c@d/x"); r.code != 2 || !strings.Contains(r.stderr, "--source: the postgres:// DSN") {
		t.Errorf("sync --source with a bad DSN: exit %d %q", r.code, r.stderr)
	}
	moved := filepath.Join(dir, "moved.db")
	if err := os.Rename(team, moved); err != nil {
		t.Fatal(err)
	}
	if r := tandem(t, train, "sync", "--source", moved); r.code != 0 || !strings.Contains(r.stderr, "remembers its source at "+moved) {
		t.Errorf("sync --source at the new place: exit %d %q", r.code, r.stderr)
	}
	if out := mustTandem(t, train, "status"); !strings.Contains(out, "offline copy of "+moved) {
		t.Errorf("status after sync --source: %q", out)
	}
	mustTandem(t, train, "sync")

	// Finding 10: a create in a copy says its id is local.
	if out := mustTandem(t, train, "create", "product", "sku=LOC-1", "name=local"); !strings.Contains(out, "a local id") {
		t.Errorf("create in a working copy says %q", out)
	}
}

// TestCLI_SyncCreateOfUnsearchedKind: a record created in a working copy of a kind none of
// whose fields is searched (parts.yaml's area) reaches the source. sync looked for the
// create on the source by searching its title, which such a kind refuses: every sync
// stopped there, for good.
func TestCLI_SyncCreateOfUnsearchedKind(t *testing.T) {
	parts, err := filepath.Abs("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, wc := filepath.Join(dir, "src.db"), filepath.Join(dir, "wc.db")
	mustTandem(t, src, "init", "--schema", parts)
	mustTandem(t, src, "create", "area", "name=Top")
	mustTandem(t, src, "clone", src, wc)
	mustTandem(t, wc, "create", "area", "name=Below", "parent_id=1")
	mustTandem(t, wc, "create", "area", "name=Other")
	mustTandem(t, wc, "sync")
	var areas []record
	if err := json.Unmarshal([]byte(mustTandem(t, src, "list", "areas", "--json")), &areas); err != nil {
		t.Fatal(err)
	}
	if len(areas) != 3 || areas[1].Fields["name"] != "Below" || areas[1].Fields["parent_id"] != float64(1) || areas[2].Fields["name"] != "Other" {
		t.Fatalf("source areas after the sync: %+v", areas)
	}
}

// TestCLI_SyncUnfitNamesWhatFits: a pending save that no longer fits the source's schema
// (one field dropped) and also sets a field that still fits says so, value included: the
// save is dropped whole (sync --drop-unfit), and the message named only the dropped field,
// so the other field's new value went with it unannounced.
func TestCLI_SyncUnfitNamesWhatFits(t *testing.T) {
	parts, err := filepath.Abs("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, wc := filepath.Join(dir, "src.db"), filepath.Join(dir, "wc.db")
	mustTandem(t, src, "init", "--schema", parts)
	mustTandem(t, src, "create", "supplier", "code=A", "name=Acme", "notes=n1")
	mustTandem(t, src, "clone", src, wc)
	mustTandem(t, wc, "set", "supplier", "1", "notes=local", "name=Renamed here", "--expect-version", "1")
	data, err := os.ReadFile(parts)
	if err != nil {
		t.Fatal(err)
	}
	dropped := regexp.MustCompile(`(?m)^      - \{name: notes,.*\n`).ReplaceAllString(string(data), "")
	file := filepath.Join(dir, "v2.yaml")
	if err := os.WriteFile(file, []byte(dropped), 0o600); err != nil {
		t.Fatal(err)
	}
	mustTandem(t, src, "schema", "apply", file, "--allow-destructive", "--export", filepath.Join(dir, "lost.jsonl"))
	r := tandem(t, wc, "sync")
	if r.code != 3 || !strings.Contains(r.stdout+r.stderr, `"Renamed here"`) {
		t.Fatalf("sync of an unfit save: exit %d, want 3 naming the value that still fits\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := tandem(t, wc, "status"); !strings.Contains(r.stdout, `"Renamed here"`) {
		t.Fatalf("status of an unfit save does not name the value that still fits:\n%s%s", r.stdout, r.stderr)
	}
}
