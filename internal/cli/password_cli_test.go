package cli

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// TestPassword_NeverShownNorKept runs init, --version (text and JSON), a command on a DSN
// the driver cannot parse, clone, status (text and JSON) and sync as processes of the
// binary, with the password written in each of the ways libpq and URLs allow: escaped
// (pass\ wordTAIL), quoted with an escaped quote ('it\'s horse battery'), holding an '@', and
// a word that tandem's and the driver's messages use (syntax). Each scenario runs twice, with
// the password and without it (the test server trusts everyone): no output, and nothing in
// the working copy's file (every table, by sqlite3 .dump), holds a piece of the password of
// three characters or more that the same step without the password does not show too. The
// copy keeps its source without the password, and sync takes it from PGPASSWORD.
func TestPassword_NeverShownNorKept(t *testing.T) {
	besideOthers(t)
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 is not installed: the working copy's file cannot be read outside tandem")
	}
	base := pgtest.DSN(t)
	cfg, err := pgconn.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	kv := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable search_path=%s",
		cfg.Host, cfg.Port, cfg.User, cfg.Database, cfg.RuntimeParams["search_path"])
	u := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable&search_path=%s",
		cfg.User, cfg.Host, cfg.Port, cfg.Database, url.QueryEscape(cfg.RuntimeParams["search_path"]))
	withURLPassword := func(pw string) string {
		return strings.Replace(u, cfg.User+"@", url.UserPassword(cfg.User, pw).String()+"@", 1)
	}
	for _, c := range []struct {
		name, with, without, password, spelled string
	}{
		{"KeywordEscaped", kv + ` password=pass\ wordTAIL`, kv, "pass wordTAIL", `pass\ wordTAIL`},
		{"KeywordQuoted", `password='it\'s horse battery' ` + kv, kv, "it's horse battery", `'it\'s horse battery'`},
		{"KeywordAt", kv + " password=sec@ret", kv, "sec@ret", "sec@ret"},
		{"KeywordWordOfMessages", kv + " password=syntax", kv, "syntax", "syntax"},
		{"URLAt", withURLPassword("sec@ret"), u, "sec@ret", "sec%40ret"},
		{"URLWordOfMessages", withURLPassword("syntax"), u, "syntax", "syntax"},
		{"URLQuery", u + "&password=it%27s+horse+battery", u, "it's horse battery", "it%27s+horse+battery"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := passwordScenario(t, c.with, c.password)
			want := passwordScenario(t, c.without, "")
			pieces := passwordPieces(c.password, c.spelled)
			for _, step := range slices.Sorted(func(yield func(string) bool) {
				for k := range got {
					if !yield(k) {
						return
					}
				}
			}) {
				for _, p := range pieces {
					if strings.Contains(got[step], p) && !strings.Contains(want[step], p) {
						t.Errorf("%s shows %q, a piece of the password:\n%s", step, p, got[step])
						break
					}
				}
			}
			if got["stored source"] != want["stored source"] {
				t.Errorf("the copy keeps its source as %q, want %q (the same string given without a password)",
					got["stored source"], want["stored source"])
			}
		})
	}
}

// passwordScenario runs the steps of TestPassword_NeverShownNorKept against dsn and returns
// what each showed (stdout and stderr) by step name, and the working copy's file as sqlite3
// dumps it. password is given to sync in PGPASSWORD.
func passwordScenario(t *testing.T, dsn, password string) map[string]string {
	t.Helper()
	out := map[string]string{}
	run := func(step string, wantCode int, env []string, args ...string) {
		t.Helper()
		cmd := tandemCmd(dsn, args...)
		cmd.Env = append(cmd.Env, env...)
		r := runResult(t, cmd, args)
		if r.code != wantCode {
			t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", step, r.code, wantCode, r.stdout, r.stderr)
		}
		out[step] = r.stdout + r.stderr
	}
	run("init", 0, nil, "--db", dsn, "init")
	run("--version", 0, nil, "--db", dsn, "--version")
	run("--version --json", 0, nil, "--db", dsn, "--version", "--json")
	bad := strings.Replace(dsn, "port=", "port=notaport", 1)
	if bad == dsn {
		bad = strings.Replace(dsn, ":5432/", ":notaport/", 1)
	}
	if bad == dsn {
		t.Fatalf("cannot make %q unparsable", dsn)
	}
	run("list with an unparsable DSN", 2, nil, "--db", bad, "list", "products")
	run("clone with an unparsable DSN", 2, nil, "clone", bad, filepath.Join(t.TempDir(), "bad.db"))
	copyDB := filepath.Join(t.TempDir(), "copy.db")
	run("clone", 0, nil, "clone", dsn, copyDB)
	run("status", 0, nil, "--db", copyDB, "status")
	run("status --json", 0, nil, "--db", copyDB, "status", "--json")
	run("sync", 0, []string{"PGPASSWORD=" + password}, "--db", copyDB, "sync")
	dump, err := exec.Command("sqlite3", copyDB, ".dump").CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 .dump: %v\n%s", err, dump)
	}
	out["the copy's file"] = string(dump)
	src, err := exec.Command("sqlite3", copyDB, "SELECT source FROM wc_meta").CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 wc_meta: %v\n%s", err, src)
	}
	out["stored source"] = strings.TrimSpace(string(src))
	return out
}

