package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchServe_Runs: bench serve with two sessions types and saves through the real
// server and the real editor: every save is confirmed and none lost, and keystrokes and
// sightings are measured.
func TestBenchServe_Runs(t *testing.T) {
	if !longTests() {
		t.Skip("a quarter minute of SSH sessions; it runs with TANDEM_LONG_TESTS=1 (CI)")
	}
	r := tandem(t, "", "bench", "serve", "--sessions", "2", "--rounds", "2", "--dwell", "300ms", "--think", "10ms", "--json")
	wantExit(t, "bench serve", r, 0)
	var got struct {
		Saves, Lost, Failed int
		Keystroke           struct{ N int }
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("bench serve --json: %v\n%s", err, r.stdout)
	}
	if got.Saves != 4 || got.Lost != 0 || got.Failed != 0 || got.Keystroke.N != 16 {
		t.Fatalf("bench serve: %+v; want 4 saves, 0 lost, 0 failed, 16 keystrokes\n%s", got, r.stdout)
	}
}

// TestBenchServe_RefusesBadSizes: sizes bench serve cannot measure with are refused with
// exit 2 naming the flags.
func TestBenchServe_RefusesBadSizes(t *testing.T) {
	for _, args := range [][]string{{"--sessions", "1"}, {"--rounds", "0"}, {"--dwell", "1ms"}, {"--think", "-1s"}} {
		r := tandem(t, "", append([]string{"bench", "serve"}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "--sessions must be") {
			t.Errorf("bench serve %v: exit %d, stderr %q; want exit 2 naming the flags", args, r.code, r.stderr)
		}
	}
}
