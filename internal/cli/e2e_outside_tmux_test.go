package cli

import (
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestE2E_OutsideWrites: another program (a real sqlite3 or psql process) writes the rows
// of a kind of the store's own schema while a person holds one of them open in the TUI in
// a real terminal. The editor says who wrote what; the person's stale save gets the
// conflict dialog and is merged in the merge view; history names the writer ("outside" on
// SQLite, the database role on PostgreSQL); a row the program inserts appears in the list
// with its version, and one it updates shows its new values there; a record it deletes
// shows deleted in the open editor; a delete of a record that others refer to is refused;
// values outside the schema and control characters are shown marked and escaped.
func TestE2E_OutsideWrites(t *testing.T) {
	waitsBeside(t)
	parts, err := filepath.Abs("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			var dsn string
			var sql func(string) error
			var who string
			switch b.name {
			case "sqlite":
				dsn = filepath.Join(t.TempDir(), "parts.db")
				sql, who = sqlite3Writer(t, dsn), "outside"
			default:
				dsn = b.dsn(t)
				sql, who = psqlWriter(t, dsn)
			}
			mustTandem(t, dsn, "init", "--schema", parts)
			esc := "char(27)"
			if b.name != "sqlite" {
				esc = "chr(27)"
			}
			e2eOutsideWrites(t, dsn, sql, who, esc)
		})
	}
}

// sqlite3Writer returns a function that runs SQL in a sqlite3 process on the file path.
func sqlite3Writer(t *testing.T, path string) func(string) error {
	t.Helper()
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to write the store as another program")
	}
	return func(sql string) error {
		if out, err := exec.Command(cli, "-bail", "-cmd", ".timeout 10000", path, sql).CombinedOutput(); err != nil {
			return fmt.Errorf("sqlite3: %v: %s", err, out)
		}
		return nil
	}
}

// psqlWriter returns a function that runs SQL in a psql process in the schema of dsn (a
// test DSN whose search_path names it, which psql does not read), and the role it writes
// as.
func psqlWriter(t *testing.T, dsn string) (func(string) error, string) {
	t.Helper()
	cli, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("no psql command to write the store as another program")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	schema := q.Get("search_path")
	q.Del("search_path")
	u.RawQuery = q.Encode()
	server := u.String()
	out, err := exec.Command(cli, server, "-Atc", "SELECT session_user").Output()
	if err != nil {
		t.Fatalf("psql: %v", err)
	}
	run := func(sql string) error {
		script := `SET search_path TO "` + schema + `";` + "\n" + sql
		if out, err := exec.Command(cli, server, "-v", "ON_ERROR_STOP=1", "-c", script).CombinedOutput(); err != nil {
			return fmt.Errorf("psql: %v: %s", err, out)
		}
		return nil
	}
	return run, strings.TrimSpace(string(out))
}

