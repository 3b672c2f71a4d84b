package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/bench"
	"github.com/tandem-editor/tandem/store"
)

func newBenchImportCmd(a *app) *cobra.Command {
	var (
		rows     int
		asJSON   bool
		loadOnly bool
		pgDSN    string
	)
	cmd := &cobra.Command{
		Use:   "import [--rows N] [--load-only] [--postgres DSN]",
		Short: "Import and export against the database's own load and CSV export",
		Long: `import first writes a CSV file of --rows new products and loads it twice, each a
process of its own: with the database's own tool (sqlite3 .import into a scratch
file, psql \copy into a scratch table; pgx's CopyFrom when psql is not on $PATH),
into a table of the same columns with a unique index on sku, and with tandem import.
Then it exports those rows and changes one in ten's price, and loads that update file
both ways again. It prints the times, rows per second, the ratios to the native load,
the imports' peak resident memory and processor time. With --postgres, the same load
comparison runs next on that PostgreSQL store too (against psql \copy), and both are
printed. --load-only stops there.

Then it creates --rows products by importing a CSV file, writes each once by the
relative path of bench contention (stock += 1 with an idempotency key), then imports
a file that sets each one's stock (version-checked, keyed), and prints the ratio of
the updating import to the relative path.

Then it exports, each export a process of its own taking turns with the database's
own tool (sqlite3 -csv or psql \copy, which must be on $PATH) five times: every
product with every field ("tandem export product", against a SELECT of the same
columns of the whole table; on a store created for the run these are the run's rows),
and the run's rows alone with seven fields ("--search" for the run's SKU prefix,
against "WHERE sku LIKE"). It prints the medians and their ratios.`,
		Example: `  tandem bench import --db /tmp/bench.db --create --rows 100000
  tandem bench import --db /tmp/bench.db --create --rows 1000000 --load-only
  tandem bench import --db /tmp/bench.db --create --postgres postgres://postgres@127.0.0.1/test --rows 100000 --load-only
  tandem bench import --db postgres://postgres@127.0.0.1/test --rows 100000 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rows < 1 {
				return usagef("--rows must be at least 1")
			}
			reg, err := a.registry()
			if err != nil {
				return err
			}
			// tandem's exports run as processes of this very binary, as the native tool's
			// do: both pay a process start, an open of the store and a read of it at rest.
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("bench import: find the tandem binary to export with: %w", err)
			}
			args := []string{"--db", a.dsn}
			if a.fields != "" {
				args = append(args, "--fields", a.fields)
			}
			dir, err := os.MkdirTemp("", "tandem-bench-import-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			opener := func(dsn string) func(ctx context.Context) (store.Store, error) {
				return func(ctx context.Context) (store.Store, error) {
					if a.create {
						st, _, err := createStore(ctx, dsn, store.Options{Registry: reg}, nil)
						return st, err
					}
					return openStore(ctx, dsn, store.Options{Registry: reg})
				}
			}
			cfg := bench.ImportConfig{Rows: rows, DSN: a.dsn, Dir: dir, Exe: exe, Args: args, LoadOnly: loadOnly, Open: opener(a.dsn)}
			if pgDSN != "" {
				if !isPostgresDSN(pgDSN) {
					return usagef("--postgres must name a PostgreSQL store (postgres://…)")
				}
				other := cfg
				other.DSN, other.Open = pgDSN, opener(pgDSN)
				other.Args = append([]string{"--db", pgDSN}, args[2:]...)
				cfg.Other = &other
			}
			res, err := bench.Import(cmd.Context(), cfg)
			if err != nil {
				return fmt.Errorf("bench import: %w", err)
			}
			if asJSON {
				return writeJSON(a.stdout, res)
			}
			return bench.WriteImport(a.stdout, res)
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 10000, "how many products")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON")
	cmd.Flags().BoolVar(&loadOnly, "load-only", false, "compare the loads only: no relative writes, no exports")
	cmd.Flags().StringVar(&pgDSN, "postgres", "", "also compare the loads on this PostgreSQL store (psql \\copy), in the same run")
	return cmd
}