// passwordPieces returns every piece of three characters or more of the password and of
// its spelling in the DSN.
func passwordPieces(password, spelled string) []string {
	var out []string
	for _, s := range []string{password, spelled} {
		for i := range len(s) {
			for j := i + 3; j <= len(s); j++ {
				out = append(out, s[i:j])
			}
		}
	}
	return out
}

// TestSync_PasswordFromEnvironmentFileOrTerminal: a working copy keeps no password, so a
// server that asks for one gets the one in PGPASSWORD, else the one in the password file
// PGPASSFILE names; with neither, the one typed on the terminal (not echoed), and with no
// terminal to ask on, sync says what to set (exit 1). The server here is a stand-in that asks for a password and
// records what it receives (pgtest.PasswordServer): the test server trusts everyone.
func TestSync_PasswordFromEnvironmentFileOrTerminal(t *testing.T) {
	dsn := pgtest.DSN(t)
	copyDB := filepath.Join(t.TempDir(), "copy.db")
	mustTandem(t, dsn, "clone", dsn, copyDB)
	port, received := pgtest.PasswordServer(t)
	asking := fmt.Sprintf("host=127.0.0.1 port=%d user=alice dbname=team sslmode=disable connect_timeout=5", port)
	none := filepath.Join(t.TempDir(), "no-pgpass")
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, fmt.Appendf(nil, "127.0.0.1:%d:team:alice:from the file\n", port), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  []string
		want string // the password the server received; "" for none asked
	}{
		{"Missing", []string{"PGPASSWORD=", "PGPASSFILE=" + none}, ""},
		{"FromEnvironment", []string{"PGPASSWORD=from the environment", "PGPASSFILE=" + passfile}, "from the environment"},
		{"FromFile", []string{"PGPASSWORD=", "PGPASSFILE=" + passfile}, "from the file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(received())
			cmd := tandemCmd(copyDB, "sync", "--source", asking)
			cmd.Env = append(cmd.Env, c.env...)
			r := runResult(t, cmd, nil)
			if r.code != 1 {
				t.Fatalf("sync against a server that refuses the password: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			got := received()[before:]
			if len(got) == 0 || got[len(got)-1] != c.want {
				t.Errorf("the server received %q, want %q last", got, c.want)
			}
			if c.want == "" {
				for _, w := range []string{"asks for a password", "PGPASSWORD", "PGPASSFILE", "terminal"} {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("sync without a password: stderr does not say %q:\n%s", w, r.stderr)
					}
				}
			}
		})
	}
	// In a terminal, with neither, sync asks for the password and does not echo it.
	t.Run("FromTerminal", func(t *testing.T) {
		tm := newTmuxServer(t)
		before := len(received())
		tm.start("sync", fmt.Sprintf("env TANDEM_USER=tester PGPASSWORD= PGPASSFILE=%s %s --db %s sync --source '%s'; echo EXIT=$?; sleep 60",
			none, binary, copyDB, asking))
		tm.waitFor("sync", fmt.Sprintf("password for alice@127.0.0.1:%d/team:", port))
		tm.text("sync", "typed secret")
		tm.keys("sync", "Enter")
		scr := tm.waitFor("sync", "EXIT=1")
		if strings.Contains(scr, "typed secret") {
			t.Errorf("the terminal shows the typed password:\n%s", scr)
		}
		if got := received()[before:]; len(got) == 0 || got[len(got)-1] != "typed secret" {
			t.Errorf("the server received %q, want the typed password last", got)
		}
	})
}
