package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCLI_Sync walks the working-copy commands through each exit code of sync.
func TestCLI_Sync(t *testing.T) {
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	mustTandem(t, team, "init", "--sample")
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
	_ = json.Unmarshal([]byte(lease), &l)
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
	mustTandem(t, other, "init", "--sample")
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
