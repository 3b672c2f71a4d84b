package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/bench"
	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/torture"
)

func newBenchCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure write strategies, the text merge and the body editor",
		Long: `bench measures tandem side by side with its baselines in one run, so the ratios
mean something on a shared machine: write strategies against a raw UPDATE,
tandem merge-file against git merge-file, and editor keystrokes on long bodies
against short ones. BENCHMARKS.md has the numbers and what they mean.`,
		Example: `  tandem --db /tmp/bench.db --create bench contention --strategy raw,relative --workers 4
  tandem bench merge --sizes 1000,10000`,
	}
	cmd.AddCommand(newBenchContentionCmd(a), newBenchMergeCmd(a), newBenchEditorCmd(a), newBenchWriterCmd(a), newBenchSyncCmd(a))
	cmd.AddCommand(newBenchImportCmd(a), newBenchServeCmd(a))
	return cmd
}

func newBenchContentionCmd(a *app) *cobra.Command {
	var (
		cfg        bench.ContentionConfig
		strategies string
		procs      bool
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "contention",
		Short: "Concurrent writers incrementing hot rows, per write strategy",
		Long: `contention runs --workers concurrent writers (each with its own connections; with
--procs each in its own OS process) that do --ops increments each on --rows hot
rows, once per strategy:

  raw          a plain UPDATE ... SET stock = stock + 1: the baseline, no tandem code
  relative     tandem's relative change (stock += 1) with an idempotency key
  optimistic   read, version-checked write, bounded retries with jittered backoff
  pessimistic  short database lock: SELECT ... FOR UPDATE or BEGIN IMMEDIATE
  lease        take the editor lease, write under it, release

For each it prints operations per second, the ratio to raw from the same run,
p50 and p99 latency, retries, conflicts, failures after the retry limit, and lost
updates (increments acknowledged but missing from the rows; must be 0).
Each strategy works on fresh rows it creates (products named "bench ...").`,
		Example: `  tandem bench contention --db /tmp/bench.db --workers 4 --ops 500
  tandem bench contention --db postgres://postgres@127.0.0.1/test --rows 16 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := a.registry()
			if err != nil {
				return err
			}
			cfg.DSN = a.dsn
			cfg.Open = func(ctx context.Context) (store.Store, error) {
				// The benchmark makes its own rows, so it may make the store too.
				st, _, err := createStore(ctx, a.dsn, store.Options{Registry: reg}, nil)
				return st, err
			}
			cfg.Strategies = splitList(strategies)
			if procs {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("find the tandem binary: %w", err)
				}
				cfg.Procs = procWriters(exe, a, cfg.Workers, cfg.MaxRetries)
			}
			results, err := bench.Contention(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, results)
			}
			mode := "goroutines, one connection each"
			if procs {
				mode = "OS processes"
			}
			fmt.Fprintf(a.stdout, "contention on %s: %d writers (%s) x %d ops on %d row(s)\n\n",
				safe.Line(dsnWhere(a.dsn)), cfg.Workers, mode, cfg.Ops, cfg.Rows)
			return bench.WriteContention(a.stdout, results)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Workers, "workers", 4, "concurrent writers")
	f.IntVar(&cfg.Ops, "ops", 250, "increments per writer")
	f.IntVar(&cfg.Rows, "rows", 1, "hot rows the writers spread over")
	f.IntVar(&cfg.MaxRetries, "max-retries", 100, "attempts per increment before it counts as failed")
	f.StringVar(&strategies, "strategy", strings.Join(bench.Strategies, ","), "comma-separated strategies to run")
	f.BoolVar(&procs, "procs", false, "run each writer as a separate OS process")
	f.BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

// procWriters returns a bench.ContentionConfig.Procs that starts each writer as a `tandem bench
// writer` process and collects the sample each prints as JSON.
func procWriters(exe string, a *app, workers, maxRetries int) func(context.Context, string, []int64, int) ([]bench.Sample, error) {
	return func(ctx context.Context, strategy string, ids []int64, ops int) ([]bench.Sample, error) {
		samples := make([]bench.Sample, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for i := range workers {
			wg.Go(func() {
				var out, errb bytes.Buffer
				c := exec.CommandContext(ctx, exe, "--db", a.dsn, "--fields", a.fields, "bench", "writer",
					"--strategy", strategy, "--ids", joinIDs(ids), "--ops", strconv.Itoa(ops),
					"--seed", strconv.Itoa(i), "--max-retries", strconv.Itoa(maxRetries))
				c.Stdout, c.Stderr = &out, &errb
				if err := c.Run(); err != nil {
					errs[i] = fmt.Errorf("writer %d: %v: %s", i, err, strings.TrimSpace(errb.String()))
					return
				}
				errs[i] = json.Unmarshal(out.Bytes(), &samples[i])
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return samples, nil
	}
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ",")
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// newBenchWriterCmd is the child of `bench contention --procs`: one writer, its sample as JSON.
func newBenchWriterCmd(a *app) *cobra.Command {
	var (
		strategy, ids   string
		ops, seed, maxR int
	)
	cmd := &cobra.Command{
		Use:    "writer",
		Short:  "One writer of bench contention --procs (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := a.registry()
			if err != nil {
				return err
			}
			idList, err := torture.ParseIDs(ids)
			if err != nil {
				return usageErr(err)
			}
			ctx := cmd.Context()
			w, err := bench.NewWriter(ctx, a.dsn, strategy, func(ctx context.Context) (store.Store, error) {
				return openStore(ctx, a.dsn, store.Options{Registry: reg})
			})
			if err != nil {
				return err
			}
			defer w.Close()
			sample, err := bench.RunWriter(ctx, w, idList, ops, maxR, int64(seed))
			if err != nil {
				return err
			}
			return json.NewEncoder(a.stdout).Encode(sample)
		},
	}
	f := cmd.Flags()
	f.StringVar(&strategy, "strategy", "relative", "write strategy")
	f.StringVar(&ids, "ids", "", "comma-separated hot product ids")
	f.IntVar(&ops, "ops", 100, "increments")
	f.IntVar(&seed, "seed", 0, "random seed")
	f.IntVar(&maxR, "max-retries", 100, "attempts per increment")
	return cmd
}

func newBenchMergeCmd(a *app) *cobra.Command {
	var (
		runs   int
		sizes  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "merge",
		Short: "tandem merge-file against git merge-file on the same inputs",
		Long: `merge generates base, ours and theirs texts of 1,000, 10,000 and 100,000 lines with
scattered edits on both sides, and times 'tandem merge-file -p' and 'git merge-file -p'
on them as whole processes, alternating, keeping the best of --runs. It prints the
time ratio (below 1: tandem is faster), whether both produced the same result, and
how the cost grows from 10k to 100k lines. Without git on PATH only tandem is timed.`,
		Example: `  tandem bench merge
  tandem bench merge --sizes 1000,10000 --runs 3 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find the tandem binary: %w", err)
			}
			var ns []int
			for _, s := range splitList(sizes) {
				n, err := strconv.Atoi(s)
				if err != nil || n < 1 {
					return usagef("--sizes: %q is not a line count", s)
				}
				ns = append(ns, n)
			}
			results, err := bench.Merge(cmd.Context(), exe, ns, runs)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, results)
			}
			return bench.WriteMerge(a.stdout, results)
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 5, "runs per size and tool; the best is kept")
	cmd.Flags().StringVar(&sizes, "sizes", "1000,10000,100000", "comma-separated line counts")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func newBenchEditorCmd(a *app) *cobra.Command {
	var (
		n      int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "editor",
		Short: "Keystroke cost of the body editor on long documents against short ones",
		Long: `editor types --keys keystrokes (each one key press plus one redraw at 80x24) into the
body editor holding documents of 100, 1,000 and 20,000 lines, and prints each cost as
a ratio to the 100-line one. The editor draws only what is on screen, so the ratio
should stay near 1 (the goal is under 2).`,
		Example: `  tandem bench editor
  tandem bench editor --keys 5000 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 1 {
				return usagef("--keys must be at least 1")
			}
			results := bench.Editor(bench.EditorSizes, n)
			if asJSON {
				return writeJSON(a.stdout, results)
			}
			return bench.WriteEditor(a.stdout, results)
		},
	}
	cmd.Flags().IntVar(&n, "keys", 20000, "keystrokes per document size")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}
