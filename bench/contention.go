// Package bench measures tandem's write strategies under contention, its text merge against
// git, and the body editor's keystroke cost, as ratios taken side by side in one run.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Strategies are the ways a writer can increment a hot counter, in the order they are run.
// raw is the baseline with no tandem code in it.
var Strategies = []string{"raw", "relative", "optimistic", "pessimistic", "lease"}

// ContentionConfig describes one contention run.
type ContentionConfig struct {
	DSN        string
	Workers    int      // concurrent writers, each with its own connection(s)
	Ops        int      // increments per writer
	Rows       int      // hot rows the writers spread over (1: one hot row)
	Strategies []string // which strategies, from Strategies
	MaxRetries int      // bound for optimistic and lease attempts per operation
	// Open opens a store on DSN with its own connections; each writer gets its own.
	Open func(ctx context.Context) (store.Store, error)
	// Procs, when set, runs each writer as a separate OS process: Procs(ctx, strategy, ids,
	// ops) starts them all and returns their samples. Nil runs writers as goroutines.
	Procs func(ctx context.Context, strategy string, ids []int64, ops int) ([]Sample, error)
}

// Sample is what one writer reports: the latency of each successful operation and its counts.
type Sample struct {
	Latencies []time.Duration `json:"latencies_ns"`
	Retries   int             `json:"retries"`
	Conflicts int             `json:"conflicts"`
	Failures  int             `json:"failures"` // operations that gave up after MaxRetries
}

// Result is one strategy's line of the report.
type Result struct {
	Strategy  string        `json:"strategy"`
	Workers   int           `json:"workers"`
	Ops       int           `json:"ops_per_worker"`
	Rows      int           `json:"rows"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	OpsPerSec float64       `json:"ops_per_sec"`
	Ratio     float64       `json:"ratio_to_raw"` // OpsPerSec / raw's OpsPerSec in the same run
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
	Retries   int           `json:"retries"`
	Conflicts int           `json:"conflicts"`
	Failures  int           `json:"failures"`
	Expected  int64         `json:"expected"` // increments that reported success
	Applied   int64         `json:"applied"`  // increments found in the rows afterwards
	Lost      int64         `json:"lost_updates"`
}

// Contention runs every configured strategy against fresh hot rows and returns one result per
// strategy, with ratios to raw when raw ran.
func Contention(ctx context.Context, cfg ContentionConfig) ([]Result, error) {
	if cfg.Workers < 1 || cfg.Ops < 1 || cfg.Rows < 1 {
		return nil, store.Errorf(store.EINVALID, "workers, ops and rows must be at least 1")
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 100
	}
	for _, s := range cfg.Strategies {
		if !slices.Contains(Strategies, s) {
			return nil, store.Errorf(store.EINVALID, "unknown strategy %q (want %v)", s, Strategies)
		}
	}
	admin, err := cfg.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	defer admin.Close()
	actx := store.WithActor(ctx, store.Actor{Name: "bench", Role: store.RoleSystem})

	var results []Result
	for _, strategy := range cfg.Strategies {
		ids, err := hotRows(actx, admin, cfg.Rows, strategy)
		if err != nil {
			return nil, err
		}
		before, err := stockSum(ctx, admin, ids)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		var samples []Sample
		if cfg.Procs != nil {
			samples, err = cfg.Procs(ctx, strategy, ids, cfg.Ops)
		} else {
			samples, err = runGoroutines(ctx, cfg, strategy, ids)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strategy, err)
		}
		elapsed := time.Since(start)
		after, err := stockSum(ctx, admin, ids)
		if err != nil {
			return nil, err
		}
		results = append(results, summarize(strategy, cfg, elapsed, samples, after-before))
	}
	var raw float64
	for _, r := range results {
		if r.Strategy == "raw" {
			raw = r.OpsPerSec
		}
	}
	for i := range results {
		if raw > 0 {
			results[i].Ratio = results[i].OpsPerSec / raw
		}
	}
	return results, nil
}

func summarize(strategy string, cfg ContentionConfig, elapsed time.Duration, samples []Sample, applied int64) Result {
	r := Result{Strategy: strategy, Workers: cfg.Workers, Ops: cfg.Ops, Rows: cfg.Rows, Elapsed: elapsed, Applied: applied}
	var lat []time.Duration
	for _, s := range samples {
		lat = append(lat, s.Latencies...)
		r.Retries += s.Retries
		r.Conflicts += s.Conflicts
		r.Failures += s.Failures
	}
	r.Expected = int64(len(lat))
	r.Lost = r.Expected - applied
	r.OpsPerSec = float64(len(lat)) / elapsed.Seconds()
	slices.Sort(lat)
	r.P50, r.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	return r
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

// hotRows creates rows fresh products for one strategy's run, so strategies never share rows.
func hotRows(ctx context.Context, s store.Store, rows int, strategy string) ([]int64, error) {
	tag := fmt.Sprintf("%d", time.Now().UnixNano())
	ids := make([]int64, rows)
	ectx := store.WithActor(ctx, store.Actor{Name: "bench", Role: store.RoleEditor})
	for i := range ids {
		rec, err := s.CreateRecord(ectx, store.KindProduct, store.Values{
			"sku":   fmt.Sprintf("BENCH-%s-%s-%d", strategy, tag, i),
			"name":  fmt.Sprintf("bench %s row %d", strategy, i),
			"stock": int64(0),
		})
		if err != nil {
			return nil, fmt.Errorf("create hot row: %w", err)
		}
		ids[i] = rec.ID
	}
	return ids, nil
}

func stockSum(ctx context.Context, s store.Store, ids []int64) (int64, error) {
	var sum int64
	for _, id := range ids {
		rec, err := s.FindRecord(ctx, store.KindProduct, id)
		if err != nil {
			return 0, fmt.Errorf("read hot row: %w", err)
		}
		sum += rec.Fields["stock"].(int64)
	}
	return sum, nil
}

func runGoroutines(ctx context.Context, cfg ContentionConfig, strategy string, ids []int64) ([]Sample, error) {
	samples := make([]Sample, cfg.Workers)
	errs := make([]error, cfg.Workers)
	writers := make([]Writer, cfg.Workers)
	for i := range writers {
		w, err := NewWriter(ctx, cfg.DSN, strategy, cfg.Open)
		if err != nil {
			for _, w := range writers[:i] {
				w.Close()
			}
			return nil, err
		}
		writers[i] = w
	}
	var wg sync.WaitGroup
	for i, w := range writers {
		wg.Go(func() {
			defer w.Close()
			samples[i], errs[i] = RunWriter(ctx, w, ids, cfg.Ops, cfg.MaxRetries, int64(i))
		})
	}
	wg.Wait()
	return samples, errors.Join(errs...)
}

// RunWriter does ops increments with w, spreading them over ids, and reports latencies and
// counts. An operation that still fails after maxRetries attempts counts as a failure; any
// other error stops the writer.
func RunWriter(ctx context.Context, w Writer, ids []int64, ops, maxRetries int, seed int64) (Sample, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(time.Now().UnixNano())))
	s := Sample{Latencies: make([]time.Duration, 0, ops)}
	for range ops {
		id := ids[rng.IntN(len(ids))]
		start := time.Now()
		retries, conflicts, err := w.Increment(ctx, id, maxRetries)
		s.Retries += retries
		s.Conflicts += conflicts
		switch {
		case err == nil:
			s.Latencies = append(s.Latencies, time.Since(start))
		case errors.Is(err, errGaveUp):
			s.Failures++
		default:
			return s, err
		}
	}
	return s, nil
}
