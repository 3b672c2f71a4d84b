package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestWatch_SeesSetFromAnotherProcess: a "watch --json" process sees a set made by another
// process (within a second by the spec; the latency is logged), and then lease events.
func TestWatch_SeesSetFromAnotherProcess(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p, w := mustWatchedProduct(t, dsn)
			id := fmt.Sprint(p.ID)

			cur := mustGet(t, dsn, "product", p.ID)
			mustTandem(t, dsn, "--user", "bob", "set", "product", id, "price=31.50", "--expect-version", fmt.Sprint(cur.Version))
			committed := time.Now() // the set process has exited: its transaction committed
			c := waitChange(t, w, func(c feedLineJSON) bool {
				return c.Event == "saved" && c.RecordID == p.ID && c.Version == cur.Version+1
			})
			t.Logf("%s: watch saw bob's set %v after the set process exited (spec: within 1s)", b.name, time.Since(committed))
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
			t.Fatalf("the change did not reach the watcher within %s", feedBound)
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
