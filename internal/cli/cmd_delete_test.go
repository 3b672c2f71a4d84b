package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestCLI_DeleteRestore: delete and restore as real processes of the binary, on SQLite and
// PostgreSQL: each refusal has its exit code and deletes nothing; a delete leaves a tombstone
// that history shows and restore brings back as the next version.
func TestCLI_DeleteRestore(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=DEL-1", "name=Lamp", "price=12.50", "stock=3")
			other := mustCreate(t, dsn, "product", "sku=KEEP-1", "name=Other")
			id := fmt.Sprint(p.ID)
			mustTandem(t, dsn, "set", "product", id, "name=Brass lamp", "--expect-version", "1")

			wantExit(t, "delete without --expect-version", tandem(t, dsn, "delete", "product", id), exitUsage, "--expect-version")
			wantExit(t, "stale delete", tandem(t, dsn, "delete", "product", id, "--expect-version", "1"), exitConflict, "version 2")
			wantExit(t, "delete as system", tandem(t, dsn, "--as", "system", "delete", "product", id, "--expect-version", "2"), exitForbidden, "editor")
			wantExit(t, "delete of a missing record", tandem(t, dsn, "delete", "product", "999", "--expect-version", "1"), exitNotFound)
			l := mustLeaseJSON(t, strings.TrimSpace(mustTandem(t, dsn, "--user", "bob", "lease", "acquire", "product", id, "--ttl", "1m")))
			wantExit(t, "delete under bob's lease", tandem(t, dsn, "delete", "product", id, "--expect-version", "2"), exitLease, "bob")
			mustTandem(t, dsn, "--user", "bob", "lease", "release", l.Token)
			if got := mustGet(t, dsn, "product", p.ID); got.Version != 2 {
				t.Fatalf("after refused deletes product is at v%d, want 2", got.Version)
			}

			out := mustTandem(t, dsn, "delete", "product", id, "--expect-version", "2", "--key", "k1")
			if !strings.Contains(out, "deleted product "+id) || !strings.Contains(out, "tombstone version 3") {
				t.Errorf("delete said %q", out)
			}
			if again := mustTandem(t, dsn, "delete", "product", id, "--expect-version", "2", "--key", "k1"); !strings.Contains(again, "already applied") {
				t.Errorf("keyed retry said %q, want already applied", again)
			}
			wantExit(t, "get a deleted product", tandem(t, dsn, "get", "product", id), exitNotFound)
			if n := countRecords(t, dsn, "product"); n != 1 {
				t.Errorf("list holds %d products after the delete, want 1 (%d)", n, other.ID)
			}
			hist := mustTandem(t, dsn, "history", "product", id)
			if !strings.Contains(hist, "v3") || !strings.Contains(hist, "deleted (tandem restore product "+id) {
				t.Errorf("history does not show the tombstone:\n%s", hist)
			}
			var hj struct {
				Versions []struct {
					Version  int64          `json:"version"`
					Event    string         `json:"event"`
					Snapshot map[string]any `json:"snapshot"`
				} `json:"versions"`
			}
			if err := json.Unmarshal([]byte(mustTandem(t, dsn, "history", "product", id, "--json")), &hj); err != nil {
				t.Fatal(err)
			}
			if len(hj.Versions) == 0 || hj.Versions[0].Event != "deleted" || hj.Versions[0].Snapshot["name"] != "Brass lamp" {
				t.Errorf("history --json newest = %+v, want the tombstone holding name Brass lamp", hj.Versions)
			}

			out = mustTandem(t, dsn, "restore", "product", id)
			if !strings.Contains(out, "restored product "+id+": version 4") {
				t.Errorf("restore said %q", out)
			}
			got := mustGet(t, dsn, "product", p.ID)
			if got.Version != 4 || got.Fields["name"] != "Brass lamp" || got.Fields["sku"] != "DEL-1" || got.Fields["price"] != "12.50" || got.UpdatedBy != "tester" {
				t.Errorf("restored = %+v, want v4 with the values it was deleted with", got)
			}
			wantExit(t, "restore of a record that exists", tandem(t, dsn, "restore", "product", id), exitUsage, "not deleted")
			wantExit(t, "restore of a record never deleted", tandem(t, dsn, "restore", "product", "999"), exitNotFound)
			wantExit(t, "restore as system", tandem(t, dsn, "--as", "system", "restore", "product", fmt.Sprint(other.ID)), exitForbidden)
			// A restore whose sku another product took meanwhile is refused and restores nothing.
			mustTandem(t, dsn, "delete", "product", fmt.Sprint(other.ID), "--expect-version", "1")
			taker := mustCreate(t, dsn, "product", "sku=keep-1", "name=Taker")
			wantExit(t, "restore of a taken sku", tandem(t, dsn, "restore", "product", fmt.Sprint(other.ID)), exitUsage,
				"sku KEEP-1 already exists", fmt.Sprintf("product %d has keep-1", taker.ID))
			wantExit(t, "get the product whose restore was refused", tandem(t, dsn, "get", "product", fmt.Sprint(other.ID)), exitNotFound)

			// Documents: children are refused without --subtree, deleted with it.
			root := mustCreate(t, dsn, "document", "title=Root")
			child := mustCreate(t, dsn, "document", "title=Child", fmt.Sprintf("parent_id=%d", root.ID))
			wantExit(t, "delete a document with children", tandem(t, dsn, "delete", "document", fmt.Sprint(root.ID), "--expect-version", "1"),
				exitUsage, "1 child", "--subtree")
			var dj struct {
				Deleted []jsonTombstone `json:"deleted"`
			}
			out = mustTandem(t, dsn, "delete", "document", fmt.Sprint(root.ID), "--expect-version", "1", "--subtree", "--json")
			if err := json.Unmarshal([]byte(out), &dj); err != nil || len(dj.Deleted) != 2 || dj.Deleted[0].ID != root.ID || dj.Deleted[1].ID != child.ID {
				t.Errorf("delete --subtree --json = %s (%v), want root then child", out, err)
			}
			wantExit(t, "get the deleted child", tandem(t, dsn, "get", "document", fmt.Sprint(child.ID)), exitNotFound)
			r := tandem(t, dsn, "restore", "document", fmt.Sprint(child.ID))
			wantExit(t, "restore a child whose parent is gone", r, exitOK, "no longer exists", "root")
			if got := mustGet(t, dsn, "document", child.ID); got.Fields["parent_id"] != nil {
				t.Errorf("child restored under %v, want the root", got.Fields["parent_id"])
			}
		})
	}
}

