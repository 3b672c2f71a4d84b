package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/exchange"
	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

func newImportCmd(a *app) *cobra.Command {
	var (
		format, prefix                      string
		dryRun, merge, allOrNothing, asJSON bool
		rawCells, all                       bool
		batch                               int
	)
	cmd := &cobra.Command{
		Use:   "import FILE [--format csv|jsonl|json] [--key-prefix P] [--dry-run] [--merge] [--all-or-nothing] [--raw-cells] [--all] [--batch N]",
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
  - every row carries an idempotency key made of --key-prefix (default "import"), its
    position among the rows and its content, never the file's name: importing the
    same rows again (the same file, a copy under another name, or stdin) changes
    nothing, and an import that was killed can be run again to finish. A row whose
    content changed is a new row and applies.

Rows are applied up to a thousand to a transaction (--batch; each row in a savepoint
of its own: a refused row leaves nothing, the others land; a batch commits after a
quarter second of writes at most); others see each batch as it commits, and an import
killed midway has landed whole batches only.

The report starts with the summary: how many rows were created, updated, unchanged,
conflict, leased or invalid, the time and the rows per second. Then it lists the rows
that need attention (conflict, leased, invalid, not-written, or with fields your role
may not write left as they are), one line each: its
position among the rows and its first line in the file (a JSON array on one line has
every row on line 1), the outcome, and why; --all lists every row, and --json prints
every row as JSON. On a terminal a progress bar shows the rate and the time left. A file that cannot be
read as a whole (not CSV or JSON, an unknown column, a row over 64 MiB, empty, JSON
Lines whose last line is cut short) is refused before anything is written. Stdin is
read as CSV unless --format says otherwise. Every later reading of the file is checked
against a digest of the first: a file that changes while it is imported stops the
import (exit 2) before a changed row is applied, and the report lists the rows that
landed before (none with --all-or-nothing when the check saw the change).

--dry-run reports the same and writes nothing. --all-or-nothing first checks every
row (as --dry-run) and writes nothing when any would not land (those that would
have landed are reported not-written); it is not one
transaction: a record changed by someone else between the check and the write can
still refuse its row after earlier rows landed (the report says which; re-running
the same import finishes it).

Export defuses CSV text cells for spreadsheets ('=x); import takes that quote off
again: a text cell that starts with quotes followed by =, +, -, @, a tab or a carriage
return is read with one quote less, so an export imports back unchanged. --raw-cells
reads every cell as it is (for a file exported with --raw-cells, or written by hand).
JSON is read as it is.

Exit codes: 0 every row landed (or was unchanged), 2 some rows were invalid, 4 some
were leased, 3 some conflicted (in that order of precedence); the other rows landed.
A file refused as a whole exits 2.`,
		Example: `  tandem import products.csv
  tandem import docs.jsonl --as system --key-prefix nightly-2026-12-01
  tandem import edited.csv --merge --dry-run`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			guessed := format == ""
			if format == "" {
				format = string(exchange.FormatOf(path))
			}
			f, err := exchange.ParseFormat(format)
			if err != nil {
				return usageErr(err)
			}
			if prefix == "" {
				// Not the file's name: the same rows under another name, or from stdin,
				// are the same import and must not apply twice (a --merge of a counter
				// would add its delta again). The key's position and digest tell rows apart.
				prefix = exchange.DefaultKeyPrefix
			}
			if len(prefix) > exchange.MaxKeyPrefix {
				return usagef("--key-prefix: at most %d bytes", exchange.MaxKeyPrefix)
			}
			ctx, err := a.actor(cmd.Context())
			if err != nil {
				return err
			}
			// One refusal for a reader's import, not one per row: the store refuses each of
			// their writes anyway (a dry run writes nothing and may run).
			if act, aerr := store.ActorFrom(ctx); aerr == nil && !dryRun {
				if err := act.CheckWrite("import"); err != nil {
					return err
				}
			}
			var in io.Reader = a.stdin
			if path != "-" {
				file, err := os.Open(path)
				if err != nil {
					return usageErr(fmt.Errorf("import: %w", err))
				}
				defer file.Close()
				if fi, err := file.Stat(); err == nil && fi.IsDir() {
					return usagef("import: %s is a directory; give the file to import (CSV, JSON Lines or JSON), or - for stdin", path)
				}
				in = file
			}
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			if err := checkCopyWriter(ctx, st); err != nil {
				return fmt.Errorf("import: %w", err)
			}
			src, err := exchange.NewSource(in, f, st.Registry())
			if err != nil {
				return err
			}
			defer src.Close()
			if rawCells {
				src.ReadRawCells()
			}
			defer collectLess()()
			n, err := src.Scan()
			if err != nil && path == "-" && guessed && errors.Is(err, exchange.ErrLooksJSON) {
				return usagef("import -: stdin is read as CSV unless --format says otherwise, and it starts like JSON: pass --format jsonl (or --format json); nothing was imported")
			}
			if err != nil {
				return fmt.Errorf("import %s: %w", path, err)
			}
			rep, err := exchange.NewReport()
			if err != nil {
				return err
			}
			defer rep.Close()
			if batch < 1 {
				return usagef("--batch must be at least 1")
			}
			im := exchange.NewImporter(st, exchange.ImportOptions{KeyPrefix: prefix, Merge: merge, DryRun: dryRun, BatchRows: batch})
			bar := a.newProgress("import", n)
			start := time.Now()
			err = im.ApplyAll(ctx, src, allOrNothing, bar.set, rep)
			bar.finish()
			if perr := printImport(a.stdout, rep, importPrint{dryRun: dryRun, asJSON: asJSON, all: all, took: time.Since(start)}); perr != nil && err == nil {
				err = perr
			}
			if err != nil {
				return err
			}
			return importExit(rep.Summary())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "", "csv, jsonl or json (default: from the file's extension, else csv)")
	fl.StringVar(&prefix, "key-prefix", "", "start of every row's idempotency key (default: import); the row's position and content follow")
	fl.BoolVar(&dryRun, "dry-run", false, "report what would happen and write nothing")
	fl.BoolVar(&merge, "merge", false, "merge rows edited from an older version instead of reporting a conflict")
	fl.BoolVar(&allOrNothing, "all-or-nothing", false, "write nothing when any row would not land (checked first; see above)")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON (every row)")
	fl.IntVar(&batch, "batch", exchange.DefaultBatchRows, "rows per transaction (1: each row in a transaction of its own)")
	fl.BoolVar(&all, "all", false, "list every row in the report, not only those that need attention")
	fl.BoolVar(&rawCells, "raw-cells", false, "read CSV text cells as they are, without taking off the quote export puts before =, +, -, @ cells")
	return cmd
}

// importGCPercent and importMemoryLimit are the collector's settings while an import runs
// (collectLess). An import's live heap is a few batches of rows, a few MB, and it allocates
// a little for every cell of every row, so at Go's default (GOGC=100) the collector ran
// every few MB: a load of 100,000 new rows took a third more processor time than at 400.
// The soft limit makes it run sooner if the heap ever grows past it, so that resident
// memory stays bounded whatever the rows (under 100 MB at a million rows).
const (
	importGCPercent   = 400
	importMemoryLimit = 96 << 20
)

// collectLess sets the collector for an import (importGCPercent, importMemoryLimit) unless
// GOGC or GOMEMLIMIT set it already, and returns what restores it.
func collectLess() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gc := debug.SetGCPercent(importGCPercent)
	limit := debug.SetMemoryLimit(importMemoryLimit)
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}

// jsonImport is the JSON form of an import's report.
type jsonImport struct {
	DryRun  bool              `json:"dry_run"`
	Summary exchange.Summary  `json:"summary"`
	Rows    []exchange.Result `json:"rows"`
}

// importHeader is the first line of an import's table.
var importHeader = [...]string{"ROW", "LINE", "OUTCOME", "KIND", "ID", "VERSION", "FIELDS"}

// importCells returns a report row's aligned cells and its message.
func importCells(r exchange.Result) (cells [len(importHeader)]string, msg string) {
	id, v := "", ""
	if r.ID != 0 {
		id = strconv.FormatInt(r.ID, 10)
	}
	if r.Version != 0 {
		v = strconv.FormatInt(r.Version, 10)
	}
	return [...]string{strconv.Itoa(r.Row), strconv.Itoa(r.Line), string(r.Outcome), string(r.Kind), id, v,
		cut(strings.Join(r.Fields, ","), 40)}, safe.Line(r.Message)
}

// importPrint is how an import's report is printed: as a dry run's, as JSON, with every
// row (all) or only those that need attention, and the time the rows took.
type importPrint struct {
	dryRun, asJSON, all bool
	took                time.Duration
}

// needsAttention reports whether a row is listed in a report without --all: it did not land
// (conflict, leased, invalid, not-written), or fields of it the role may not write were
// left as they are.
func needsAttention(r exchange.Result) bool {
	switch r.Outcome {
	case exchange.Created, exchange.Updated, exchange.Unchanged:
		return len(r.LeftAlone) > 0
	}
	return true
}

// printImport writes the report: the summary (the counts, the time and the rate), then one
// line per row that needs attention (every row with all); --json as one JSON document with
// every row. The rows are read from rep one at a time, twice for the table (its columns'
// widths, then the lines), so a report of any length is printed in constant memory. The
// table is what a tabwriter.Writer (padding 2, spaces) makes of the rows listed.
func printImport(w io.Writer, rep *exchange.Report, p importPrint) error {
	sum := rep.Summary()
	if p.asJSON {
		return printImportJSON(w, rep, sum, p.dryRun)
	}
	var parts []string
	for _, o := range []exchange.Outcome{exchange.Created, exchange.Updated, exchange.Unchanged,
		exchange.NotWritten, exchange.Conflict, exchange.Leased, exchange.Forbidden, exchange.Invalid} {
		if sum[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", sum[o], o))
		}
	}
	what := rows(rep.Len())
	if p.dryRun {
		what += " (dry run: nothing written)"
	}
	if len(parts) == 0 {
		parts = []string{"nothing to import"}
	}
	took := p.took.Round(time.Millisecond)
	if p.took < time.Second {
		took = p.took.Round(time.Microsecond * 100)
	}
	// Whole rows a second, but with a decimal under ten: a few rows held up by a lock
	// would read "0 rows/s".
	rate := float64(rep.Len()) / max(p.took.Seconds(), 1e-6)
	prec := 0
	if rate > 0 && rate < 10 {
		prec = 1
	}
	if _, err := fmt.Fprintf(w, "%s in %s (%.*f rows/s): %s\n", what, took, prec, rate,
		strings.Join(parts, ", ")); err != nil {
		return err
	}
	listed := func(r exchange.Result) bool { return p.all || needsAttention(r) }
	var widths [len(importHeader)]int
	grow := func(cells [len(importHeader)]string) {
		for i, c := range cells {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	grow(importHeader)
	n := 0
	if err := rep.Each(func(r exchange.Result) error {
		if listed(r) {
			cells, _ := importCells(r)
			grow(cells)
			n++
		}
		return nil
	}); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	line := func(cells [len(importHeader)]string, msg string) error {
		var b strings.Builder
		for i, c := range cells {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]+2-utf8.RuneCountInString(c)))
		}
		b.WriteString(msg)
		b.WriteByte('\n')
		_, err := io.WriteString(w, b.String())
		return err
	}
	if err := line(importHeader, "MESSAGE"); err != nil {
		return err
	}
	return rep.Each(func(r exchange.Result) error {
		if !listed(r) {
			return nil
		}
		return line(importCells(r))
	})
}

// printImportJSON writes the report as writeJSON writes a jsonImport, a row at a time.
func printImportJSON(w io.Writer, rep *exchange.Report, sum exchange.Summary, dryRun bool) error {
	head, err := json.MarshalIndent(jsonImport{DryRun: dryRun, Summary: sum, Rows: []exchange.Result{}}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	if rep.Len() == 0 {
		_, err := w.Write(append(safe.JSON(head), '\n'))
		return err
	}
	head, ok := bytes.CutSuffix(head, []byte("[]\n}"))
	if !ok {
		return fmt.Errorf("encode JSON: unexpected end of %q", head)
	}
	if _, err := w.Write(append(safe.JSON(head), '[')); err != nil {
		return err
	}
	sep := "\n    "
	if err := rep.Each(func(r exchange.Result) error {
		b, err := json.MarshalIndent(r, "    ", "  ")
		if err != nil {
			return fmt.Errorf("encode JSON: %w", err)
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		sep = ",\n    "
		_, err = w.Write(safe.JSON(b))
		return err
	}); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n  ]\n}\n")
	return err
}

// checkCopyWriter refuses a whole import into st by the actor of ctx when st is a working
// copy that takes no writes from it (store.CheckCopyWriter: none by --as system), before any
// row is read: every row would be refused alike.
func checkCopyWriter(ctx context.Context, st store.Store) error {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return err
	}
	cs, err := store.CopyOf(ctx, st)
	if err != nil || cs == nil {
		return err
	}
	return store.CheckCopyWriter(cs, actor)
}
