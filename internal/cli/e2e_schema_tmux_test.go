package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// guideSchema returns the schema file the guide docs/own-records.md shows: its first yaml
// block, so this test follows what the guide tells people.
func guideSchema(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "own-records.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "```yaml\n")
	if !ok {
		t.Fatal("docs/own-records.md shows no yaml block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal("docs/own-records.md's yaml block does not end")
	}
	return block
}

// getRecord runs `tandem get KIND ID --json` and returns its version and fields.
func getRecord(t *testing.T, dsn, kind, id string) (int64, map[string]any) {
	t.Helper()
	var got struct {
		Version int64          `json:"version"`
		Fields  map[string]any `json:"fields"`
	}
	out := mustTandem(t, dsn, "get", kind, id, "--json")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("get --json: %v\n%s", err, out)
	}
	return got.Version, got.Fields
}

// waitScreen polls the session's screen until ok holds, or fails after a deadline.
func (s *tmuxServer) waitScreen(name, what string, ok func(string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		scr := s.screen(name)
		if ok(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s's terminal never showed %s; it shows:\n%s", name, what, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2E_OwnRecords drives the guide "Your own records" (docs/own-records.md) in real
// terminals: the guide's schema file, `init --schema`, the TUI opened on it by alice and
// bob; both edit the same supplier, alice's save gets the conflict dialog and is resolved in the merge
// view; alice picks a part's supplier with the reference picker and moves an area in the
// tree; then `schema apply` adds a field and a kind while bob's TUI is open on a supplier
// with unsaved edits, and his TUI shows them without a restart.
// It runs on SQLite, and on PostgreSQL when TANDEM_TEST_POSTGRES names a server.
func TestE2E_OwnRecords(t *testing.T) {
	waitsBeside(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dir := t.TempDir()
			dsn := filepath.Join(dir, "parts.db")
			if b.name != "sqlite" {
				dsn = b.dsn(t) // an empty schema of its own
			}
			ownRecords(t, dir, dsn)
		})
	}
}

func ownRecords(t *testing.T, dir, dsn string) {
	tm := newTmuxServer(t)
	schema := filepath.Join(dir, "parts.yaml")
	yaml := guideSchema(t)
	if err := os.WriteFile(schema, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustTandem(t, dsn, "init", "--schema", schema); !strings.Contains(out, "supplier, part and area") {
		t.Fatalf("init --schema said %q", out)
	}
	mustTandem(t, dsn, "create", "supplier", "code=ACME", "name=Acme Tools")
	mustTandem(t, dsn, "create", "supplier", "code=BOLT", "name=Bolt Brothers")
	mustTandem(t, dsn, "create", "part", "label=Hex bolt")
	mustTandem(t, dsn, "create", "area", "name=North")
	mustTandem(t, dsn, "create", "area", "name=South")

	tui := func(user string) string {
		return fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db '%s' --user %s",
			filepath.Join(dir, "cache-"+user), binary, dsn, user)
	}
	tm.start("alice", tui("alice"))
	tm.start("bob", tui("bob"))
	for _, who := range []string{"alice", "bob"} {
		tm.waitFor(who, "[ suppliers ]", "parts", "areas", "Acme Tools", "Bolt Brothers")
		tm.keys(who, "Enter") // the cursor starts on supplier 1
		tm.waitFor(who, "supplier 1 · v1", "▸ code")
	}

	// Bob renames the supplier; alice, still on v1, renames it too and adds notes.
	tm.keys("bob", "Tab")
	tm.waitFor("bob", "▸ name")
	tm.keys("bob", "C-u")
	tm.text("bob", "Acme Tools GmbH")
	tm.keys("bob", "C-s")
	tm.waitFor("bob", "saved v2")
	tm.waitFor("alice", "bob saved v2 (name); you are editing v1")
	tm.keys("alice", "Tab")
	tm.waitFor("alice", "▸ name")
	tm.keys("alice", "C-u")
	tm.text("alice", "Acme Tooling")
	tm.keys("alice", "Tab", "Tab")
	tm.waitFor("alice", "▸ notes")
	tm.text("alice", "Ships on Fridays.")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "supplier 1 changed while you were editing", "collide:      name", "m  merge field by field")
	tm.keys("alice", "m")
	tm.waitFor("alice", "merge supplier 1", "1 of 1 conflict left", "1 mine   Acme Tooling", "2 theirs Acme Tools GmbH")
	tm.keys("alice", "1")
	tm.waitFor("alice", "0 of 1 conflict left")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "merged with bob's v2; saved v3")
	tm.waitFor("bob", "alice saved v3")

	v, f := getRecord(t, dsn, "supplier", "1")
	if v != 3 || f["name"] != "Acme Tooling" || !strings.Contains(fmt.Sprint(f["notes"]), "Ships on Fridays.") || f["code"] != "ACME" {
		t.Errorf("supplier 1 after the merge = v%d %v; want v3, alice's name and notes, the code kept", v, f)
	}
	hist := mustTandem(t, dsn, "history", "supplier", "1")
	for _, want := range []string{"v3", "alice", "v2", "bob"} {
		if !strings.Contains(hist, want) {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}

	// Alice picks the part's supplier with ctrl+o, searching by the supplier's name.
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ suppliers ]")
	tm.keys("alice", "Tab")
	tm.waitFor("alice", "[ parts ]", "Hex bolt")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "part 1 · v1", "▸ label")
	tm.keys("alice", "Tab")
	tm.waitFor("alice", "▸ supplier", "ctrl+o pick supplier")
	tm.keys("alice", "C-o")
	tm.waitFor("alice", "pick a supplier  ", "1 · Acme Tooling", "2 · Bolt Brothers")
	tm.text("alice", "brothers")
	tm.waitScreen("alice", "only Bolt Brothers in the picker", func(s string) bool {
		return strings.Contains(s, "▸ 2 · Bolt Brothers") && !strings.Contains(s, "Acme Tooling")
	})
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "supplier: supplier 2 · Bolt Brothers")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "saved v2")
	if v, f := getRecord(t, dsn, "part", "1"); v != 2 || f["supplier"] != float64(2) {
		t.Errorf("part 1 after the pick = v%d %v; want v2 with supplier 2", v, f)
	}

	// Alice moves South under North in the areas tree.
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ parts ]")
	tm.keys("alice", "Tab")
	tm.waitFor("alice", "[ areas ]", "North", "South")
	tm.keys("alice", "j", "Enter")
	tm.waitFor("alice", "area 2 · v1")
	tm.keys("alice", "C-o")
	tm.waitFor("alice", "move area 2", "(this area)")
	tm.keys("alice", "j")
	tm.waitFor("alice", "▸ 1 · North")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "moved under 1 · North")
	if _, f := getRecord(t, dsn, "area", "2"); f["parent_id"] != float64(1) {
		t.Errorf("area 2 after the move = %v; want parent_id 1", f)
	}
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ areas ]", "[-] North")

	// Bob opens the supplier again (v3) and starts typing; meanwhile the schema gains a
	// country on suppliers and a warehouse kind. His TUI shows both without a restart and
	// keeps what he typed.
	tm.keys("bob", "Escape")
	tm.waitFor("bob", "[ suppliers ]")
	tm.keys("bob", "Enter")
	tm.waitFor("bob", "supplier 1 · v3", "▸ code")
	tm.keys("bob", "Tab")
	tm.waitFor("bob", "▸ name")
	tm.keys("bob", "C-u")
	tm.text("bob", "Acme Tooling AG")
	notes := "      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n"
	if !strings.Contains(yaml, notes) {
		t.Fatalf("the guide's schema has no line %q", notes)
	}
	next := strings.Replace(yaml, notes, notes+"      - {name: country, type: string, owner: editor, rule: scalar, default: NL}\n", 1) +
		"  warehouse:\n    title: city\n    fields:\n      - {name: city, type: string, owner: editor, rule: scalar, required: true}\n"
	if err := os.WriteFile(schema, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	mustTandem(t, dsn, "schema", "apply", schema)
	tm.waitFor("bob", "the schema changed (version 2)", "country", "NL", "Acme Tooling AG")
	tm.keys("bob", "C-s")
	tm.waitFor("bob", "saved v4")
	if v, f := getRecord(t, dsn, "supplier", "1"); v != 4 || f["name"] != "Acme Tooling AG" || f["country"] != "NL" {
		t.Errorf("supplier 1 after bob's save = v%d %v; want v4, bob's name, country NL", v, f)
	}
	tm.waitFor("alice", "warehouses")
	tm.keys("bob", "Escape")
	tm.run("resize-window", "-t", "bob", "-x", "160", "-y", "30")
	tm.waitFor("bob", "[ suppliers ]", "country")

	tm.keys("alice", "q")
	tm.keys("bob", "q")
}
