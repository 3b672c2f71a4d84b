package serve

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// BenchmarkServe runs BenchServe (tandem bench serve) on a new SQLite store, so that it can
// be profiled with go test -cpuprofile. TANDEM_BENCH_SESSIONS sets the sessions (default
// 10), TANDEM_BENCH_ROUNDS the rounds (default 2). Reported per run: the keystroke to frame
// p50 and p99, the save seen by others p99, in milliseconds.
func BenchmarkServe(b *testing.B) {
	sessions, rounds := envInt("TANDEM_BENCH_SESSIONS", 10), envInt("TANDEM_BENCH_ROUNDS", 2)
	ctx := context.Background()
	for b.Loop() {
		dir := b.TempDir()
		st, err := sqlite.OpenWith(ctx, filepath.Join(dir, "bench.db"), store.Options{}, sqlite.OpenConfig{Create: true})
		if err != nil {
			b.Fatal(err)
		}
		res, err := BenchServe(ctx, BenchConfig{Store: st, Dir: dir, Sessions: sessions, Rounds: rounds,
			Dwell: 2 * time.Second, Think: 80 * time.Millisecond})
		_ = st.Close()
		if err != nil {
			b.Fatal(err)
		}
		if res.Lost > 0 || res.Failed > 0 {
			b.Errorf("lost %d, failed steps %d: %v", res.Lost, res.Failed, res.Failures)
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(res.Keystroke.P50), "key-p50-ms")
		b.ReportMetric(ms(res.Keystroke.P99), "key-p99-ms")
		b.ReportMetric(ms(res.Seen.P99), "seen-p99-ms")
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
