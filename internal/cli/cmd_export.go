package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/exchange"
	"github.com/tandem-editor/tandem/store"
)

func newExportCmd(a *app) *cobra.Command {
	var (
		format, search, fields, out string
		base, asJSON, rawCells      bool
	)
	cmd := &cobra.Command{
		Use:   "export KIND [--format csv|jsonl|json] [--search TEXT] [--fields a,b] [--raw-cells] [-o FILE]",
		Short: "Write every record of a kind as CSV, JSON Lines or JSON",
		Long: `Export writes every record of one kind (or those a search finds) in id order, as CSV
(RFC 4180, the default), JSON Lines or a JSON array, to stdout or to -o FILE. It
streams: memory holds one page of records however many there are. With -o the format
follows the name's extension (.csv, .jsonl or .ndjson, .json) unless --format says; a
name that says none (out.txt) needs --format.

Columns (CSV) and members (JSON) are kind, id and version, then the fields (all of
them in registry order, or those --fields names in its order), then updated_by and
updated_at. Money is a decimal ("29.99"), a set is "a,b" in one cell (an array in
JSON), a time is RFC 3339, an unset time or ref an empty cell (null). Edit the file
and "tandem import" it back: rows carry the version they were exported at, so an edit
made against an old export conflicts instead of overwriting.

--base adds each field again as base.<field> (a "base" object in JSON): the values the
file was exported with, which "tandem import --merge" merges from when the store has
moved on.

CSV is safe to open in a spreadsheet: a text cell that starts with =, +, -, @, a tab or
a carriage return (which a spreadsheet would run as a formula) is written with a single
quote in front ('=SUM(A1)), as OWASP recommends, and so is one that starts with quotes
followed by one of those ('=x is written ''=x); tandem import takes that one quote off,
so an export imported back is unchanged. Numbers, money, ids and times are never
touched, nor is JSON. --raw-cells writes every cell as it is (import it back with
import --raw-cells).

On a terminal (stdout, or -o naming one: /dev/tty, /dev/stdout) control characters
and escape sequences in the data are shown as visible escapes like \x1b.`,
		Example: `  tandem export products > products.csv
  tandem export documents --format jsonl -o docs.jsonl
  tandem export products --search lamp --fields sku,price`,
		Args: exactArgs(1, "KIND"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				if format != "" && format != string(exchange.JSON) {
					return usagef("--json is --format json; it cannot go with --format %s", format)
				}
				format = string(exchange.JSON)
			}
			if format == "" {
				// A file's name must say its format: -o out.txt silently written as CSV
				// would surprise whoever reads it as something else.
				f, ok := exchange.FormatOfExt(out)
				if !ok && out != "" && out != "-" {
					return usagef("-o %s: the name does not say the format (.csv, .jsonl, .ndjson or .json); give --format csv, jsonl or json", out)
				}
				format = string(f)
			}
			f, err := exchange.ParseFormat(format)
			if err != nil {
				return usageErr(err)
			}
			var names []string
			if fields != "" {
				names = strings.Split(fields, ",")
			}
			kind, err := a.parseKind(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			reg := a.st.Registry()
			w := a.stdout
			var file *outFile
			if out != "" && out != "-" {
				// A file is written beside the target and renamed at the end, so a failed
				// export never leaves half a file under the name asked for (createOutput).
				db := ""
				if isFileDSN(a.dsn) {
					db = a.dsn
				}
				if err := refuseStoreFile(out, db); err != nil {
					return err
				}
				if file, err = createOutput(out); err != nil {
					return usageErr(err)
				}
				defer file.Abort()
				bw := bufio.NewWriterSize(file, 64<<10)
				defer bw.Flush()
				w = bw
			}
			x, err := exchange.NewWriter(w, f, reg, kind, exchange.WriterOptions{Fields: names, Base: base,
				Terminal: file == nil && a.stdoutTTY || file != nil && file.terminal(), RawCells: rawCells})
			if err != nil {
				return usageErr(err)
			}
			if err := checkSearch(search); err != nil {
				return err
			}
			st, err := a.store(cmd.Context())
			if err != nil {
				return err
			}
			if file != nil {
				// The temporary output is removed (file.Abort) when these refuse.
				if wc, ok := st.(store.WorkingCopy); ok {
					if cs, err := wc.CopyState(cmd.Context()); err == nil {
						if err := refuseSourceFile(out, cs.Source); err != nil {
							return err
						}
					}
				}
				if err := file.refuseDatabase(); err != nil {
					return err
				}
			}
			bar := a.newProgress("export", 0)
			if bar != nil && search == "" {
				// Counted only for a bar someone sees: a count of a large table is a read
				// of its smallest index.
				bar.total, _ = st.CountRecords(cmd.Context(), kind)
			}
			err = exchange.Export(cmd.Context(), st, x, store.Filter{Kind: kind, Search: search}, bar.set)
			bar.finish()
			if err != nil {
				return err
			}
			if err := x.Close(); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			if file == nil {
				return nil
			}
			if err := w.(*bufio.Writer).Flush(); err != nil {
				return fmt.Errorf("write %s: %w", out, err)
			}
			return file.Commit()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "", "csv, jsonl or json (default: from -o's extension, which must name one; csv on stdout)")
	fl.StringVar(&search, "search", "", "only records whose searched fields contain this text, in any case: a product's sku, name, description or categories, a document's title, body or tags")
	fl.StringVar(&fields, "fields", "", "comma-separated fields to write, in this order (default: all)")
	fl.StringVarP(&out, "output", "o", "", "write to this file (default: stdout)")
	fl.BoolVar(&base, "base", false, "also write each field as base.<field>, for import --merge")
	fl.BoolVar(&asJSON, "json", false, "the same as --format json")
	fl.BoolVar(&rawCells, "raw-cells", false, "write CSV text cells as they are, without the quote that keeps a spreadsheet from running =, +, -, @ cells as formulas")
	return cmd
}

// outputError is the error of a file operation for -o path: it names the user's path and
// the system's reason, never the temporary file the export writes first.
func outputError(path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("-o %s: cannot write the file: %w", path, err)
}
