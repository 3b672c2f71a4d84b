package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// noJSON are the commands that print but have no --json, and why.
var noJSON = map[string]string{
	"tandem":                "the TUI (--version --json is its printing form)",
	"tandem merge-file":     "writes the merged file, with git merge-file's options and exit codes",
	"tandem lease":          "a group of subcommands",
	"tandem bench":          "a group of subcommands",
	"tandem schema":         "a group of subcommands",
	"tandem bench writer":   "a worker process of bench contention --procs, speaking JSON already",
	"tandem torture":        "prints its report as it runs; the exit code is the result",
	"tandem torture worker": "a worker process of torture, which reads its output",
	"tandem worker":         "logs to stderr; prints one summary line",
}

// TestCLI_EveryCommandAcceptsJSON walks the command tree: every command that prints accepts
// --json, except the few listed in noJSON with their reason.
func TestCLI_EveryCommandAcceptsJSON(t *testing.T) {
	a := &app{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		_, excused := noJSON[path]
		has := c.Flags().Lookup("json") != nil || c.LocalFlags().Lookup("json") != nil
		switch {
		case !has && !excused:
			t.Errorf("%s has no --json", path)
		case has && excused && path != "tandem":
			t.Errorf("%s has --json now: remove it from noJSON", path)
		}
		for _, sub := range c.Commands() {
			if sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub)
			}
		}
	}
	walk(newRootCmd(a))
}

// TestCLI_EveryCommandHasAnExample walks the command tree: every command's --help shows
// an example (docs/commands.md: every command has one), and each example runs that command. Hidden
// commands (the worker processes of bench and torture) are not for people.
func TestCLI_EveryCommandHasAnExample(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		if !c.Hidden && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no example in --help", path)
		}
		for _, line := range strings.Split(c.Example, "\n") {
			if line = strings.TrimSpace(line); line != "" && !runs(line, path) {
				t.Errorf("%s: example %q does not run %s", path, line, path)
			}
		}
		for _, sub := range c.Commands() {
			if sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub)
			}
		}
	}
	walk(newRootCmd(&app{}))
}

// runs reports whether the example command line holds the words of the command path in
// order (global flags and environment variables may come between them).
func runs(line, path string) bool {
	want := strings.Fields(path)
	for _, w := range strings.Fields(line) {
		if len(want) > 0 && w == want[0] {
			want = want[1:]
		}
	}
	return len(want) == 0
}

// TestCLI_LeaseAcquireJSON: lease acquire --json was refused although it prints JSON.
func TestCLI_LeaseAcquireJSON(t *testing.T) {
	dsn := newSQLiteStore(t)
	mustCreate(t, dsn, "product", "sku=J-1", "name=Jay", "price=1")
	var l jsonLease
	out := mustTandem(t, dsn, "lease", "acquire", "product", "1", "--json")
	if err := json.Unmarshal([]byte(out), &l); err != nil || l.Token == "" {
		t.Fatalf("lease acquire --json: %v\n%s", err, out)
	}
	var rel struct{ Released bool }
	out = mustTandem(t, dsn, "lease", "release", l.Token, "--json")
	if err := json.Unmarshal([]byte(out), &rel); err != nil || !rel.Released {
		t.Fatalf("lease release --json: %v\n%s", err, out)
	}
}

// TestCLI_VersionOfStore: --version names the schema version this tandem writes on each
// backend (their migrations are numbered apart) and the schema version of the store --db
// names, so that an up-to-date store of either backend says so.
func TestCLI_VersionOfStore(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			var v struct {
				SchemaVersion  int            `json:"schema_version"`
				SchemaVersions map[string]int `json:"schema_versions"`
				Store          struct {
					DB            string `json:"db"`
					Backend       string `json:"backend"`
					SchemaVersion int    `json:"schema_version"`
					Error         string `json:"error"`
				} `json:"store"`
			}
			out := mustTandem(t, dsn, "--version", "--json")
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			latest := map[string]int{"sqlite": sqlite.LatestSchemaVersion(), "postgres": postgres.LatestSchemaVersion()}
			if v.Store.Backend != b.name || v.Store.SchemaVersion != latest[b.name] || v.SchemaVersion != latest[b.name] ||
				!maps.Equal(v.SchemaVersions, latest) || v.Store.Error != "" {
				t.Errorf("--version --json = %s, want the %s store at schema version %d, its latest, among %v", out, b.name, latest[b.name], latest)
			}
			text := mustTandem(t, dsn, "--version")
			first := fmt.Sprintf("(schema version: SQLite %d, PostgreSQL %d)\n", latest["sqlite"], latest["postgres"])
			store := fmt.Sprintf(": %s schema version %d (up to date)\n", backendNames[b.name], latest[b.name])
			if !strings.Contains(text, first) || !strings.HasSuffix(text, store) {
				t.Errorf("--version =\n%s\nwant %q and then %q", text, first, store)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	r := tandem(t, missing, "--version")
	if r.code != 0 || !strings.Contains(r.stdout, "not opened") || !strings.Contains(r.stdout, "schema version") {
		t.Errorf("--version without a store: exit %d\n%s", r.code, r.stdout)
	}
}

// TestBinaryDoesNotLinkTesting: the shipped binary does not import package testing (test
// helpers live in test-only packages such as store/postgres/pgtest).
func TestBinaryDoesNotLinkTesting(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/tandem-editor/tandem").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "testing" || strings.HasPrefix(p, "testing/") {
			t.Errorf("the tandem binary links %s", p)
		}
	}
}

// TestRun_FlushesOutput: Run buffers stdout and writes it all out before it returns.
func TestRun_FlushesOutput(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"export", "--help"}, nil, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "Usage:") {
		t.Fatalf("Run export --help: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
