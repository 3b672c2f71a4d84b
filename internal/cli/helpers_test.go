package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// The helpers every CLI test file shares: running the built binary, reading its JSON,
// making stores, leases and field registries. A helper one file alone uses stays there.

// result is what one tandem process did.
type result struct {
	stdout, stderr string
	code           int
}

// tandem runs the binary against the store dsn as user "tester" and returns what it did.
func tandem(t *testing.T, dsn string, args ...string) result {
	t.Helper()
	return runResult(t, tandemCmd(dsn, args...), args)
}

// runResult runs cmd, a tandem process with args, to its end and returns what it did.
func runResult(t *testing.T, cmd *exec.Cmd, args []string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run tandem %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// tandemCmd returns the command that runs tandem with args against dsn, without starting it.
func tandemCmd(dsn string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	env := []string{"TANDEM_USER=tester", "TANDEM_DB=" + dsn}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TANDEM_") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return cmd
}

// mustTandem runs tandem and fails the test unless it exits 0.
func mustTandem(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	r := tandem(t, dsn, args...)
	if r.code != 0 {
		t.Fatalf("tandem %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// mustInProcess runs tandem's command line in the test process (Run, what main runs)
// against dsn as user "tester" and fails the test unless it exits 0. The helpers that make
// a test's records (mustCreate) or look at what a store holds after the processes under
// test are done with it (mustGet, countRecords, historyLen, mustLocks) use it: starting the
// binary costs about 50 ms of CPU, these helpers were a quarter of the processes the tests
// started, and the process itself was not what they tested.
func mustInProcess(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"--db", dsn, "--user", "tester"}, args...), strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("tandem %s (in the test process): exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String()
}

// record is the JSON form of a record as the CLI prints it.
type record struct {
	Kind      string         `json:"kind"`
	ID        int64          `json:"id"`
	Version   int64          `json:"version"`
	UpdatedBy string         `json:"updated_by"`
	UpdatedAt string         `json:"updated_at"`
	Fields    map[string]any `json:"fields"`
}

// mustGet returns a record through "tandem get --json".
func mustGet(t *testing.T, dsn, kind string, id int64) record {
	t.Helper()
	var r record
	out := mustInProcess(t, dsn, "get", kind, fmt.Sprint(id), "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decode get --json: %v\n%s", err, out)
	}
	return r
}

// mustCreate creates a record through "tandem create --json" and returns it.
func mustCreate(t *testing.T, dsn, kind string, assignments ...string) record {
	t.Helper()
	var r record
	out := mustInProcess(t, dsn, append([]string{"create", kind, "--json"}, assignments...)...)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decode create --json: %v\n%s", err, out)
	}
	return r
}

// newSQLiteStore makes a new, empty SQLite store as "tandem init" does (a copy of its
// template, madeStore) and returns its path (commands other than init, seed and the TUI do
// not create a store).
func newSQLiteStore(t *testing.T) string {
	t.Helper()
	return madeStore(t, "init")
}

// backend is a store the process tests run against.
type backend struct {
	name string
	dsn  func(t *testing.T) string // a fresh, empty store
}

// seeded returns a fresh store of b with the sample data: on SQLite a copy of seed's
// template (madeStore), elsewhere its fresh store filled by "tandem seed".
func (b backend) seeded(t *testing.T) string {
	t.Helper()
	if b.name == "sqlite" {
		return madeStore(t, "seed")
	}
	dsn := b.dsn(t)
	mustTandem(t, dsn, "seed")
	return dsn
}

// backends returns SQLite, and PostgreSQL when TANDEM_TEST_POSTGRES names a server.
func backends(t *testing.T) []backend {
	t.Helper()
	bs := []backend{{"sqlite", newSQLiteStore}}
	if os.Getenv("TANDEM_TEST_POSTGRES") != "" {
		bs = append(bs, backend{"postgres", func(t *testing.T) string { return pgtest.DSN(t) }})
	} else if os.Getenv("CI") == "true" {
		t.Fatal("TANDEM_TEST_POSTGRES is not set under CI=true: the PostgreSQL CLI tests must run in CI")
	} else {
		t.Log("PostgreSQL CLI tests skipped: set TANDEM_TEST_POSTGRES=postgres://… to run them")
	}
	return bs
}

// longTests reports whether the long tests run: TANDEM_LONG_TESTS=1, which .ci/run sets.
// Without it the many-process tests start fewer processes, so that a plain `go test ./...`
// finishes in a couple of minutes; the same code paths run either way.
func longTests() bool {
	v := os.Getenv("TANDEM_LONG_TESTS")
	return v != "" && v != "0"
}

// waitsBeside lets a test that spends most of its time waiting (a lease or presence
// lifetime running out, a TUI polling) run in parallel with the other such tests and the
// process tests, after the sequential ones: their waits overlap instead of adding up, on a
// core the process tests leave idle. In CI too: at most -test.parallel tests run at once
// (two on the reference machine), and the deadlines these tests wait for (15 s for a
// screen, a lifetime plus seconds) are bounds for a slow machine, not latencies; run in
// sequence under TANDEM_LONG_TESTS they were a third of CI's critical path.
func waitsBeside(t *testing.T) {
	t.Parallel()
}

// besideOthers lets a test whose time goes to tandem processes, on stores of its own (files
// in its own t.TempDir(), a PostgreSQL schema of its own from pgtest.DSN), run in parallel
// with the other such tests, in every mode: at most -test.parallel at once (GOMAXPROCS,
// two on the reference machine), after the sequential tests. Run one after the other they
// left one of two cores idle while each waited on its one process at a time. Only for tests
// with no deadline or lifetime of their own to meet (those are waitsBeside's), that change
// no process-wide state (t.Setenv, the working directory) and that start no shared server.
func besideOthers(t *testing.T) {
	t.Parallel()
}

// tandemIn runs tandem in dir (its working directory) against the store dsn ("" leaves
// TANDEM_DB unset, so tandem uses ./tandem.db), in a session of its own, so that a TUI finds
// no terminal to take over.
func tandemIn(t *testing.T, dir, dsn string, args ...string) result {
	t.Helper()
	cmd := tandemCmd(dsn, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return runResult(t, cmd, args)
}

// mustLease acquires a lease on a product's editor group for holder directly through the
// SQLite store (the lease CLI is another command's concern) and returns its token.
func mustLease(t *testing.T, path string, id int64, holder string) string {
	t.Helper()
	ctx := store.WithActor(context.Background(), store.Actor{Name: holder, Role: store.RoleEditor})
	db, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := db.AcquireLease(ctx, store.LeaseRequest{Kind: store.KindProduct, RecordID: id, Group: store.GroupEditor, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return l.Token
}

// countRecords returns how many records of kind "tandem list --json" prints.
func countRecords(t *testing.T, dsn, kind string) int {
	t.Helper()
	var recs []record
	if err := json.Unmarshal([]byte(mustInProcess(t, dsn, "list", kind, "--json")), &recs); err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// sameJSON reports whether two records encode to the same JSON.
func sameJSON(t *testing.T, a, b record) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

// writeFields writes the default field registry with the line of one field replaced, and
// returns the file's path.
func writeFields(t *testing.T, old, new string) string {
	t.Helper()
	b, err := os.ReadFile("../../store/testdata/legacy_fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), old, new, 1)
	if text == string(b) {
		t.Fatalf("%q is not in store/testdata/legacy_fields.yaml", old)
	}
	path := filepath.Join(t.TempDir(), "fields.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantExit fails unless r exited with code and its stderr holds every part.
func wantExit(t *testing.T, what string, r result, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
	}
	for _, p := range parts {
		if !strings.Contains(r.stderr+r.stdout, p) {
			t.Errorf("%s: output does not contain %q\nstdout: %s\nstderr: %s", what, p, r.stdout, r.stderr)
		}
	}
}

// historyLen returns how many history versions "tandem history --json" lists for a record.
func historyLen(t *testing.T, dsn, kind string, id int64) int {
	t.Helper()
	out := mustInProcess(t, dsn, "history", kind, fmt.Sprint(id), "--json", "--all")
	var h struct {
		Versions []json.RawMessage `json:"versions"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("history --json: %v\n%s", err, out)
	}
	return len(h.Versions)
}

// writeFile writes a test file and returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// importBase is n products with ids 1..n, for a fresh store.
func importBase(n int) string {
	var b strings.Builder
	b.WriteString("kind,id,version,sku,name,price,stock,categories\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "product,%d,1,B-%d,Base %d,%d.50,%d,\"a,b\"\n", i, i, i, i, i)
	}
	return b.String()
}

// leaseJSON is what "tandem lease acquire" prints.
type leaseJSON struct {
	Kind       string `json:"kind"`
	ID         int64  `json:"id"`
	Group      string `json:"group"`
	Holder     string `json:"holder"`
	Token      string `json:"token"`
	Fence      int64  `json:"fence"`
	AcquiredAt string `json:"acquired_at"`
	ExpiresAt  string `json:"expires_at"`
}

// lockRow is one entry of "tandem locks --json".
type lockRow struct {
	Kind      string `json:"kind"`
	ID        int64  `json:"id"`
	Group     string `json:"group"`
	Holder    string `json:"holder"`
	Fence     int64  `json:"fence"`
	ExpiresAt string `json:"expires_at"`
	State     string `json:"state"`
	Token     string `json:"token"` // must never be filled
}

// lineProc is a long-running tandem process whose stdout is read line by line.
type lineProc struct {
	cmd    *exec.Cmd
	lines  chan string // closed at EOF
	stderr *syncBuf
}

// startLines starts tandem with args against dsn and delivers its stdout lines. The process
// is killed at the end of the test if it is still running.
func startLines(t *testing.T, dsn string, args ...string) *lineProc {
	t.Helper()
	p := &lineProc{cmd: tandemCmd(dsn, args...), lines: make(chan string, 1024), stderr: new(syncBuf)}
	startLineProc(t, p)
	return p
}

// startLineProc starts p's command and delivers its stdout lines (startLines).
func startLineProc(t *testing.T, p *lineProc) {
	t.Helper()
	args := p.cmd.Args[1:]
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start tandem %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
}

// next returns the next stdout line, failing after wait.
func (p *lineProc) next(t *testing.T, wait time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatalf("tandem %s ended without the expected output; stderr: %s", strings.Join(p.cmd.Args[1:], " "), p.stderr)
		}
		return l
	case <-time.After(wait):
		t.Fatalf("no output from tandem %s within %s; stderr: %s", strings.Join(p.cmd.Args[1:], " "), wait, p.stderr)
	}
	return ""
}

// stop sends sig and returns the exit code.
func (p *lineProc) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
		t.Fatalf("tandem %s did not end after %v", strings.Join(p.cmd.Args[1:], " "), sig)
	}
	return p.cmd.ProcessState.ExitCode()
}

// syncBuf collects a process's stderr while the test may read it.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncBuf) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuf) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func mustLeaseJSON(t *testing.T, line string) leaseJSON {
	t.Helper()
	var l leaseJSON
	if err := json.Unmarshal([]byte(line), &l); err != nil || l.Token == "" {
		t.Fatalf("lease JSON %q: %v (or no token)", line, err)
	}
	return l
}

func mustLocks(t *testing.T, dsn string) []lockRow {
	t.Helper()
	out := mustInProcess(t, dsn, "locks", "--json")
	var rows []lockRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("locks --json: %v\n%s", err, out)
	}
	if strings.Contains(out, "token") {
		t.Fatalf("locks --json shows tokens:\n%s", out)
	}
	return rows
}

// feedBound is how long a test waits for a change to reach a watcher before it fails: a
// change that has not arrived by then is taken for lost. It is no latency promise (the
// demo's "within a second" is measured by BenchmarkWatch_Latency), only a bound generous
// enough that a loaded CI machine does not fail a change that is merely slow.
const feedBound = 5 * time.Second
