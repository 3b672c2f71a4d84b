package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/bench"
	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

func newBenchSyncCmd(a *app) *cobra.Command {
	var (
		products, changes, rounds int
		asJSON                    bool
	)
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Working copies: clone against psql's \\copy, push against direct saves",
		Long: `sync measures offline working copies against their baselines in one run:

  clone   tandem clone --kind product of the store named by --db into a new SQLite
          file, against psql -c "\copy products to FILE" of the same table (when
          --db is a PostgreSQL DSN and psql is on PATH)
  push    one tandem sync that pushes --changes local saves (one per product),
          against the same number of saves made directly on the source

Each is measured --rounds times, taking turns with its baseline; the figures
are the medians, and the ratio is the median of the rounds' ratios.

The source needs --products products; missing ones are created first (named
bench-sync-N; not measured), so point --db at a database for benchmarks.`,
		Example: `  tandem bench sync --db postgres://postgres@127.0.0.1/bench --products 100000
  tandem bench sync --db /tmp/bench.db --products 10000 --changes 1000 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if products < 1 || changes < 1 || rounds < 1 {
				return usagef("--products, --changes and --rounds must be positive")
			}
			if products < 2*changes {
				// The push and the direct saves each take --changes products of their own.
				return usagef("--products must be at least twice --changes (%d): the push and the direct saves each change products of their own", changes)
			}
			reg, err := a.registry()
			if err != nil {
				return err
			}
			src, _, err := createStore(ctx, a.dsn, store.Options{Registry: reg}, nil)
			if err != nil {
				return err
			}
			defer src.Close()
			dir, err := os.MkdirTemp("", "tandem-bench-sync-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			cfg := bench.SyncConfig{Source: src, Products: products, Changes: changes, Rounds: rounds, Dir: dir,
				OpenCopy: func(ctx context.Context, path string) (store.WorkingCopy, error) {
					return sqlite.Open(ctx, path, store.Options{Registry: reg})
				},
				CloneFile: func(ctx context.Context, path string) error {
					// What tandem clone --kind product does, temporary file and link included.
					_, err := cloneInto(ctx, src, path, reg, tsync.CloneOptions{Kinds: []store.Kind{store.KindProduct}, Source: "bench"})
					return err
				}}
			if psql, err := exec.LookPath("psql"); err == nil && isPostgresDSN(a.dsn) {
				out := filepath.Join(dir, "products.copy")
				cfg.Export = func(ctx context.Context) (time.Duration, error) {
					c := exec.CommandContext(ctx, psql, "-X", "-q", "-d", a.dsn, "-c", `\copy products to '`+out+`'`)
					c.Stderr = a.stderr
					start := time.Now()
					if err := c.Run(); err != nil {
						return 0, fmt.Errorf("psql \\copy: %w", err)
					}
					return time.Since(start), nil
				}
			}
			res, err := bench.Sync(ctx, cfg)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, res)
			}
			fmt.Fprintf(a.stdout, "working copies of %s\n\n", safe.Line(dsnWhere(a.dsn)))
			return bench.WriteSync(a.stdout, res)
		},
	}
	f := cmd.Flags()
	f.IntVar(&products, "products", 100_000, "products the source must hold (missing ones are created first)")
	f.IntVar(&changes, "changes", 1000, "saves to push, and to make directly")
	f.IntVar(&rounds, "rounds", bench.SyncRounds, "rounds of each measurement, taking turns with its baseline")
	f.BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}
