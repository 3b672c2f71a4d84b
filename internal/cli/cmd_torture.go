package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/torture"
)

func newTortureCmd(a *app) *cobra.Command {
	var cfg torture.Config
	cmd := &cobra.Command{
		Use:   "torture",
		Short: "Random concurrent writers, SIGKILLs and cut connections, then invariant checks",
		Long: `torture starts --workers OS processes of this binary that do a random mix of
writes on fresh records for --duration: relative stock adjusts with idempotency
keys, version-checked price increments (some under an editor lease), checksum
jobs with job keys under a short database lock, and tree moves. Every
--kill-every one writer is killed with SIGKILL and replaced; on PostgreSQL the
writers' connections are also terminated once, halfway. Afterwards it checks and
prints each invariant:

  counters equal their start plus the committed deltas in the operation log
  no acknowledged change was lost, none was applied twice
  versions are contiguous; every editor save is in history, no system write is
  no two leases on one scope were valid at once (fencing numbers increase)
  no idempotency key is stuck PENDING
  the tree has no cycle and respects the depth limit

It exits 0 when every check passes and 1 otherwise.`,
		Example: `  tandem torture --db /tmp/torture.db --duration 30s
  tandem torture --db postgres://postgres@127.0.0.1/test --duration 5m --workers 6`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := a.registry()
			if err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find the tandem binary: %w", err)
			}
			ctx := cmd.Context()
			dsn := a.dsn
			if isPostgresDSN(dsn) {
				app := fmt.Sprintf("tandem-torture-%d", os.Getpid())
				if dsn, err = torture.WithApplicationName(dsn, app); err != nil {
					return usageErr(err)
				}
				cfg.Disrupt = func(ctx context.Context) error {
					_, err := torture.TerminateBackends(ctx, dsn, app)
					return err
				}
			}
			cfg.Open = func(ctx context.Context) (store.Store, error) {
				// Torture makes its own records, so it may make the store too.
				st, _, err := createStore(ctx, dsn, store.Options{Registry: reg}, nil)
				return st, err
			}
			cfg.Start = torture.ExecStarter(exe, dsn)
			cfg.Out = flushing{a} // progress as it happens
			report, err := torture.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if !report.OK() {
				return &exitCodeError{code: exitFailure, msg: "torture: an invariant check failed"}
			}
			fmt.Fprintln(a.stdout, "torture: every invariant held")
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.Duration, "duration", 20*time.Second, "how long the writers run")
	f.IntVar(&cfg.Workers, "workers", 4, "concurrent writer processes")
	f.DurationVar(&cfg.KillEvery, "kill-every", 2*time.Second, "kill and replace a random writer this often (0: never)")
	f.IntVar(&cfg.Products, "products", 4, "hot products to write")
	f.IntVar(&cfg.Documents, "documents", 10, "documents to move around")
	f.Uint64Var(&cfg.Seed, "seed", uint64(time.Now().UnixNano()), "random seed")
	cmd.AddCommand(newTortureWorkerCmd(a))
	return cmd
}

// newTortureWorkerCmd is one writer process of tandem torture.
func newTortureWorkerCmd(a *app) *cobra.Command {
	var (
		wc              torture.WorkerConfig
		products, docus string
	)
	cmd := &cobra.Command{
		Use:    "worker",
		Short:  "One writer of tandem torture (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if wc.Products, err = torture.ParseIDs(products); err != nil {
				return usageErr(err)
			}
			if wc.Docs, err = torture.ParseIDs(docus); err != nil {
				return usageErr(err)
			}
			wc.Name = a.user
			st, err := a.store(cmd.Context())
			if err != nil {
				if cmd.Context().Err() != nil {
					// Stopped (SIGTERM at the run's end) while the store was still
					// opening, as a writer started late on a loaded machine may be:
					// it wrote nothing, which is a clean stop, not a failure.
					return nil
				}
				return err
			}
			return torture.Work(cmd.Context(), st, wc)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&wc.Seed, "seed", 1, "random seed")
	f.StringVar(&wc.Journal, "journal", "", "journal file")
	f.StringVar(&products, "products", "", "comma-separated product ids")
	f.StringVar(&docus, "documents", "", "comma-separated document ids")
	return cmd
}
