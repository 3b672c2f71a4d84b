package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// This file holds the process tests of issue 10's CLI points: every read of user input is
// bounded (1), flag values that look like numbers stay flag values (4), every byte for a
// terminal is sanitised and JSON escapes what a terminal would obey (10). That merge-file
// writes like git (12) is merge-file's own test, in cmd_merge_file_test.go.

// memoryLimitKiB is the data segment limit (ulimit -d, in KiB) of the bounded-read tests: a
// regression that reads its input whole dies there, with a Go "fatal error", instead of
// taking the machine down. RLIMIT_DATA rather than ulimit -v: the Go runtime reserves much
// more address space than it uses, and a -v limit small enough to matter makes even a
// healthy run fail to start threads.
const memoryLimitKiB = 512 << 10

// endless is a reader that never ends: a pipe whose writer never stops.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "line\n"[i%5]
	}
	return len(p), nil
}

// tandemLimited runs tandem under memoryLimitKiB, with stdin from stdin (nil: none), and
// kills it if it has not ended after two minutes, which only a hang takes.
func tandemLimited(t *testing.T, dsn string, stdin io.Reader, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c",
		fmt.Sprintf(`ulimit -d %d || exit 99; exec "$0" "$@"`, memoryLimitKiB), binary}, args...)...)
	cmd.Env = tandemCmd(dsn).Env
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("tandem %s did not end: %s", strings.Join(args, " "), errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil && !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("run tandem %v: %v", args, err)
	}
	if code == 99 {
		t.Fatalf("ulimit -d %d failed: %s", memoryLimitKiB, errb.String())
	}
	return result{out.String(), errb.String(), code}
}

