package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// binary is the tandem binary built once by TestMain; the CLI tests run it as real OS
// processes.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tandem-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "make temp dir:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "tandem")
	build := exec.Command("go", "build", "-o", binary, "github.com/tandem-editor/tandem")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tandem:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one tandem process did.
type result struct {
	stdout, stderr string
	code           int
}

// tandem runs the binary against the store dsn as user "tester" and returns what it did.
func tandem(t *testing.T, dsn string, args ...string) result {
	t.Helper()
	cmd := tandemCmd(dsn, args...)
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
	out := mustTandem(t, dsn, "get", kind, fmt.Sprint(id), "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decode get --json: %v\n%s", err, out)
	}
	return r
}

// mustCreate creates a record through "tandem create --json" and returns it.
func mustCreate(t *testing.T, dsn, kind string, assignments ...string) record {
	t.Helper()
	var r record
	out := mustTandem(t, dsn, append([]string{"create", kind, "--json"}, assignments...)...)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decode create --json: %v\n%s", err, out)
	}
	return r
}

// newSQLiteStore makes a new, empty SQLite store with "tandem init" and returns its path
// (commands other than init, seed and the TUI do not create a store).
func newSQLiteStore(t *testing.T) string {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "tandem.db")
	mustTandem(t, dsn, "init")
	return dsn
}

// backend is a store the process tests run against.
type backend struct {
	name string
	dsn  func(t *testing.T) string // a fresh, empty store
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

// TestCLI_AdjustConcurrent runs 4 OS processes at once, each doing "adjust product ID stock
// -1" one after the other (10 each, 250 under TANDEM_LONG_TESTS), and checks that every
// decrement landed.
func TestCLI_AdjustConcurrent(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			const procs, start = 4, 1500
			each := 10
			if longTests() {
				each = 250
			}
			p := mustCreate(t, dsn, "product", "sku=HOT-1", "name=Hot row", fmt.Sprintf("stock=%d", start))
			id := fmt.Sprint(p.ID)

			var wg sync.WaitGroup
			errs := make(chan string, procs*each)
			for w := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						cmd := tandemCmd(dsn, "adjust", "product", id, "stock", "-1")
						if out, err := cmd.CombinedOutput(); err != nil {
							errs <- fmt.Sprintf("worker %d, adjust %d: %v: %s", w, i, err, out)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			failed := 0
			for e := range errs {
				if failed++; failed <= 5 {
					t.Error(e)
				}
			}
			if failed > 0 {
				t.Fatalf("%d of %d adjusts failed", failed, procs*each)
			}
			got := mustGet(t, dsn, "product", p.ID)
			if want := float64(start - procs*each); got.Fields["stock"] != want {
				t.Errorf("stock = %v, want %v", got.Fields["stock"], want)
			}
			if want := int64(1 + procs*each); got.Version != want {
				t.Errorf("version = %d, want %d (one per adjust)", got.Version, want)
			}
		})
	}
}

// TestCLI_SetConcurrent starts several "set --expect-version V" processes at once for a few
// versions in a row: exactly one wins each round, the others exit 3, and the record holds
// the winner's value at version V+1.
func TestCLI_SetConcurrent(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			const writers, rounds = 4, 4
			p := mustCreate(t, dsn, "product", "sku=RACE-1", "name=Race", "price=10.00")
			id := fmt.Sprint(p.ID)
			version := p.Version
			for round := range rounds {
				cmds := make([]*exec.Cmd, writers)
				outs := make([]*bytes.Buffer, writers)
				for w := range writers {
					cmds[w] = tandemCmd(dsn, "set", "product", id,
						fmt.Sprintf("name=round %d writer %d", round, w), fmt.Sprintf("price=%d.%02d", round, w),
						"--expect-version", fmt.Sprint(version))
					outs[w] = new(bytes.Buffer)
					cmds[w].Stdout, cmds[w].Stderr = outs[w], outs[w]
				}
				for _, c := range cmds {
					if err := c.Start(); err != nil {
						t.Fatal(err)
					}
				}
				winner, conflicts := -1, 0
				for w, c := range cmds {
					err := c.Wait()
					switch code := c.ProcessState.ExitCode(); {
					case err == nil && winner == -1:
						winner = w
					case err == nil:
						t.Errorf("round %d: writers %d and %d both won version %d", round, winner, w, version)
					case code == exitConflict:
						conflicts++
						if !strings.Contains(outs[w].String(), "changed since you loaded version") {
							t.Errorf("round %d: conflict message does not explain: %s", round, outs[w])
						}
					default:
						t.Errorf("round %d writer %d: exit %d: %s", round, w, code, outs[w])
					}
				}
				if winner < 0 || conflicts != writers-1 {
					t.Fatalf("round %d: winner %d, %d conflicts; want one winner and %d conflicts", round, winner, conflicts, writers-1)
				}
				got := mustGet(t, dsn, "product", p.ID)
				if got.Version != version+1 {
					t.Fatalf("round %d: version %d, want %d", round, got.Version, version+1)
				}
				if want := fmt.Sprintf("round %d writer %d", round, winner); got.Fields["name"] != want {
					t.Errorf("round %d: name %q, want the winner's %q", round, got.Fields["name"], want)
				}
				if want := fmt.Sprintf("%d.%02d", round, winner); got.Fields["price"] != want {
					t.Errorf("round %d: price %q, want the winner's %q", round, got.Fields["price"], want)
				}
				version = got.Version
			}
		})
	}
}

// TestCLI_AdjustIdempotent shows that an adjust with a key applies once, however often it
// is sent, and that the same key with another delta is refused.
func TestCLI_AdjustIdempotent(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=IDEM-1", "name=Idempotent", "stock=100")
			id := fmt.Sprint(p.ID)
			mustTandem(t, dsn, "adjust", "product", id, "stock", "-5", "--key", "order-77")
			out := mustTandem(t, dsn, "adjust", "product", id, "stock", "-5", "--key", "order-77")
			if !strings.Contains(out, "already applied") {
				t.Errorf("second adjust with the same key: %q, want it to say it was already applied", out)
			}
			got := mustGet(t, dsn, "product", p.ID)
			if got.Fields["stock"] != float64(95) || got.Version != 2 {
				t.Fatalf("after two adjusts with one key: stock %v version %d, want 95 and 2", got.Fields["stock"], got.Version)
			}
			r := tandem(t, dsn, "adjust", "product", id, "stock", "-6", "--key", "order-77")
			if r.code != exitUsage {
				t.Errorf("same key, other delta: exit %d (%s), want %d", r.code, r.stderr, exitUsage)
			}
			if after := mustGet(t, dsn, "product", p.ID); after.Fields["stock"] != float64(95) || after.Version != 2 {
				t.Errorf("refused adjust changed the record: stock %v version %d", after.Fields["stock"], after.Version)
			}
		})
	}
}
