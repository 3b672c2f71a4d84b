//go:build unix

package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/internal/testfs"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// sum is the SHA-256 of a file, to show that nothing wrote it.
func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// seededStore makes a store with the sample data, as "tandem seed" does (madeStore), and
// returns its path.
func seededStore(t *testing.T) string {
	t.Helper()
	return madeStore(t, "seed")
}

// TestCLI_MissingStoreIsNotCreated runs every command that reads or writes records on a file
// that does not exist (the default ./tandem.db and a mistyped --db): each exits 5 with "no
// store at PATH (tandem seed creates one)" and the directory stays empty.
func TestCLI_MissingStoreIsNotCreated(t *testing.T) {
	commands := [][]string{
		{"list", "products"},
		{"get", "product", "42"},
		{"create", "product", "sku=NEW-1", "name=New"},
		{"create", "product", "sku=NEW-1"}, // a bad create: no name
		{"set", "product", "42", "name=x", "--expect-version", "1"},
		{"adjust", "product", "4242", "stock", "-1"},
		{"move", "3", "root"},
		{"history", "product", "42"},
		{"lease", "acquire", "product", "42"},
		{"lease", "release", "not-a-token"},
		{"locks"},
		{"worker", "checksum", "--once"},
	}
	for _, db := range []string{"", "typo.db"} {
		for _, args := range commands {
			name := strings.Join(args, " ")
			if db != "" {
				name = "--db " + db + " " + name
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				r := tandemIn(t, dir, db, args...)
				path := db
				if path == "" {
					path = defaultDB
				}
				want := "tandem: no store at " + path + " (tandem seed creates one)\n"
				if r.code != exitNotFound || r.stderr != want {
					t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitNotFound, want)
				}
				if names := dirNames(t, dir); len(names) > 0 {
					t.Errorf("the command made %v", names)
				}
			})
		}
	}
	// Bad input that needs no schema is refused before any store is looked for: exit 2,
	// and still nothing made. (A kind and its lease groups are the store's schema's.)
	t.Run("lease acquire --ttl 0s", func(t *testing.T) {
		dir := t.TempDir()
		r := tandemIn(t, dir, "typo.db", "lease", "acquire", "product", "42", "--ttl", "0s")
		if r.code != exitUsage || !strings.Contains(r.stderr, `lease TTL 0s is outside`) {
			t.Errorf("exit %d, stderr %q; want %d naming the TTL", r.code, r.stderr, exitUsage)
		}
		if names := dirNames(t, dir); len(names) > 0 {
			t.Errorf("the command made %v", names)
		}
	})
}

