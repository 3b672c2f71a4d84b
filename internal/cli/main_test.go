package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
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
