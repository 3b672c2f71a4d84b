package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/exchange"
	"github.com/tandem-editor/tandem/internal/safe"
)

func newImportCmd(a *app) *cobra.Command {
	var (
		format, prefix                      string
		dryRun, merge, allOrNothing, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "import FILE [--format csv|jsonl|json] [--key-prefix P] [--dry-run] [--merge] [--all-or-nothing]",
		Short: "Create and update records from a CSV, JSON Lines or JSON file",
		Long: `Import applies a file in export's form (tandem export --help) row by row, each row in
its own transaction, with the rules of a save:

  - a row without an id creates a record; a row with an id updates that record, or,
    when the store has no record with that id, creates it with that id (its version
    starts at 1 again, and the report says so);
  - only the fields that differ from the store are written; a row whose values the
    store already holds is unchanged and writes nothing;
  - when the row has a version, its changes are checked against it: a row edited from
    an older version than the store's is a conflict and writes nothing. With --merge
    it is merged field by field (each field's merge rule) with what changed since,
    the base being the row's base.<field> values (export --base) or else the
    store's history version of the row's version; it lands when no field conflicts;
  - a record under someone's lease is refused (leased, naming the holder) and the
    rest of the import goes on;
  - fields your role (--as) may not write are left as they are, and the report names
    them; values are checked against the field registry;
  - every row carries an idempotency key made of --key-prefix, its position and its
    content: importing the same file again changes nothing, and an import that was
    killed can be run again to finish.

The report has one line per row: its position among the rows and its first line in the
file (a JSON array on one line has every row on line 1), created, updated, unchanged,
conflict, leased or invalid, and why; --json prints it as JSON. A file that cannot be
read as a whole (not CSV or JSON, an unknown column, a row over 64 MiB, empty) is
refused before anything is written.

--dry-run reports the same and writes nothing. --all-or-nothing first checks every
row (as --dry-run) and writes nothing when any would not land; it is not one
transaction: a record changed by someone else between the check and the write can
still refuse its row after earlier rows landed (the report says which; re-running
the same import finishes it).

Exit codes: 0 every row landed (or was unchanged), 2 some rows were invalid, 4 some
were leased, 3 some conflicted (in that order of precedence); the other rows landed.
A file refused as a whole exits 2.`,
		Example: `  tandem import products.csv
  tandem import docs.jsonl --as system --key-prefix nightly-2026-12-01
  tandem import edited.csv --merge --dry-run`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if format == "" {
				format = string(exchange.FormatOf(path))
			}
			f, err := exchange.ParseFormat(format)
			if err != nil {
				return usageErr(err)
			}
			if prefix == "" {
				prefix = "import:" + filepath.Base(path)
			}
			if len(prefix) > exchange.MaxKeyPrefix {
				return usagef("--key-prefix: at most %d bytes", exchange.MaxKeyPrefix)
			}
			ctx, err := a.actor(cmd.Context())
			if err != nil {
				return err
			}
			var in io.Reader = a.stdin
			if path != "-" {
				file, err := os.Open(path)
				if err != nil {
					return usageErr(fmt.Errorf("import: %w", err))
				}
				defer file.Close()
				in = file
			}
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			x, err := exchange.NewReader(in, f, st.Registry())
			if err != nil {
				return usageErr(err)
			}
			rows, err := exchange.ReadAll(x)
			if err != nil {
				return fmt.Errorf("import %s: %w", path, err)
			}
			im := exchange.NewImporter(st, exchange.ImportOptions{KeyPrefix: prefix, Merge: merge, DryRun: dryRun})
			bar := a.newProgress("import", len(rows))
			res, sum, err := im.ApplyAll(ctx, rows, allOrNothing, bar.set)
			bar.finish()
			if perr := printImport(a.stdout, res, sum, dryRun, asJSON); perr != nil && err == nil {
				err = perr
			}
			if err != nil {
				return err
			}
			return importExit(sum)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "", "csv, jsonl or json (default: from the file's extension, else csv)")
	fl.StringVar(&prefix, "key-prefix", "", "start of every row's idempotency key (default: import:<file name>)")
	fl.BoolVar(&dryRun, "dry-run", false, "report what would happen and write nothing")
	fl.BoolVar(&merge, "merge", false, "merge rows edited from an older version instead of reporting a conflict")
	fl.BoolVar(&allOrNothing, "all-or-nothing", false, "write nothing when any row would not land (checked first; see above)")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// jsonImport is the JSON form of an import's report.
type jsonImport struct {
	DryRun  bool              `json:"dry_run"`
	Summary exchange.Summary  `json:"summary"`
	Rows    []exchange.Result `json:"rows"`
}

// printImport writes the report: one line per row, then the counts.
func printImport(w io.Writer, res []exchange.Result, sum exchange.Summary, dryRun, asJSON bool) error {
	if asJSON {
		if res == nil {
			res = []exchange.Result{}
		}
		return writeJSON(w, jsonImport{DryRun: dryRun, Summary: sum, Rows: res})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROW\tLINE\tOUTCOME\tKIND\tID\tVERSION\tFIELDS\tMESSAGE")
	for _, r := range res {
		id, v := "", ""
		if r.ID != 0 {
			id = strconv.FormatInt(r.ID, 10)
		}
		if r.Version != 0 {
			v = strconv.FormatInt(r.Version, 10)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Row, r.Line, r.Outcome, r.Kind, id, v,
			cut(strings.Join(r.Fields, ","), 40), safe.Line(r.Message))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var parts []string
	for _, o := range []exchange.Outcome{exchange.Created, exchange.Updated, exchange.Unchanged,
		exchange.Conflict, exchange.Leased, exchange.Invalid} {
		if sum[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", sum[o], o))
		}
	}
	what := rows(len(res))
	if dryRun {
		what += " (dry run: nothing written)"
	}
	if len(parts) == 0 {
		parts = []string{"nothing to import"}
	}
	_, err := fmt.Fprintf(w, "%s: %s\n", what, strings.Join(parts, ", "))
	return err
}