// e2eOutsideWrites runs the test on the store dsn; sql runs SQL in another program, who is
// the name history gives that program, esc is the SQL for the character ESC.
func e2eOutsideWrites(t *testing.T, dsn string, sql func(string) error, who, esc string) {
	must := func(q string) {
		t.Helper()
		if err := sql(q); err != nil {
			t.Fatal(err)
		}
	}
	mustTandem(t, dsn, "--user", "carol", "create", "supplier", "code=ACME", "name=Acme")
	mustTandem(t, dsn, "--user", "carol", "create", "part", "label=Bolt", "supplier=1")

	tm := newTmuxServer(t)
	dir := t.TempDir()
	tm.start("alice", fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db '%s' --user alice",
		filepath.Join(dir, "cache"), binary, dsn))
	tm.waitFor("alice", "[ suppliers ]", "Acme", "1 of 1")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "supplier 1 · v1")

	// The other program renames the supplier; the open editor says so.
	must("UPDATE suppliers SET name = 'Acme Outside' WHERE id = 1")
	captures := map[string]string{}
	captures["banner"] = tm.waitFor("alice", who+" saved v2 (name); you are editing v1")

	// Alice, still on v1, renames it too: the conflict dialog, then the merge view.
	tm.keys("alice", "Tab")
	tm.waitFor("alice", "▸ name")
	tm.keys("alice", "C-u")
	tm.text("alice", "Acme Alice")
	tm.keys("alice", "C-s")
	captures["conflict"] = tm.waitFor("alice", who+" saved v2; you edited v1", "collide:      name", "m  merge field by field")
	tm.keys("alice", "m")
	captures["merge"] = tm.waitFor("alice", "1 of 1 conflict left", "1 mine   Acme Alice", "2 theirs Acme Outside")
	tm.keys("alice", "1")
	tm.waitFor("alice", "0 of 1 conflict left")
	tm.keys("alice", "C-s")
	captures["saved"] = tm.waitFor("alice", "merged with "+who+"'s v2; saved v3")
	for _, name := range []string{"banner", "conflict", "merge", "saved"} {
		t.Logf("%s:\n%s", name, captures[name])
	}
	if got := mustGet(t, dsn, "supplier", 1); got.Version != 3 || got.Fields["name"] != "Acme Alice" || got.UpdatedBy != "alice" {
		t.Errorf("supplier 1 = v%d %v by %s, want v3 Acme Alice by alice", got.Version, got.Fields["name"], got.UpdatedBy)
	}
	hist := mustTandem(t, dsn, "history", "supplier", "1")
	if !regexp.MustCompile(`(?m)^\s+v2\s+\S+ \S+\s+` + regexp.QuoteMeta(who) + `\s+name$`).MatchString(hist) {
		t.Errorf("history does not name %s as the writer of v2 (name):\n%s", who, hist)
	}

	// A row the program inserts appears in the list, with its version.
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ suppliers ]", "Acme Alice")
	must("INSERT INTO suppliers (code, name, updated_at, updated_by) VALUES ('NEW', 'Newco', '2026-01-01T00:00:00Z', 'script')")
	row := regexp.MustCompile(`(?m)^\s+\d+ Newco\s+NEW\s+0\s+v1 script`)
	scr := tm.waitFor("alice", "Newco", "1 of 2")
	if !row.MatchString(scr) {
		t.Errorf("the inserted row is not listed with v1 by script:\n%s", scr)
	}

	// An update the program makes shows in the list's row: value, version and writer.
	must("UPDATE suppliers SET rating = 7 WHERE id = 1")
	scr = tm.waitFor("alice", "v4 "+who)
	if !regexp.MustCompile(`(?m)^\S*\s+1 Acme Alice\s+ACME\s+7\s+v4 ` + regexp.QuoteMeta(who)).MatchString(scr) {
		t.Errorf("the updated row is not listed with rating 7, v4 by %s:\n%s", who, scr)
	}

	// The program deletes the record alice has open: the editor shows it deleted.
	tm.keys("alice", "/")
	tm.text("alice", "Newco")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "1 of 1 matching")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", " · v1", "Newco")
	must("DELETE FROM suppliers WHERE code = 'NEW'")
	t.Logf("deleted:\n%s", tm.waitFor("alice", "deleted by "+who+" (v2)"))

	// A supplier that a part refers to is not deleted by the program either.
	err := sql("DELETE FROM suppliers WHERE id = 1")
	if err == nil || !strings.Contains(err.Error(), "part") {
		t.Errorf("outside delete of a referenced supplier: %v, want it refused naming the parts", err)
	}
	if got := mustGet(t, dsn, "supplier", 1); got.Version != 4 {
		t.Errorf("supplier 1 after the refused delete: v%d, want v4", got.Version)
	}
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ suppliers ]")
	e2eOutsideOffSchema(t, tm, must, esc)
	tm.keys("alice", "q")
}

// e2eOutsideOffSchema: values of the right type that the schema refuses, and control
// characters, written by the program into rows the TUI shows (alice's terminal, at the
// suppliers' list). The TUI shows them escaped and marked, a save of another field goes
// through, and a save of a value outside the schema says which field and why.
func e2eOutsideOffSchema(t *testing.T, tm *tmuxServer, must func(string), esc string) {
	must("UPDATE suppliers SET notes = 'fine' || " + esc + " || ']0;pwned' || " + esc + " || '\\' || " + esc + " || '[2J' WHERE id = 1")
	must("UPDATE parts SET status = 'bogus' WHERE id = 1")
	tm.keys("alice", "/", "C-u", "Enter") // no filter
	tm.waitFor("alice", "Acme Alice", "1 of 1")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "supplier 1 · v5", `notes          fine\x1b]0;pwned`, "read-only: control characters")
	if title := tm.run("display-message", "-p", "-t", "alice", "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("the terminal's title became %q: a control sequence from the database reached the terminal", title)
	}
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ suppliers ]")
	tm.keys("alice", "Tab")
	tm.waitFor("alice", "[ parts ]", "bogus")
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "part 1 · v2", `status         bogus · stored value: "bogus" is not one of draft, active, retired`)
	tm.keys("alice", "C-u")
	tm.text("alice", "Bolt M4")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "saved v3")
	tm.keys("alice", "Tab", "Tab")
	tm.waitFor("alice", "▸ status")
	tm.keys("alice", "C-u")
	tm.text("alice", "gone")
	tm.keys("alice", "C-s")
	t.Logf("a value outside the schema saved:\n%s", tm.waitFor("alice", `status: "gone" is not one of draft, active, retired`))
	tm.keys("alice", "C-u")
	tm.text("alice", "active")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "saved v4")
	tm.keys("alice", "Escape")
	tm.waitFor("alice", "[ parts ]", "active")
}
