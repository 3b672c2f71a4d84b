package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// feedLineJSON is one line of "tandem watch --json".
type feedLineJSON struct {
	ID       int64    `json:"id"`
	Event    string   `json:"event"`
	Kind     string   `json:"kind"`
	RecordID int64    `json:"record_id"`
	Version  int64    `json:"version"`
	Actor    string   `json:"actor"`
	Fields   []string `json:"fields"`
	Group    string   `json:"group"`
	Fence    int64    `json:"fence"`
}

// TestWatch_DeliversSetFromAnotherProcess: a "watch --json" process prints a set made by
// another process, and then lease events. It checks that the change arrives, failing after
// feedBound; how fast it arrives is BenchmarkWatch_Latency's measurement, not an assertion.
func TestWatch_DeliversSetFromAnotherProcess(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p, w := mustWatchedProduct(t, dsn)
			id := fmt.Sprint(p.ID)

			cur := mustGet(t, dsn, "product", p.ID)
			mustTandem(t, dsn, "--user", "bob", "set", "product", id, "price=31.50", "--expect-version", fmt.Sprint(cur.Version))
			c := waitChange(t, w, func(c feedLineJSON) bool {
				return c.Event == "saved" && c.RecordID == p.ID && c.Version == cur.Version+1
			})
			if c.Actor != "bob" || c.Kind != "product" || strings.Join(c.Fields, ",") != "price" {
				t.Errorf("feed entry = %+v, want product saved by bob (price)", c)
			}

			l := mustLeaseJSON(t, strings.TrimSpace(mustTandem(t, dsn, "--user", "carol", "lease", "acquire", "product", id, "--ttl", "1m")))
			g := waitChange(t, w, func(c feedLineJSON) bool { return c.Event == "lease_granted" && c.RecordID == p.ID })
			if g.Actor != "carol" || g.Group != "editor" || g.Fence != l.Fence {
				t.Errorf("lease event = %+v, want granted to carol, editor, fence %d", g, l.Fence)
			}
			if code := w.stop(t, syscall.SIGINT); code != 0 {
				t.Errorf("watch after SIGINT: exit %d, stderr %s", code, w.stderr)
			}

			// --from replays the log from a cursor, and the text form names who did what.
			out := startLines(t, dsn, "watch", "--from", fmt.Sprint(c.ID))
			if line := out.next(t, feedBound); !strings.Contains(line, fmt.Sprintf("v%d product %s saved by bob (price)", c.Version, id)) {
				t.Errorf("watch --from %d first line = %q", c.ID, line)
			}
			if line := out.next(t, feedBound); !strings.Contains(line, fmt.Sprintf("product %s editor lease granted to carol (fence %d)", id, l.Fence)) {
				t.Errorf("watch --from second line = %q", line)
			}
			out.stop(t, syscall.SIGTERM)
		})
	}
}

// mustWatchedProduct creates a product and starts a "watch --json" process that is known to
// be subscribed (mustWatchReady, with that product).
func mustWatchedProduct(t *testing.T, dsn string) (record, *lineProc) {
	t.Helper()
	p := mustCreate(t, dsn, "product", "sku=WATCH-1", "name=Watched", "stock=5")
	w := startLines(t, dsn, "watch", "--json")
	mustWatchReady(t, dsn, w, fmt.Sprint(p.ID))
	return p, w
}

// mustWatchReady makes harmless writes until the watcher prints one, so the watcher is
// known to be subscribed before the measured write (it starts at the end of the log).
func mustWatchReady(t *testing.T, dsn string, w *lineProc, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mustTandem(t, dsn, "--user", "probe", "adjust", "product", id, "stock", "+1")
		select {
		case _, ok := <-w.lines:
			if !ok {
				t.Fatalf("watch ended: %s", w.stderr)
			}
			// Drain what the other probes produced.
			for {
				select {
				case <-w.lines:
				case <-time.After(feedBound / 5):
					return
				}
			}
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch printed nothing for 20s of writes; stderr: %s", w.stderr)
		}
	}
}

// waitChange reads the watcher's lines until one matches, failing after feedBound.
func waitChange(t *testing.T, w *lineProc, match func(feedLineJSON) bool) feedLineJSON {
	t.Helper()
	deadline := time.After(feedBound)
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				t.Fatalf("watch ended; stderr: %s", w.stderr)
			}
			var c feedLineJSON
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				t.Fatalf("watch --json line %q: %v", line, err)
			}
			if match(c) {
				return c
			}
		case <-deadline:
			t.Fatalf("the change never reached the watcher: nothing within %s, a failure bound far past the "+
				"latency docs/postgres.md quotes (BenchmarkWatch_Latency measures that); stderr: %s", feedBound, w.stderr)
		}
	}
}

