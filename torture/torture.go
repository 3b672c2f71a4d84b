// Package torture runs tandem's torture test: several writers do a random mix of every kind
// of write while the harness kills them with SIGKILL (and, on PostgreSQL, cuts their
// connections), then the invariants are checked from the store itself and the writers'
// journals: counters, versions, history, leases, idempotency keys and the tree.
package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Config describes one torture run.
type Config struct {
	Duration  time.Duration
	Workers   int           // concurrent writers
	KillEvery time.Duration // how often a random writer is killed and replaced (0: never)
	Products  int
	Documents int
	Seed      uint64
	Dir       string // where journals go; a temporary directory when empty
	// Open opens the store for the harness's own setup and checks.
	Open func(ctx context.Context) (store.Store, error)
	// Start starts writer i with cfg and returns a handle to kill it. Start is how the run
	// chooses between OS processes of the binary (the real test) and goroutines (tests of the
	// checks themselves).
	Start func(ctx context.Context, cfg WorkerConfig) (Proc, error)
	// Disrupt, when set, is called once halfway through: on PostgreSQL it terminates the
	// writers' backend connections.
	Disrupt func(ctx context.Context) error
	Out     io.Writer // progress and the invariant checks, line by line
}

// Proc is a running writer.
type Proc interface {
	// Kill stops the writer abruptly (SIGKILL for a process).
	Kill() error
	// Stop asks the writer to finish and waits for it; its error is the writer's own failure.
	Stop() error
}

// Report is the outcome of a run.
type Report struct {
	Kills  int
	Checks []Check
}

// OK reports whether every check passed.
func (r *Report) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

// Run sets up fixtures, runs the writers for cfg.Duration while killing some, stops the rest
// and checks the invariants. The report lists each check; an error means the run itself could
// not be carried out.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Workers < 1 || cfg.Products < 1 || cfg.Documents < 2 {
		return nil, store.Errorf(store.EINVALID, "torture needs at least 1 worker, 1 product and 2 documents")
	}
	out := cfg.Out
	if out == nil {
		out = io.Discard
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "tandem-torture-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	s, err := cfg.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	defer s.Close()
	fx, err := setup(ctx, s, cfg)
	if err != nil {
		return nil, fmt.Errorf("set up fixtures: %w", err)
	}
	fmt.Fprintf(out, "torture: %d writers for %s on %d products and %d documents (seed %d)\n",
		cfg.Workers, cfg.Duration, len(fx.products), len(fx.docs), cfg.Seed)

	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	var (
		mu    sync.Mutex
		procs = make([]Proc, cfg.Workers)
		gen   int
	)
	start := func(i int) error {
		gen++
		wc := WorkerConfig{Name: fmt.Sprintf("w%d-%d", i, gen), Seed: cfg.Seed + uint64(gen),
			Products: fx.products, Docs: fx.docs, Journal: filepath.Join(dir, fmt.Sprintf("w%d-%d.jsonl", i, gen))}
		p, err := cfg.Start(ctx, wc)
		if err != nil {
			return fmt.Errorf("start writer: %w", err)
		}
		procs[i] = p
		return nil
	}
	for i := range procs {
		if err := start(i); err != nil {
			return nil, err
		}
	}
	report := &Report{}
	deadline := time.Now().Add(cfg.Duration)
	disrupted := cfg.Disrupt == nil
	var killTick <-chan time.Time
	if cfg.KillEvery > 0 {
		t := time.NewTicker(cfg.KillEvery)
		defer t.Stop()
		killTick = t.C
	}
	var runErr error
loop:
	for {
		select {
		case <-ctx.Done():
			runErr = ctx.Err()
			break loop
		case <-time.After(time.Until(deadline)):
			break loop
		case <-killTick:
			mu.Lock()
			i := rng.IntN(len(procs))
			if err := procs[i].Kill(); err != nil {
				fmt.Fprintf(out, "torture: kill writer %d: %v\n", i, err)
			}
			report.Kills++
			err := start(i)
			mu.Unlock()
			if err != nil {
				runErr = err
				break loop
			}
		}
		if !disrupted && time.Until(deadline) < cfg.Duration/2 {
			disrupted = true
			if err := cfg.Disrupt(ctx); err != nil {
				fmt.Fprintf(out, "torture: disrupt: %v\n", err)
			} else {
				fmt.Fprintln(out, "torture: cut every writer's database connection")
			}
		}
	}
	var stopErrs []error
	for i, p := range procs {
		if err := p.Stop(); err != nil {
			stopErrs = append(stopErrs, fmt.Errorf("writer %d: %w", i, err))
		}
	}
	if runErr != nil {
		return nil, runErr
	}
	fmt.Fprintf(out, "torture: stopped; %d writers killed along the way\n", report.Kills)
	entries, err := readJournals(dir)
	if err != nil {
		return nil, fmt.Errorf("read journals: %w", err)
	}
	report.Checks = check(context.WithoutCancel(ctx), s, fx, entries)
	if len(stopErrs) > 0 {
		report.Checks = append(report.Checks, Check{Name: "writers ran without errors of their own",
			Detail: errors.Join(stopErrs...).Error()})
	}
	for _, c := range report.Checks {
		fmt.Fprintln(out, c)
	}
	return report, nil
}

// fixtures are the records a run works on, with their starting values.
type fixtures struct {
	products   []int64
	docs       []int64
	startStock map[int64]int64
	startPrice map[int64]int64
	firstID    int64 // change-log cursor before the run
}

func setup(ctx context.Context, s store.Store, cfg Config) (*fixtures, error) {
	ectx := store.WithActor(ctx, store.Actor{Name: "torture", Role: store.RoleEditor})
	fx := &fixtures{startStock: map[int64]int64{}, startPrice: map[int64]int64{}}
	tag := time.Now().UnixNano()
	for i := range cfg.Products {
		r, err := s.CreateRecord(ectx, store.KindProduct, store.Values{
			"sku": fmt.Sprintf("TORTURE-%d-%d", tag, i), "name": fmt.Sprintf("torture product %d", i),
			"price": int64(1000 + i), "stock": int64(100 * i)})
		if err != nil {
			return nil, err
		}
		fx.products = append(fx.products, r.ID)
		fx.startStock[r.ID], fx.startPrice[r.ID] = r.Fields["stock"].(int64), r.Fields["price"].(int64)
	}
	for i := range cfg.Documents {
		vals := store.Values{"title": fmt.Sprintf("torture %d document %d", tag, i), "body": "text\n"}
		r, err := s.CreateRecord(ectx, store.KindDocument, vals)
		if err != nil {
			return nil, err
		}
		fx.docs = append(fx.docs, r.ID)
	}
	return fx, nil
}