// TestCLI_DeleteRestoreConcurrent: in each round, processes of the binary race to delete one
// product at the version they read (one wins, the others exit 3 or 5), then race to restore
// it (one wins, the others exit 2: it is back). The product ends at version 1 + 2 × rounds,
// with a tombstone and a restore in history per round.
func TestCLI_DeleteRestoreConcurrent(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			const procs, rounds = 4, 3
			p := mustCreate(t, dsn, "product", "sku=RACE-1", "name=Race")
			id := fmt.Sprint(p.ID)
			race := func(args ...string) (wins int, codes []int, outs []string) {
				cmds := make([]*exec.Cmd, procs)
				bufs := make([]*bytes.Buffer, procs)
				for i := range cmds {
					cmds[i] = tandemCmd(dsn, args...)
					bufs[i] = new(bytes.Buffer)
					cmds[i].Stdout, cmds[i].Stderr = bufs[i], bufs[i]
					if err := cmds[i].Start(); err != nil {
						t.Fatal(err)
					}
				}
				for i, c := range cmds {
					if err := c.Wait(); err == nil {
						wins++
					}
					codes = append(codes, c.ProcessState.ExitCode())
					outs = append(outs, bufs[i].String())
				}
				return wins, codes, outs
			}
			version := p.Version
			for round := range rounds {
				wins, codes, outs := race("delete", "product", id, "--expect-version", fmt.Sprint(version))
				if wins != 1 {
					t.Fatalf("round %d: %d deletes won (exits %v, %q), want 1", round, wins, codes, outs)
				}
				for i, c := range codes {
					if c != 0 && c != exitConflict && c != exitNotFound {
						t.Errorf("round %d delete %d: exit %d: %s", round, i, c, outs[i])
					}
				}
				wins, codes, outs = race("restore", "product", id)
				if wins != 1 {
					t.Fatalf("round %d: %d restores won (exits %v, %q), want 1", round, wins, codes, outs)
				}
				for i, c := range codes {
					if c != 0 && (c != exitUsage || !strings.Contains(outs[i], "not deleted")) {
						t.Errorf("round %d restore %d: exit %d: %s", round, i, c, outs[i])
					}
				}
				version += 2
				if got := mustGet(t, dsn, "product", p.ID); got.Version != version || got.Fields["name"] != "Race" {
					t.Fatalf("round %d: product at v%d named %v, want v%d named Race", round, got.Version, got.Fields["name"], version)
				}
			}
			if n := historyLen(t, dsn, "product", p.ID); n != 1+2*rounds {
				t.Errorf("history holds %d versions, want %d", n, 1+2*rounds)
			}
		})
	}
}

// TestCLI_RefusalNamesFlag: store/ says the way out of a refusal in words, and the CLI adds
// its flag: a document with children names --subtree, a system's delete names --as editor.
func TestCLI_RefusalNamesFlag(t *testing.T) {
	dsn := madeStore(t, "seed")
	r := tandem(t, dsn, "delete", "document", "1", "--expect-version", "1")
	wantExit(t, "delete of a document with children", r, exitUsage, "delete the subtree with it (--subtree)")
	r = tandem(t, dsn, "--as", "system", "delete", "product", "1", "--expect-version", "1")
	wantExit(t, "delete as system", r, exitForbidden, "run it as an editor (--as editor)")
	r = tandem(t, dsn, "--as", "system", "set", "product", "1", "name=x", "--expect-version", "1")
	wantExit(t, "system writes an editor field", r, exitForbidden, "run it as an editor (--as editor)")
}
