package cli

import (
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/progress"
)

// TestProgressBar_RateAndTimeLeft: the bar shows the rate so far and the time left at that
// rate; with no total, the count and the rate.
func TestProgressBar_RateAndTimeLeft(t *testing.T) {
	p := &progressBar{bar: progress.New(progress.WithWidth(10)), label: "import", total: 1000}
	got := p.line(250, 10*time.Second)
	for _, want := range []string{"250/1000", "25/s", "30s left"} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q lacks %q", got, want)
		}
	}
	if got := p.line(0, time.Second); !strings.Contains(got, "-- left") {
		t.Errorf("line before the first row %q: want no time left yet", got)
	}
	p.total = 0
	if got := p.line(500, 2*time.Second); !strings.Contains(got, "import 500") || !strings.Contains(got, "250/s") {
		t.Errorf("line without a total %q: want the count and 250/s", got)
	}
}
