package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2E_LocalTwoTerminals: two TUIs of one person on one --local copy, in real terminals,
// and CLI commands on that copy at the same time: each saves, every save lands on the source
// exactly once (the copy's sync lock lets one process push at a time; the others' saves go
// out with its rounds), and each terminal shows the other's save.
func TestE2E_LocalTwoTerminals(t *testing.T) {
	waitsBeside(t)
	tm := newTmuxServer(t)
	e := newLocalEnv(t, 12)
	wantExit(t, "the first --local run clones", e.run(t, "list", "products"), 0)
	dir := t.TempDir()
	for _, w := range []string{"one", "two"} {
		tm.start(w, fmt.Sprintf("exec env XDG_CACHE_HOME=%s XDG_DATA_HOME=%s XDG_CONFIG_HOME=%s TERM=xterm-256color %s --db '%s' --local --user alice",
			filepath.Join(dir, "cache-"+w), e.data, e.config, binary, e.proxied))
		tm.waitFor(w, "online · synced", "[ products ]")
	}
	edit := func(w string, id int64, price string) {
		t.Helper()
		tm.keys(w, "/", "C-u")
		tm.text(w, mustGet(t, e.direct, "product", id).Fields["sku"].(string))
		tm.keys(w, "Enter")
		tm.waitFor(w, "1 of 1 matching")
		tm.keys(w, "Enter")
		tm.waitFor(w, fmt.Sprintf("product %d · v1", id))
		tm.keys(w, "Tab", "Tab", "Tab", "Tab")
		tm.waitFor(w, "▸ price")
		tm.keys(w, "C-u")
		tm.text(w, price)
		tm.keys(w, "C-s")
		// The save lands in the copy ("saved locally"); the syncer may push it before the
		// terminal is looked at, and the line then already says the server has it.
		tm.waitScreen(w, "the save, in the copy or on the server", func(s string) bool {
			return strings.Contains(s, "saved locally") || strings.Contains(s, "saved on the server")
		})
	}
	stock := field(t, e.direct, 3, "stock").(float64)
	// The CLI adjusts run while the terminals save and push.
	adjusts := make(chan result, 4)
	go func() {
		for range 4 {
			adjusts <- runResult(t, e.cmd("--user", "alice", "adjust", "product", "3", "stock", "-1"), nil)
		}
		close(adjusts)
	}()
	edit("one", 5, "55.00")
	edit("two", 6, "66.00")
	for r := range adjusts {
		wantExit(t, "adjust on the copy while the TUIs run", r, 0)
		if !strings.Contains(r.stderr, "pushed to the source") && !strings.Contains(r.stderr, "pushed by the other tandem") {
			t.Fatalf("adjust on the copy while the TUIs run says neither that it pushed nor who does: %q", r.stderr)
		}
		t.Logf("adjust: %s", strings.TrimSpace(r.stderr))
	}
	waitFor(t, "both terminals' saves and the adjusts on the source", func() bool {
		return field(t, e.direct, 5, "price") == "55.00" && field(t, e.direct, 6, "price") == "66.00" &&
			field(t, e.direct, 3, "stock").(float64) == stock-4
	})
	for _, w := range []string{"one", "two"} {
		tm.keys(w, "Escape")
		scr := tm.waitFor(w, "online · synced", "0 conflicts")
		if strings.Contains(scr, "pending") {
			// The header counts pending changes once a poll saw them go: wait for it.
			tm.waitScreen(w, "nothing pending", func(s string) bool { return !strings.Contains(s, "pending") })
		}
	}
	// Exactly once: later rounds of either terminal send nothing again.
	time.Sleep(2 * time.Second)
	if got := field(t, e.direct, 3, "stock").(float64); got != stock-4 {
		t.Fatalf("stock on the source %v, want %v (each adjust once)", got, stock-4)
	}
	for id, price := range map[int64]string{5: "55.00", 6: "66.00"} {
		if r := mustGet(t, e.direct, "product", id); r.Fields["price"] != price || r.Version != 2 {
			t.Fatalf("product %d on the source: price %v v%d, want %s v2", id, r.Fields["price"], r.Version, price)
		}
	}
}