// TestCLI_WhatCreatesAStore shows the ways a store is made: init (empty, or --sample), seed
// and the global --create; each says it created the file, and the file is 0600 even under
// umask 0. The TUI's first run makes nothing where there is no terminal. A second init changes nothing and keeps the store id, which
// also stays with a moved file.
func TestCLI_WhatCreatesAStore(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	idRE := regexp.MustCompile(`store id ([0-9a-f]{32})`)

	r := tandemIn(t, dir, "", "init")
	m := idRE.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil || !strings.HasPrefix(r.stdout, "created ./tandem.db") {
		t.Fatalf("init: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	sid := m[1]
	r = tandemIn(t, dir, "", "init")
	if r.code != 0 || !strings.Contains(r.stdout, "already holds a tandem store (store id "+sid+"); nothing changed") {
		t.Errorf("second init: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if err := os.Rename(path("tandem.db"), path("moved.db")); err != nil {
		t.Fatal(err)
	}
	if r = tandemIn(t, dir, "moved.db", "init"); !strings.Contains(r.stdout, "store id "+sid) {
		t.Errorf("the moved store does not keep its id %s: %q %q", sid, r.stdout, r.stderr)
	}

	r = tandemIn(t, dir, "sample.db", "init", "--sample")
	if r.code != 0 || !strings.HasPrefix(r.stdout, fmt.Sprintf("created sample.db with %d products and %d documents", defaultSeedProducts, defaultSeedDocuments)) {
		t.Errorf("init --sample: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tandemIn(t, dir, "seeded.db", "seed")
	if r.code != 0 || r.stderr != "tandem: created seeded.db\n" {
		t.Errorf("seed: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tandemIn(t, dir, "", "--db", "flag.db", "--create", "list", "products")
	if r.code != 0 || r.stderr != "tandem: created flag.db (an empty store)\n" {
		t.Errorf("--create list: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// The TUI's first run creates the store only when there is a terminal to show it on
	// (TestE2E_FirstRuns); here, in a session with none, it creates nothing (exit 2).
	r = tandemIn(t, dir, "tui.db")
	if r.code != exitUsage || !strings.Contains(r.stderr, "the TUI needs a terminal and there is none") {
		t.Errorf("TUI without a terminal: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, name := range []string{"moved.db", "sample.db", "seeded.db", "flag.db"} {
		fi, err := os.Stat(path(name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %o under umask 0, want 600", name, fi.Mode().Perm())
		}
	}
	if names := dirNames(t, dir); len(names) != 4 {
		t.Errorf("directory holds %v, want the four stores and nothing else", names)
	}
}

// TestCLI_CreatedMessageDefused makes stores on a new file whose path holds an OSC escape
// (it would set the terminal's title) and a BEL: "created …" echoes the path defused, and
// so does the message of a missing store.
func TestCLI_CreatedMessageDefused(t *testing.T) {
	dir := t.TempDir()
	hostile := "x\x1b]0;pwned\x07.db"
	for _, args := range [][]string{{"init"}, {"seed"}, {"get", "product", "1"}} {
		db := hostile
		if len(args) > 0 && args[0] == "get" {
			db = "missing" + hostile
		}
		r := tandemIn(t, dir, db, args...)
		if !strings.Contains(r.stdout+r.stderr, `x\x1b]0;pwned\x07.db`) {
			t.Errorf("tandem %v: output %q does not show the path defused", args, r.stdout+r.stderr)
		}
		if strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07") {
			t.Errorf("tandem %v: the escape reached the terminal: %q", args, r.stderr)
		}
		os.Remove(filepath.Join(dir, hostile))
	}
}

// TestCLI_FirstRunsAtOnce starts several first runs on one new file at once (processes of the
// binary, started together): init --sample and seed (TUIs: TestE2E_FirstRuns). Exactly one
// creates the store and fills it; the others open what it made or, for seed, find it already
// filled; nobody fails on a duplicate SKU, and the store holds the sample data once. The same
// holds for an empty file (touch): it counts as no store, made and filled in place.
func TestCLI_FirstRunsAtOnce(t *testing.T) {
	cases := []struct {
		name string
		args []string
		// ok reports whether a process that did not create the store ended as it should.
		ok func(r result) bool
		// created reports whether the process says it created the store.
		created func(r result) bool
	}{
		{"init --sample", []string{"init", "--sample"},
			func(r result) bool { return r.code == 0 && strings.Contains(r.stdout, "already holds a tandem store") },
			func(r result) bool { return r.code == 0 && strings.HasPrefix(r.stdout, "created ") }},
		{"seed", []string{"seed"},
			func(r result) bool {
				return r.code == exitUsage && strings.Contains(r.stderr, "already holds 60 products")
			},
			func(r result) bool { return r.code == 0 && strings.HasPrefix(r.stdout, "seeded ") }},
	}
	const procs = 6
	for _, tc := range cases {
		for _, empty := range []bool{false, true} {
			name := tc.name
			if empty {
				name += " on an empty file"
			}
			t.Run(name, func(t *testing.T) {
				firstRunsAtOnce(t, tc.args, tc.ok, tc.created, procs, empty)
			})
		}
	}
}

// firstRunsAtOnce is one case of TestCLI_FirstRunsAtOnce: procs processes of tandem args
// at once on a new file, or on an empty one when empty.
func firstRunsAtOnce(t *testing.T, args []string, ok, created func(r result) bool, procs int, empty bool) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "first.db")
	if empty {
		if err := os.WriteFile(dsn, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmds := make([]*exec.Cmd, procs)
	outs, errs := make([]bytes.Buffer, procs), make([]bytes.Buffer, procs)
	for i := range cmds {
		cmds[i] = tandemCmd(dsn, args...)
		cmds[i].SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &errs[i]
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	creators := 0
	for i, c := range cmds {
		_ = c.Wait()
		r := result{outs[i].String(), errs[i].String(), c.ProcessState.ExitCode()}
		switch {
		case created(r):
			creators++
		case !ok(r):
			t.Errorf("process %d: exit %d\nstdout: %s\nstderr: %s", i, r.code, r.stdout, r.stderr)
		}
	}
	if creators != 1 {
		t.Errorf("%d processes created the store, want 1", creators)
	}
	var products, documents []record
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "products", "--json")), &products); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "documents", "--json")), &documents); err != nil {
		t.Fatal(err)
	}
	if len(products) != defaultSeedProducts || len(documents) != defaultSeedDocuments {
		t.Errorf("store holds %d products and %d documents, want the sample once (%d and %d)",
			len(products), len(documents), defaultSeedProducts, defaultSeedDocuments)
	}
	for _, n := range dirNames(t, dir) {
		if n != "first.db" {
			t.Errorf("left beside the store: %q", n)
		}
	}
}

// TestCLI_ReadsDoNotWaitForWriters holds SQLite's write lock (BEGIN IMMEDIATE, as a writer
// in another process does) while get and list run: they answer without waiting for it.
func TestCLI_ReadsDoNotWaitForWriters(t *testing.T) {
	dsn := seededStore(t)
	raw, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	conn, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	if got := mustGet(t, dsn, "product", 50); got.ID != 50 {
		t.Errorf("get product 50 returned %+v", got)
	}
	if out := mustTandem(t, dsn, "list", "products"); !strings.Contains(out, "LGT-1042") {
		t.Errorf("list products while a writer holds the lock:\n%s", out)
	}
}

// TestCLI_ReadOnlyStore makes a store's file, then its directory, impossible to write
// (chattr +i as root, chmod otherwise): get and list work, and set, adjust and create exit 2
// saying the store is read-only and why; the file is unchanged.
func TestCLI_ReadOnlyStore(t *testing.T) {
	for _, tc := range []struct{ name, why string }{
		{"File", "the file is not writable"},
		{"Directory", "its directory is not writable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := seededStore(t)
			if tc.name == "File" {
				testfs.MakeReadOnly(t, dsn)
			} else {
				testfs.MakeReadOnly(t, filepath.Dir(dsn))
			}
			before := sum(t, dsn)
			if got := mustGet(t, dsn, "product", 50); got.ID != 50 || got.Version != 1 {
				t.Errorf("get product 50: %+v", got)
			}
			if out := mustTandem(t, dsn, "list", "products"); !strings.Contains(out, "LGT-1042") {
				t.Errorf("list products:\n%s", out)
			}
			for _, args := range [][]string{
				{"set", "product", "50", "name=Changed", "--expect-version", "1"},
				{"adjust", "product", "50", "stock", "-1"},
				{"create", "product", "sku=RO-1", "name=New"},
			} {
				r := tandem(t, dsn, args...)
				want := "is read-only (" + tc.why + "); tandem can read it but not change it"
				if r.code != exitUsage || !strings.Contains(r.stderr, want) {
					t.Errorf("%v: exit %d, stderr %q; want %d and %q", args, r.code, r.stderr, exitUsage, want)
				}
			}
			if sum(t, dsn) != before {
				t.Error("the read-only store's file changed")
			}
		})
	}
}

// TestCLI_ReadOnlyStoreOfAnotherUser is a store its reader may neither write nor make
// files beside: as root, a store root made (file 0644, directory 0755) read by nobody; as
// anyone else, the user's own store with the file 0444 and the directory 0555. SQLite cannot
// make the -shm file there (it answers SQLITE_READONLY_DIRECTORY, where an immutable
// directory makes it answer SQLITE_CANTOPEN); get and list still work, a write exits 2
// saying the store is read-only, and no file appears or changes.
func TestCLI_ReadOnlyStoreOfAnotherUser(t *testing.T) {
	// Outside t.TempDir (mode 0700): nobody must reach the binary and the store.
	dir, err := os.MkdirTemp("", "tandem-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.Chmod(dir, 0o755)
		_ = os.RemoveAll(dir)
	})
	bin, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "tandem")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	dsn := filepath.Join(dir, "s.db")
	madeStoreAt(t, dsn, "seed")
	fileMode, dirMode := os.FileMode(0o644), os.FileMode(0o755)
	if os.Geteuid() != 0 {
		fileMode, dirMode = 0o444, 0o555
	}
	if err := os.Chmod(dsn, fileMode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		t.Fatal(err)
	}
	before := sum(t, dsn)
	run := func(args ...string) result {
		t.Helper()
		cmd := tandemCmd(dsn, args...)
		cmd.Path, cmd.Args[0] = exe, exe
		cmd.Dir = dir
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			cmd.Env = append(cmd.Env, "HOME="+dir)
		}
		return runResult(t, cmd, args)
	}
	if r := run("get", "product", "50", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"id": 50`) {
		t.Errorf("get product 50: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run("list", "products"); r.code != 0 || !strings.Contains(r.stdout, "LGT-1042") {
		t.Errorf("list products: exit %d, stderr %q", r.code, r.stderr)
	}
	want := "is read-only (its directory is not writable); tandem can read it but not change it"
	if r := run("set", "product", "50", "name=Changed", "--expect-version", "1"); r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("set: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitUsage, want)
	}
	if got := dirNames(t, dir); strings.Join(got, " ") != "s.db tandem" {
		t.Errorf("files in the store's directory: %v, want only s.db and tandem", got)
	}
	if sum(t, dsn) != before {
		t.Error("the read-only store's file changed")
	}
}

// TestCLI_ConnectionStrings checks what --db does with strings that are not file paths: a
// libpq key=value string is a PostgreSQL DSN (never a file named after it, never a password
// in the output), a password-bearing string that is not one is refused, and a postgres://
// DSN whose password holds an '@' is refused without printing any part of it.
func TestCLI_ConnectionStrings(t *testing.T) {
	cases := []struct {
		name, db string
		code     int
		secrets  []string
	}{
		{"key=value, server down", "host=127.0.0.1 port=1 dbname=x user=u password=hunter2 connect_timeout=3", exitFailure, []string{"hunter2"}},
		{"key=value, spaces and quotes", "dbname = 'x' host=127.0.0.1 port=1 password = 'two words' connect_timeout=3", exitFailure, []string{"two words", "words"}},
		{"not a DSN, with a password", "x?password=hunter2.db", exitUsage, []string{"hunter2"}},
		{"@ in the password", "postgres://u:abc@secretpart@127.0.0.1:1/x", exitUsage, []string{"abc", "secretpart"}},
		{"@ in the password, encoded", "postgres://u:abc%40secretpart@127.0.0.1:1/x?connect_timeout=3", exitFailure, []string{"abc", "secretpart"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := tandemIn(t, dir, tc.db, "list", "products")
			if r.code != tc.code {
				t.Errorf("exit %d, want %d: %s", r.code, tc.code, r.stderr)
			}
			for _, s := range tc.secrets {
				if strings.Contains(r.stdout+r.stderr, s) {
					t.Errorf("the password (%q) was printed: %s", s, r.stderr)
				}
			}
			if names := dirNames(t, dir); len(names) > 0 {
				t.Errorf("a file was made from the connection string: %q", names)
			}
		})
	}
}

// TestCLI_KeyValueDSN_Postgres opens the test server's store through a libpq key=value
// string: init makes it ready, and records written through it are there.
func TestCLI_KeyValueDSN_Postgres(t *testing.T) {
	url := pgtest.DSN(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	kv := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable search_path=%s",
		cfg.Host, cfg.Port, cfg.User, cfg.Database, cfg.RuntimeParams["search_path"])
	dir := t.TempDir()
	r := tandemIn(t, dir, kv, "init")
	if r.code != 0 || !regexp.MustCompile(`^created .* \(store id [0-9a-f]{32}\)\n$`).MatchString(r.stdout) {
		t.Fatalf("init: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	p := mustCreate(t, kv, "product", "sku=KV-1", "name=Through key=value")
	if got := mustGet(t, url, "product", p.ID); got.Fields["name"] != "Through key=value" {
		t.Errorf("the record is not in the server's store: %+v", got)
	}
	if names := dirNames(t, dir); len(names) > 0 {
		t.Errorf("a file was made from the connection string: %q", names)
	}
}

// TestCLI_InitPostgres: init on PostgreSQL speaks as on SQLite (the offline walkthrough "is the
// same with a postgres:// DSN"): "created" when it installs tandem's tables, with the sample
// data under --sample, and "already holds a tandem store" after; --sample on a store with
// no records fills it and says so.
func TestCLI_InitPostgres(t *testing.T) {
	if os.Getenv("TANDEM_TEST_POSTGRES") == "" {
		t.Skip("set TANDEM_TEST_POSTGRES=postgres://… to run the PostgreSQL CLI tests")
	}
	id := `\(store id [0-9a-f]{32}\)\n$`
	sample := fmt.Sprintf("%d products and %d documents", defaultSeedProducts, defaultSeedDocuments)
	dsns := map[string]string{"a": pgtest.DSN(t), "b": pgtest.DSN(t)}
	for _, step := range []struct {
		dsn  string
		args []string
		want string
	}{
		{"a", []string{"init", "--sample"}, `^created .* with ` + sample + ` ` + id},
		{"a", []string{"init", "--sample"}, `^.* already holds a tandem store \(store id [0-9a-f]{32}\); nothing changed\n$`},
		{"b", []string{"init"}, `^created .* ` + id},
		{"b", []string{"init", "--sample"}, `^.* held a tandem store with no records; filled it with ` + sample + ` ` + id},
	} {
		r := tandem(t, dsns[step.dsn], step.args...)
		if r.code != 0 || !regexp.MustCompile(step.want).MatchString(r.stdout) {
			t.Errorf("store %s, %s: exit %d, stdout %q, stderr %q; want %s", step.dsn, strings.Join(step.args, " "), r.code, r.stdout, r.stderr, step.want)
		}
	}
}

// TestCLI_CorruptSQLiteIsBroken: a damaged or truncated SQLite file is a broken store (exit 1),
// not bad input (exit 2).
func TestCLI_CorruptSQLiteIsBroken(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	mustTandem(t, good, "seed", "--products", "800", "--documents", "5") // about 540 pages
	// Fold the WAL into the file, so the copies below hold every page.
	mustTandem(t, good, "get", "product", "1")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(good + "-wal"); err == nil {
		t.Skip("the database kept a WAL after the last process closed it") // never seen: SQLite checkpoints at close
	}
	const page = 4096
	if len(data) < 300*page {
		t.Fatalf("the seeded database has %d bytes, too small to damage in its middle", len(data))
	}
	damaged := filepath.Join(dir, "damaged.db")
	bad := bytes.Clone(data)
	copy(bad[100*page:250*page], bytes.Repeat([]byte{0xff}, 150*page))
	if err := os.WriteFile(damaged, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.db")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{damaged, truncated} {
		r := tandem(t, db, "list", "products")
		wantExit(t, "list products on "+filepath.Base(db), r, exitFailure, "the store is broken")
	}
}
