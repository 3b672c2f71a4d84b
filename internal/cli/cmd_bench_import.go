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
		rows   int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "import [--rows N]",
		Short: "Import and export against tandem's per-row write and the database's own CSV export",
		Long: `import creates --rows products by importing a CSV file, writes each once by the
relative path of bench contention (stock += 1 with an idempotency key), then imports
a file that sets each one's stock (version-checked, keyed), and exports them as CSV,
then exports the same rows and columns with the database's own tool (sqlite3 -csv or
psql \copy, which must be on $PATH). It prints the times and two ratios: the updating
import to the relative path, and tandem's export to the native one.`,
		Example: `  tandem bench import --db /tmp/bench.db --create --rows 100000
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
			dir, err := os.MkdirTemp("", "tandem-bench-import-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			res, err := bench.Import(cmd.Context(), bench.ImportConfig{Rows: rows, DSN: a.dsn, Dir: dir,
				Open: func(ctx context.Context) (store.Store, error) {
					if a.create {
						st, _, err := createStore(ctx, a.dsn, store.Options{Registry: reg}, nil)
						return st, err
					}
					return openStore(ctx, a.dsn, store.Options{Registry: reg})
				}})
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
	return cmd
}