// TestWatch_FromPastTheEnd: --from beyond the change after the last is refused at once (exit
// 2, naming the last change) instead of waiting for changes that may never come; --from the
// change after the last waits for it.
func TestWatch_FromPastTheEnd(t *testing.T) {
	waitsBeside(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p, w := mustWatchedProduct(t, dsn)
			id := fmt.Sprint(p.ID)
			mustTandem(t, dsn, "--user", "bob", "adjust", "product", id, "stock", "+1")
			last := waitChange(t, w, func(c feedLineJSON) bool { return c.Actor == "bob" })
			w.stop(t, syscall.SIGTERM)

			for _, from := range []int64{last.ID + 2, 999999} {
				args := []string{"watch", "--from", fmt.Sprint(from)}
				cmd := tandemCmd(dsn, args...)
				kill := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
				r := runResult(t, cmd, args)
				kill.Stop()
				want := fmt.Sprintf("--from %d is past the end of the change log: the last change is %d", from, last.ID)
				if r.code != exitUsage || !strings.Contains(r.stderr, want) {
					t.Errorf("watch --from %d: exit %d, stderr %q; want %d and %q", from, r.code, r.stderr, exitUsage, want)
				}
			}

			next := startLines(t, dsn, "watch", "--json", "--from", fmt.Sprint(last.ID+1))
			mustTandem(t, dsn, "--user", "carol", "adjust", "product", id, "stock", "+1")
			if c := waitChange(t, next, func(feedLineJSON) bool { return true }); c.Actor != "carol" || c.ID <= last.ID {
				t.Errorf("watch --from %d printed %+v first, want carol's adjust", last.ID+1, c)
			}
			next.stop(t, syscall.SIGTERM)
		})
	}
}

// BenchmarkWatch_Latency measures what docs/postgres.md promises of the live feed: how long a
// change takes to reach a running "watch --json" process after the process that made it
// (an adjust) has exited, its transaction committed. It reports the mean (ms/change) and the
// worst (max-ms) of b.N changes, on SQLite and, with TANDEM_TEST_POSTGRES, on PostgreSQL:
//
//	go test ./internal/cli -run '^$' -bench BenchmarkWatch_Latency -benchtime 20x
func BenchmarkWatch_Latency(b *testing.B) {
	stores := []struct {
		name string
		dsn  func(b *testing.B) string
	}{{"sqlite", func(b *testing.B) string {
		dsn := filepath.Join(b.TempDir(), "tandem.db")
		benchTandem(b, dsn, "init")
		return dsn
	}}}
	if os.Getenv("TANDEM_TEST_POSTGRES") != "" {
		stores = append(stores, struct {
			name string
			dsn  func(b *testing.B) string
		}{"postgres", func(b *testing.B) string { return pgtest.DSN(b) }})
	}
	for _, s := range stores {
		b.Run(s.name, func(b *testing.B) {
			dsn := s.dsn(b)
			var p record
			if err := json.Unmarshal([]byte(benchTandem(b, dsn, "create", "product", "sku=LAT-1", "name=Latency", "stock=0", "--json")), &p); err != nil {
				b.Fatal(err)
			}
			id := fmt.Sprint(p.ID)
			w := tandemCmd(dsn, "watch", "--json")
			out, err := w.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := w.Start(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
			lines := make(chan feedLineJSON, 64)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					var c feedLineJSON
					if json.Unmarshal(sc.Bytes(), &c) == nil && c.RecordID == p.ID {
						lines <- c
					}
				}
			}()
			next := func(wait time.Duration) (time.Duration, bool) {
				benchTandem(b, dsn, "adjust", "product", id, "stock", "+1")
				exited := time.Now()
				select {
				case _, ok := <-lines:
					if !ok {
						b.Fatal("watch ended")
					}
					return time.Since(exited), true
				case <-time.After(wait):
					return 0, false
				}
			}
			// The watcher starts at the end of the log: it is subscribed once it has
			// printed a change. Then what the earlier adjusts produced is drained.
			for i := 0; ; i++ {
				if _, ok := next(time.Second); ok {
					break
				} else if i == 30 {
					b.Fatal("watch printed nothing for 30 adjusts")
				}
			}
			for drained := false; !drained; {
				select {
				case <-lines:
				case <-time.After(time.Second):
					drained = true
				}
			}
			var sum, worst time.Duration
			b.ResetTimer()
			for range b.N {
				d, ok := next(30 * time.Second)
				if !ok {
					b.Fatal("the change did not reach the watcher within 30s")
				}
				sum, worst = sum+d, max(worst, d)
			}
			b.ReportMetric(float64(sum.Microseconds())/1000/float64(b.N), "ms/change")
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
		})
	}
}

// benchTandem runs the binary for a benchmark and fails it unless it exits 0.
func benchTandem(b *testing.B, dsn string, args ...string) string {
	b.Helper()
	cmd := tandemCmd(dsn, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("tandem %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