// TestHardening_BoundedReads feeds every kind of user input tandem reads (field=@path,
// stdin through @/dev/stdin, --fields, merge-file's inputs) from a source that never ends,
// under a memory limit: each stops at its limit and exits with the message naming it. A
// seed count far over the maximum is refused before a store is even created.
func TestHardening_BoundedReads(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "tandem.db")
	madeStoreAt(t, dsn, "seed", "--products", "1", "--documents", "1")
	before := mustGet(t, dsn, "product", 1)

	// A registry whose description sets no max_bytes: the CLI's own bound applies.
	def, err := os.ReadFile(filepath.Join("..", "..", "store", "testdata", "legacy_fields.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	noLimit := regexp.MustCompile(`(name: description,[^}]*?),\s*max_bytes: \d+`)
	if !noLimit.Match(def) {
		t.Fatalf("store/testdata/legacy_fields.yaml has no description max_bytes to drop:\n%s", def)
	}
	unlimited := filepath.Join(dir, "unlimited.yaml")
	if err := os.WriteFile(unlimited, noLimit.ReplaceAll(def, []byte("$1")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"base", "other"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("one\ntwo\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base, other := filepath.Join(dir, "base"), filepath.Join(dir, "other")

	tests := []struct {
		name  string
		stdin io.Reader
		args  []string
		code  int
		limit string // the limit the message must name
	}{
		{"field=@/dev/zero", nil, []string{"set", "product", "1", "description=@/dev/zero", "--expect-version", "1"}, exitUsage, "1048576 bytes"},
		{"body=@/dev/zero on create", nil, []string{"create", "document", "title=Zero", "body=@/dev/zero"}, exitUsage, "16777216 bytes"},
		{"field=@/dev/stdin from a pipe", endless{}, []string{"set", "product", "1", "description=@/dev/stdin", "--expect-version", "1"}, exitUsage, "1048576 bytes"},
		{"field without max_bytes", nil, []string{"--fields", unlimited, "set", "product", "1", "description=@/dev/zero", "--expect-version", "1"}, exitUsage, fmt.Sprint(maxFileValue, " bytes")},
		{"--fields /dev/zero", nil, []string{"--fields", "/dev/zero", "get", "product", "1"}, exitUsage, "1048576 bytes"},
		{"merge-file /dev/zero", nil, []string{"merge-file", "-p", "/dev/zero", base, other}, mergeExitError, fmt.Sprint(maxMergeInput, " bytes")},
		{"merge-file /dev/stdin from a pipe", endless{}, []string{"merge-file", "-p", base, "/dev/stdin", other}, mergeExitError, fmt.Sprint(maxMergeInput, " bytes")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tandemLimited(t, dsn, tt.stdin, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, "over the limit of "+tt.limit) {
				t.Errorf("exit %d, want %d with a message naming the limit of %s\nstderr: %.2000s", r.code, tt.code, tt.limit, r.stderr)
			}
			if strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("tandem crashed:\n%.2000s", r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("a refused command printed to stdout: %.200q", r.stdout)
			}
		})
	}
	if got := mustGet(t, dsn, "product", 1); !sameJSON(t, got, before) {
		t.Errorf("refused reads changed product 1:\nbefore %+v\nafter  %+v", before, got)
	}

	t.Run("a file within the limit is read", func(t *testing.T) {
		text := strings.Repeat("A lamp.\n", 1000)
		path := filepath.Join(dir, "description.txt")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		mustTandem(t, dsn, "set", "product", "1", "description=@"+path, "--expect-version", fmt.Sprint(before.Version))
		if got := mustGet(t, dsn, "product", 1); got.Fields["description"] != text {
			t.Errorf("description = %.80q…, want the file's %d bytes", got.Fields["description"], len(text))
		}
	})

	t.Run("seed count over the maximum", func(t *testing.T) {
		fresh := filepath.Join(dir, "fresh.db")
		for _, args := range [][]string{
			{"seed", "--products", "99999999999"},
			{"seed", "--documents", "99999999999"},
			{"seed", "--products", strconv.Itoa(maxSeedProducts + 1)},
		} {
			r := tandemLimited(t, fresh, nil, args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "over the maximum of") {
				t.Errorf("%s: exit %d, want %d naming the maximum\nstderr: %.2000s", strings.Join(args, " "), r.code, exitUsage, r.stderr)
			}
			if strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("%s crashed:\n%.2000s", strings.Join(args, " "), r.stderr)
			}
		}
		if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused seed created the store: %v", err)
		}
	})
}

// TestHardening_FlagValuesStartingWithDash gives every flag of adjust and set, and the
// global --db, --user, --as and --fields, a value that starts with '-' (many of them a
// negative number, as adjust's DELTA is), before, between and after the positional
// arguments: the value must reach the store as typed, and a negative DELTA must still work.
func TestHardening_FlagValuesStartingWithDash(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			dir := t.TempDir()
			run := func(args ...string) result { t.Helper(); return tandemIn(t, dir, dsn, args...) }
			must := func(args ...string) string {
				t.Helper()
				r := run(args...)
				if r.code != 0 {
					t.Fatalf("tandem %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
				}
				return r.stdout
			}
			p := mustCreate(t, dsn, "product", "sku=DASH-1", "name=Dash", "stock=100")
			id := fmt.Sprint(p.ID)

			t.Run("adjust --key", func(t *testing.T) {
				must("adjust", "--key=-5", "product", id, "stock", "-1")
				for _, args := range [][]string{
					{"adjust", "--key", "-5", "product", id, "stock", "-1"},
					{"adjust", "product", id, "--key", "-5", "stock", "-1"},
					{"adjust", "product", id, "stock", "--key", "-5", "-1"},
					{"adjust", "product", id, "stock", "-1", "--key", "-5"},
				} {
					must(args...)
				}
				// One key, so one change: the retries were replays of the first.
				if got := mustGet(t, dsn, "product", p.ID); got.Fields["stock"] != float64(99) || got.Version != 2 {
					t.Errorf("after five adjusts with key -5: stock %v version %d, want 99 and 2", got.Fields["stock"], got.Version)
				}
			})

			t.Run("adjust --user", func(t *testing.T) {
				for i, args := range [][]string{
					{"--user", "-7", "adjust", "product", id, "stock", "-1"},
					{"adjust", "--user", "-8", "product", id, "stock", "-1"},
					{"adjust", "product", id, "stock", "--user", "-9", "-1"},
					{"adjust", "product", id, "stock", "-1", "--user", "-10"},
				} {
					before := mustGet(t, dsn, "product", p.ID)
					must(args...)
					got := mustGet(t, dsn, "product", p.ID)
					if want := fmt.Sprint(-7 - i); got.UpdatedBy != want || got.Fields["stock"] != before.Fields["stock"].(float64)-1 {
						t.Errorf("%s: updated by %q, stock %v; want %q and %v", strings.Join(args, " "), got.UpdatedBy,
							got.Fields["stock"], want, before.Fields["stock"].(float64)-1)
					}
				}
			})

			t.Run("adjust --as", func(t *testing.T) {
				for _, args := range [][]string{
					{"--as", "-1", "adjust", "product", id, "stock", "-1"},
					{"adjust", "product", "--as", "-1", id, "stock", "-1"},
					{"adjust", "product", id, "stock", "-1", "--as", "-1"},
				} {
					r := run(args...)
					if r.code != exitUsage || !strings.Contains(r.stderr, `unknown role "-1"`) {
						t.Errorf("%s: exit %d %q, want %d naming the role \"-1\"", strings.Join(args, " "), r.code, r.stderr, exitUsage)
					}
				}
				// --as system takes its value in any position, and the delta stays negative.
				before := mustGet(t, dsn, "product", p.ID)
				must("adjust", "product", id, "stock", "-3", "--as", "system")
				if got := mustGet(t, dsn, "product", p.ID); got.Fields["stock"] != before.Fields["stock"].(float64)-3 {
					t.Errorf("adjust -3 --as system: stock %v, want %v", got.Fields["stock"], before.Fields["stock"].(float64)-3)
				}
			})

			t.Run("adjust --lease", func(t *testing.T) {
				q := mustCreate(t, dsn, "product", "sku=DASH-2", "name=Leased", "stock=10")
				qid := fmt.Sprint(q.ID)
				var l leaseJSON
				if err := json.Unmarshal([]byte(must("--user", "alice", "lease", "acquire", "product", qid)), &l); err != nil {
					t.Fatal(err)
				}
				for _, args := range [][]string{
					{"--user", "alice", "adjust", "--lease", "-5", "product", qid, "stock", "-1"},
					{"--user", "alice", "adjust", "product", qid, "stock", "--lease", "-5", "-1"},
					{"--user", "alice", "adjust", "product", qid, "stock", "-1", "--lease", "-5"},
				} {
					// "-5" is presented as a token, and it is not one of this store's.
					r := run(args...)
					if r.code != exitLease || !strings.Contains(r.stderr, "is not valid: this store never granted it") {
						t.Errorf("%s: exit %d %q, want %d: a token this store never granted", strings.Join(args, " "), r.code, r.stderr, exitLease)
					}
				}
				must("--user", "alice", "adjust", "product", qid, "stock", "-2", "--lease", l.Token)
				if got := mustGet(t, dsn, "product", q.ID); got.Fields["stock"] != float64(8) || got.Version != 2 {
					t.Errorf("leased product: stock %v version %d, want 8 and 2 (only the holder's adjust)", got.Fields["stock"], got.Version)
				}
			})

			t.Run("adjust --json and --", func(t *testing.T) {
				for _, args := range [][]string{
					{"adjust", "--json", "product", id, "stock", "-1"},
					{"adjust", "product", id, "stock", "-1", "--json"},
					{"adjust", "--json", "product", id, "stock", "--", "-1"},
				} {
					before := mustGet(t, dsn, "product", p.ID)
					var got record
					if err := json.Unmarshal([]byte(must(args...)), &got); err != nil {
						t.Fatalf("%s: %v", strings.Join(args, " "), err)
					}
					if got.Version != before.Version+1 || got.Fields["stock"] != before.Fields["stock"].(float64)-1 {
						t.Errorf("%s: version %d stock %v, want %d and %v", strings.Join(args, " "), got.Version,
							got.Fields["stock"], before.Version+1, before.Fields["stock"].(float64)-1)
					}
				}
				// Only DELTA may start with '-': anywhere else it is a flag, as always.
				if r := run("adjust", "product", "-5", "stock", "1"); r.code != exitUsage {
					t.Errorf("adjust product -5 stock 1: exit %d %q, want %d", r.code, r.stderr, exitUsage)
				}
			})

			t.Run("--fields", func(t *testing.T) {
				// A registry named "-5" in the working directory that makes stock a system
				// field: an editor's adjust is then refused for ownership (exit 6), which
				// only happens when the file was read.
				def, err := os.ReadFile(filepath.Join("..", "..", "store", "testdata", "legacy_fields.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				stockOwner := regexp.MustCompile(`(name: stock,\s*type: int,\s*owner:) shared`)
				if !stockOwner.Match(def) {
					t.Fatalf("store/testdata/legacy_fields.yaml: no shared stock field to change:\n%s", def)
				}
				if err := os.WriteFile(filepath.Join(dir, "-5"), stockOwner.ReplaceAll(def, []byte("$1 system")), 0o600); err != nil {
					t.Fatal(err)
				}
				for _, args := range [][]string{
					{"--fields", "-5", "adjust", "product", id, "stock", "-1"},
					{"adjust", "--fields", "-5", "product", id, "stock", "-1"},
					{"adjust", "product", id, "stock", "-1", "--fields", "-5"},
					{"set", "product", id, "stock=1", "--fields", "-5", "--expect-version", "1"},
				} {
					if r := run(args...); r.code != exitForbidden {
						t.Errorf("%s: exit %d %q, want %d (the registry \"-5\" makes stock a system field)",
							strings.Join(args, " "), r.code, r.stderr, exitForbidden)
					}
				}
			})

			t.Run("set", func(t *testing.T) {
				s := mustCreate(t, dsn, "product", "sku=DASH-3", "name=Set")
				sid := fmt.Sprint(s.ID)
				must("set", "--key", "-6", "product", sid, "name=first", "--expect-version", "1")
				must("set", "product", sid, "name=first", "--key", "-6", "--expect-version", "1")
				must("set", "product", sid, "name=first", "--expect-version", "1", "--key=-6")
				if got := mustGet(t, dsn, "product", s.ID); got.Version != 2 || got.Fields["name"] != "first" {
					t.Errorf("set with key -6 three times: version %d name %v, want 2 and first", got.Version, got.Fields["name"])
				}
				must("--user", "-7", "set", "product", sid, "name=second", "--expect-version", "2")
				must("set", "product", sid, "name=third", "--expect-version", "3", "--user", "-8", "--as", "editor")
				if got := mustGet(t, dsn, "product", s.ID); got.UpdatedBy != "-8" || got.Version != 4 {
					t.Errorf("set --user -8: updated by %q version %d, want -8 and 4", got.UpdatedBy, got.Version)
				}
				for _, args := range [][]string{
					{"set", "product", sid, "name=x", "--expect-version", "-1"},
					{"set", "--expect-version", "-4", "product", sid, "name=x"},
				} {
					if r := run(args...); r.code != exitUsage || !strings.Contains(r.stderr, "is not a version") {
						t.Errorf("%s: exit %d %q, want %d: not a version", strings.Join(args, " "), r.code, r.stderr, exitUsage)
					}
				}
				if r := run("set", "product", sid, "name=x", "--expect-version", "4", "--as", "-1"); r.code != exitUsage || !strings.Contains(r.stderr, `unknown role "-1"`) {
					t.Errorf("set --as -1: exit %d %q, want %d naming the role \"-1\"", r.code, r.stderr, exitUsage)
				}
				if r := run("set", "product", sid, "name=x", "--expect-version", "4", "--lease", "-5"); r.code != exitLease {
					t.Errorf("set --lease -5: exit %d %q, want %d", r.code, r.stderr, exitLease)
				}
				var got record
				if err := json.Unmarshal([]byte(must("set", "--json", "product", sid, "name=fourth", "--expect-version", "4")), &got); err != nil || got.Version != 5 {
					t.Errorf("set --json: %+v %v", got, err)
				}
			})

			if b.name != "sqlite" {
				return
			}
			t.Run("--db", func(t *testing.T) {
				// A store file named "-5" in the working directory; TANDEM_DB names a
				// directory that does not exist, so only --db can find it.
				dir := t.TempDir()
				if r := tandemIn(t, dir, "-5", "seed", "--products", "1", "--documents", "0"); r.code != 0 {
					t.Fatalf("seed a store named -5: exit %d %s", r.code, r.stderr)
				}
				elsewhere := filepath.Join(dir, "no", "such.db")
				for _, args := range [][]string{
					{"--db", "-5", "adjust", "product", "1", "stock", "-1"},
					{"adjust", "--db", "-5", "product", "1", "stock", "-1"},
					{"adjust", "product", "1", "stock", "-1", "--db", "-5"},
					{"adjust", "product", "1", "stock", "--db=-5", "-1"},
				} {
					if r := tandemIn(t, dir, elsewhere, args...); r.code != 0 {
						t.Errorf("%s: exit %d %q, want 0", strings.Join(args, " "), r.code, r.stderr)
					}
				}
				if r := tandemIn(t, dir, elsewhere, "set", "product", "1", "name=Minus five", "--db", "-5", "--expect-version", "5"); r.code != 0 {
					t.Errorf("set --db -5: exit %d %q, want 0", r.code, r.stderr)
				}
				var got record
				out := tandemIn(t, dir, elsewhere, "get", "product", "1", "--json", "--db", "-5")
				if err := json.Unmarshal([]byte(out.stdout), &got); err != nil {
					t.Fatalf("get --db -5: %v %s", err, out.stderr)
				}
				if got.Version != 6 || got.Fields["name"] != "Minus five" {
					t.Errorf("store -5: product 1 at version %d named %v, want 6 (four adjusts and a set) and Minus five", got.Version, got.Fields["name"])
				}
			})
		})
	}
}

// Characters a terminal obeys rather than shows: the 8-bit CSI and a right-to-left override.
const (
	csi8 = "\u009b"
	rlo  = "\u202e"
)

// mustEscapeJSON checks that out, the JSON output of args, carries no raw CSI or RLO but
// their \u escapes, and returns it decoded into v.
func mustEscapeJSON(t *testing.T, args string, out string, wantEscapes []string, v any) {
	t.Helper()
	for _, raw := range []string{csi8, rlo, "\x1b"} {
		if strings.Contains(out, raw) {
			t.Errorf("%s printed %U raw:\n%q", args, []rune(raw)[0], out)
		}
	}
	for _, esc := range wantEscapes {
		if !strings.Contains(out, esc) {
			t.Errorf("%s: no %s escape in\n%s", args, esc, out)
		}
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%s: not valid JSON: %v\n%s", args, err, out)
	}
}

// TestHardening_TerminalOutput checks that every output for people and every JSON document
// reaches a terminal harmless: JSON escapes C1 controls and bidi overrides as \u escapes
// and decodes to the same strings; text output and error messages defuse escapes that come
// from the database or the command line, and an echoed newline cannot start a line of its
// own.
func TestHardening_TerminalOutput(t *testing.T) {
	dsn := newSQLiteStore(t)
	dir := filepath.Dir(dsn)
	// The store accepts an RLO in text and in a user name (it is not a control
	// character); U+009B it refuses, so another program writes it directly.
	evilUser := "eve" + rlo + "gpj.exe"
	name := "Lamp " + rlo + "pmal"
	p := mustCreate(t, dsn, "product", "sku=ESC-1", "name="+name)
	id := fmt.Sprint(p.ID)
	mustTandem(t, dsn, "--user", evilUser, "set", "product", id, "name="+name+"!", "--expect-version", "1")
	mustTandem(t, dsn, "--user", evilUser, "--as", "system", "adjust", "product", id, "stock", "5")
	description := "csi" + csi8 + "31m red, rlo" + rlo + "evil"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("UPDATE products SET description = ? WHERE id = ?", description, p.ID)
	if err == nil {
		// The operation log's role column, as another program might fill it.
		_, err = db.Exec("UPDATE changes SET role = ? WHERE kind = 'product' AND record_id = ? AND role = 'system'",
			"system\x1b]0;pwned\x07", p.ID)
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("get --json", func(t *testing.T) {
		var r record
		mustEscapeJSON(t, "get --json", mustTandem(t, dsn, "get", "product", id, "--json"), []string{`\u009b`, `\u202e`}, &r)
		// The description came from another program, which the record now names as its
		// last writer; the RLO of eve's name is in its history.
		if r.Fields["description"] != description || r.Fields["name"] != name+"!" || r.UpdatedBy != "outside" {
			t.Errorf("get --json decodes to description %q name %q updated_by %q, want %q %q %q",
				r.Fields["description"], r.Fields["name"], r.UpdatedBy, description, name+"!", "outside")
		}
	})
	t.Run("list --json", func(t *testing.T) {
		var rs []record
		mustEscapeJSON(t, "list --json", mustTandem(t, dsn, "list", "products", "--json"), []string{`\u009b`, `\u202e`}, &rs)
		if len(rs) != 1 || rs[0].Fields["description"] != description {
			t.Errorf("list --json decodes to %+v", rs)
		}
	})
	t.Run("adjust --json", func(t *testing.T) {
		var r record
		mustEscapeJSON(t, "adjust --json", mustTandem(t, dsn, "adjust", "product", id, "stock", "-1", "--json"), []string{`\u009b`, `\u202e`}, &r)
		if r.Fields["description"] != description {
			t.Errorf("adjust --json decodes to description %q", r.Fields["description"])
		}
	})
	t.Run("history --json", func(t *testing.T) {
		var h struct {
			Versions []struct {
				Actor    string         `json:"actor"`
				Snapshot map[string]any `json:"snapshot"`
			} `json:"versions"`
			Operations []struct {
				Actor string `json:"actor"`
				Role  string `json:"role"`
			} `json:"operations"`
		}
		mustEscapeJSON(t, "history --json", mustTandem(t, dsn, "history", "product", id, "--json"), []string{`\u202e`, `\u001b`}, &h)
		found := false
		for _, v := range h.Versions {
			found = found || v.Actor == evilUser && v.Snapshot["name"] == name+"!"
		}
		if !found {
			t.Errorf("history --json: no version by %q naming %q: %+v", evilUser, name+"!", h.Versions)
		}
		if len(h.Operations) == 0 || h.Operations[0].Role != "system\x1b]0;pwned\x07" {
			t.Errorf("history --json operations decode to %+v", h.Operations)
		}
	})
	t.Run("lease and locks --json", func(t *testing.T) {
		var l leaseJSON
		mustEscapeJSON(t, "lease acquire", mustTandem(t, dsn, "--user", evilUser, "lease", "acquire", "product", id), []string{`\u202e`}, &l)
		if l.Holder != evilUser {
			t.Errorf("lease acquire decodes to holder %q, want %q", l.Holder, evilUser)
		}
		var rows []lockRow
		mustEscapeJSON(t, "locks --json", mustTandem(t, dsn, "locks", "--json"), []string{`\u202e`}, &rows)
		if len(rows) != 1 || rows[0].Holder != evilUser {
			t.Errorf("locks --json decodes to %+v", rows)
		}
		mustTandem(t, dsn, "lease", "release", l.Token)
	})
	t.Run("watch --json", func(t *testing.T) {
		w := startLines(t, dsn, "watch", "--json", "--from", "1")
		for {
			line := w.next(t, time.Minute)
			var c struct {
				Actor string `json:"actor"`
			}
			mustEscapeJSON(t, "watch --json", line, nil, &c)
			if c.Actor == evilUser {
				if !strings.Contains(line, `\u202e`) {
					t.Errorf("watch --json: no \\u202e escape in %s", line)
				}
				break
			}
		}
	})

	t.Run("text output", func(t *testing.T) {
		for _, args := range [][]string{
			{"get", "product", id},
			{"list", "products"},
			{"history", "product", id},
		} {
			out := mustTandem(t, dsn, args...)
			for _, raw := range []string{csi8, rlo, "\x1b", "\x07"} {
				if strings.Contains(out, raw) {
					t.Errorf("%s printed %q raw:\n%q", strings.Join(args, " "), raw, out)
				}
			}
		}
		if out := mustTandem(t, dsn, "history", "product", id); !strings.Contains(out, `system\x1b]0;pwned\x07`) {
			t.Errorf("history does not show the forged role visibly:\n%q", out)
		}
	})

	t.Run("errors", func(t *testing.T) {
		evilDir := filepath.Join(dir, "x\x1b]0;pwned\x07")
		for _, tt := range []struct {
			args []string
			want string // how the echo must appear
		}{
			{[]string{"--db", filepath.Join(evilDir, "a.db"), "list", "products"}, `x\x1b]0;pwned\x07`},
			{[]string{"set", "product", id, "na\x1b[2Jme=x", "--expect-version", "1"}, `na\x1b[2Jme`},
			{[]string{"set", "product", id, "na\ntandem: forged=x", "--expect-version", "1"}, "na\n  tandem: forged"},
			{[]string{"set", "product", id, "description=@" + filepath.Join(evilDir, "f"), "--expect-version", "1"}, `x\x1b]0;pwned\x07`},
			// Values quoted in a message are escaped once, where the message is shown: a
			// message that quoted them with %q first showed \\x1b, as if the input had
			// held a backslash.
			{[]string{"get", "prod\x1b[2Juct", "1"}, `unknown kind "prod\x1b[2Juct"`},
			{[]string{"get", "product", "1\x1b"}, `"1\x1b" is not a record id`},
			{[]string{"--as", "ed\x1bitor", "locks"}, `unknown role "ed\x1bitor"`},
			{[]string{"set", "product", id, "stock=1\x1b", "--expect-version", "1"}, `"1\x1b" is not a whole number`},
			{[]string{"lease", "acquire", "product", id, "--group", "g\x1b"}, `unknown lease group "g\x1b"`},
			{[]string{"move", "1", "r\x1boot"}, `"r\x1boot" is not a record id or root`},
		} {
			r := tandem(t, dsn, tt.args...)
			if r.code == 0 {
				t.Errorf("%q succeeded", tt.args)
				continue
			}
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if strings.ContainsAny(r.stderr, "\x1b\x07") || !strings.HasPrefix(lines[0], "tandem: ") {
				t.Errorf("%q: stderr is not a defused message:\n%q", tt.args, r.stderr)
			}
			for _, l := range lines[1:] {
				if !strings.HasPrefix(l, " ") {
					t.Errorf("%q: stderr has a line of its own, %q, not an indented continuation:\n%s", tt.args, l, r.stderr)
				}
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("%q: stderr %q does not show %s", tt.args, r.stderr, tt.want)
			}
			if strings.Contains(r.stderr, `\\x`) {
				t.Errorf("%q: stderr %q shows an escape escaped twice", tt.args, r.stderr)
			}
		}
	})

	t.Run("merge-file messages", func(t *testing.T) {
		evil := filepath.Join(dir, "cur\x1b]0;pwned\x07")
		for name, text := range map[string]string{evil: "a\nours\n", "base": "a\nb\n", "other": "a\ntheirs\n"} {
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		base, other := filepath.Join(dir, "base"), filepath.Join(dir, "other")
		args := []string{"merge-file", "-p", filepath.Join(dir, "missing\x1b]0;pwned\x07"), base, other} // cannot read
		r := tandem(t, "", args...)
		if r.code == 0 || strings.ContainsAny(r.stderr, "\x1b\x07") || !strings.Contains(r.stderr, `\x1b]0;pwned\x07`) {
			t.Errorf("%q: exit %d, stderr %q: want a failure with the name defused", args, r.code, r.stderr)
		}
		// A conflict prints nothing on stderr, as git merge-file; the exit status counts it.
		args = []string{"merge-file", evil, base, other}
		if r := tandem(t, "", args...); r.code != 1 || r.stderr != "" {
			t.Errorf("%q: exit %d, stderr %q: want 1 and nothing on stderr", args, r.code, r.stderr)
		}
	})
}
