package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCLI_KeyReplayNamesWhoApplied: idempotency keys are shared by everyone writing to a
// store, so when bob sends adjust, set or delete with a key alice used, the answer (text
// and JSON) says that alice applied it and when, and nothing is applied twice.
func TestCLI_KeyReplayNamesWhoApplied(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=KEY-1", "name=Lamp", "stock=10")
			q := mustCreate(t, dsn, "product", "sku=KEY-2", "name=Shade")
			id, qid := fmt.Sprint(p.ID), fmt.Sprint(q.ID)
			start := time.Now().Add(-time.Minute)
			for _, c := range []struct {
				name string
				args []string
			}{
				{"adjust", []string{"adjust", "product", id, "stock", "-3", "--key", "k-adjust"}},
				{"set", []string{"set", "product", id, "name=Alice's lamp", "--expect-version", "2", "--key", "k-set"}},
				{"delete", []string{"delete", "product", qid, "--expect-version", "1", "--key", "k-delete"}},
			} {
				as := func(user string, extra ...string) result {
					cmd := tandemCmd(dsn, append(append([]string{"--user", user}, c.args...), extra...)...)
					return runResult(t, cmd, c.args)
				}
				if r := as("alice"); r.code != 0 || strings.Contains(r.stdout, "already applied") {
					t.Fatalf("alice's %s: exit %d, stdout %q, stderr %q", c.name, r.code, r.stdout, r.stderr)
				}
				r := as("bob")
				want := fmt.Sprintf(`already applied by alice at %s`, time.Now().Format("2006-01-02"))
				key := fmt.Sprintf(`(key "%s")`, c.args[len(c.args)-1])
				if r.code != 0 || !strings.HasPrefix(r.stdout, want) || !strings.Contains(r.stdout, key) {
					t.Errorf("bob's %s with alice's key: exit %d, stdout %q; want it to begin %q and name %s", c.name, r.code, r.stdout, want, key)
				}
				r = as("bob", "--json")
				var out struct {
					Replayed  bool   `json:"replayed"`
					AppliedBy string `json:"applied_by"`
					AppliedAt string `json:"applied_at"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
					t.Fatalf("bob's %s --json: %v\n%s", c.name, err, r.stdout)
				}
				at, err := time.Parse(time.RFC3339Nano, out.AppliedAt)
				if !out.Replayed || out.AppliedBy != "alice" || err != nil || at.Before(start) || at.After(time.Now().Add(time.Minute)) {
					t.Errorf("bob's %s --json: %+v (%v); want replayed, applied by alice just now", c.name, out, err)
				}
			}
			if got := mustGet(t, dsn, "product", p.ID); got.Fields["stock"] != float64(7) || got.Version != 3 {
				t.Errorf("product after the replays: stock %v v%d, want 7 v3 (each applied once)", got.Fields["stock"], got.Version)
			}
		})
	}
}
