package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// schemaChange loads FILE and the store's applier: what schema diff and schema apply share.
func (a *app) schemaChange(ctx context.Context, path string) (store.Store, store.SchemaApplier, *store.Registry, error) {
	next, err := a.loadSchema(path)
	if err != nil {
		return nil, nil, nil, usageErr(err)
	}
	if next.Legacy() {
		return nil, nil, nil, usagef("%s is a field registry of the form before schemas; a schema change takes a schema with kinds: (tandem schema show prints the store's)", path)
	}
	st, err := a.store(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	ap, _ := st.(store.SchemaApplier)
	return st, ap, next, nil
}

// loadSchema reads the schema file at path, or stdin for "-".
func (a *app) loadSchema(path string) (*store.Registry, error) {
	if path != "-" {
		return store.LoadRegistry(path)
	}
	data, err := io.ReadAll(a.stdin)
	if err != nil {
		return nil, fmt.Errorf("read schema from stdin: %w", err)
	}
	return store.ParseRegistry("stdin", data)
}

// jsonApply is schema diff's and schema apply's --json output.
type jsonApply struct {
	FromVersion int64              `json:"from_version"`
	ToVersion   int64              `json:"to_version"`
	Applied     bool               `json:"applied"`
	Exported    int64              `json:"exported"`
	ExportFile  string             `json:"export_file,omitempty"`
	Changes     []jsonSchemaChange `json:"changes"`
}

type jsonSchemaChange struct {
	Class    string `json:"class"`
	Op       string `json:"op"`
	Kind     string `json:"kind"`
	Field    string `json:"field,omitempty"`
	Text     string `json:"text"`
	Affected int64  `json:"affected,omitempty"`
	// AffectedDeleted counts the deleted records whose tombstones hold a value it takes.
	AffectedDeleted int64 `json:"affected_deleted,omitempty"`
}

// applyJSON returns res as --json prints it.
func applyJSON(res *store.ApplyResult, exportFile string) jsonApply {
	out := jsonApply{FromVersion: res.FromVersion, ToVersion: res.ToVersion, Applied: res.Applied, Exported: res.Exported,
		Changes: []jsonSchemaChange{}}
	if res.Exported > 0 {
		out.ExportFile = exportFile
	}
	if res.Diff != nil {
		for _, c := range res.Diff.Changes {
			out.Changes = append(out.Changes, jsonSchemaChange{Class: string(c.Class), Op: string(c.Op), Kind: string(c.Kind),
				Field: c.Field, Text: c.String(), Affected: max(c.Affected, 0), AffectedDeleted: c.AffectedDeleted})
		}
	}
	return out
}

// printDiff writes what a schema change does, one change a line, or that it does nothing.
func (a *app) printDiff(res *store.ApplyResult, verb string) {
	if res.Diff == nil || len(res.Diff.Changes) == 0 {
		fmt.Fprintf(a.stdout, "no change: the file is the store's schema version %d\n", res.FromVersion)
		return
	}
	fmt.Fprintf(a.stdout, "%s schema version %d:\n", verb, res.FromVersion)
	fmt.Fprint(a.stdout, safe.Text(res.Diff.String()))
}

func newSchemaDiffCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff FILE",
		Short: "Say what applying a schema file would change, and what it would refuse",
		Long: `Diff compares FILE with the schema the store keeps and prints each change on a line:
additive changes (a new kind or field, a wider limit, a new enum value, labels, owners,
rules, search, sort, title, a rename declared with rename_from), destructive ones (a
dropped kind or field, a narrower type or limit, a removed enum value) with how many
records hold the values they would lose, and changes tandem does not make. Nothing is
written.`,
		Example: `  tandem schema diff schema.yaml
  tandem --db parts.db schema diff schema.yaml --json`,
		Args: exactArgs(1, "a schema file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, ap, next, err := a.schemaChange(ctx, args[0])
			if err != nil {
				return err
			}
			var res *store.ApplyResult
			if ap == nil {
				diff, err := store.DiffSchema(st.Registry(), next)
				if err != nil {
					return err
				}
				res = &store.ApplyResult{Diff: diff, FromVersion: st.Registry().Version(), ToVersion: st.Registry().Version()}
			} else if res, err = ap.ApplySchema(ctx, next, store.ApplyOptions{DryRun: true}); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, applyJSON(res, ""))
			}
			a.printDiff(res, "changes to")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"from_version", "to_version", "applied", "changes": [{"class", "op", "kind", "field", "text", "affected"}]}`)
	return cmd
}

func newSchemaApplyCmd(a *app) *cobra.Command {
	var (
		dryRun, destructive, asJSON bool
		export                      string
	)
	cmd := &cobra.Command{
		Use:   "apply FILE",
		Short: "Change the store's schema to FILE while others keep working",
		Long: `Apply makes FILE the store's schema, as its next version, in one transaction that
others' saves wait for: new kinds get their tables, new fields their columns (with their
defaults), newly searched or sorted fields their indexes, renames (rename_from) keep
history under the new name. Destructive changes are refused with how many records hold
the values they would lose; --allow-destructive applies them after writing those values,
as JSON lines, to an export file it names (--export FILE, else a new file in the current
directory). A client that opened the store before the change has each write checked
against the new schema too: what it still allows is saved (after additive changes, a value
within a narrowed limit); a value it refuses, or a write to a kind with a field renamed or
dropped, writes nothing and is refused (exit 2) with a message to open the store again.
tandem opened afterwards runs the new schema. Two applies never interleave: of two at once,
the one that runs second is refused (exit 3; exit 2 when its file lacks what the first
added) or finds nothing to do. FILE - reads the schema from stdin (the only way over SSH,
where only an admin may apply).`,
		Example: `  tandem schema apply schema.yaml --dry-run
  tandem schema apply schema.yaml
  tandem schema apply schema.yaml --allow-destructive --export lost.jsonl`,
		Args: exactArgs(1, "a schema file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if export != "" && !destructive {
				return usagef("--export names where --allow-destructive writes the values it drops; give both")
			}
			ctx := cmd.Context()
			st, ap, next, err := a.schemaChange(ctx, args[0])
			if err != nil {
				return err
			}
			if cs, err := tsync.CopyOf(ctx, st); err != nil {
				return err
			} else if cs != nil && !dryRun {
				return usagef("this store is a working copy of %s, which runs its source's schema: apply the change to the source "+
					"(tandem schema apply --db SOURCE %s), then tandem sync brings it here", safe.Line(cs.Source), safe.Line(args[0]))
			}
			if ap == nil {
				return usagef("this store cannot change its schema in this version of tandem; " +
					"export its records, make a new store with tandem init --schema FILE and import them (ids are kept)")
			}
			ctx, err = a.actor(ctx)
			if err != nil {
				return err
			}
			o := store.ApplyOptions{BaseVersion: st.Registry().Version(), DryRun: dryRun, AllowDestructive: destructive}
			var out *os.File
			if destructive && !dryRun {
				if export == "" {
					export = fmt.Sprintf("tandem-schema-v%d-lost-%s.jsonl", o.BaseVersion, time.Now().UTC().Format("20060102T150405Z"))
				}
				if out, err = os.OpenFile(export, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
					return usagef("--export: %v (the export file must be new)", err)
				}
				o.ExportTo = out
			}
			res, err := ap.ApplySchema(ctx, next, o)
			// A store that had to run the change's transaction again after the export was
			// written refuses (EBUSY) rather than export twice: the file is the CLI's own,
			// so it starts it afresh and applies again, a few times at most.
			for try := 1; out != nil && store.ErrorCode(err) == store.EBUSY && try < 3; try++ {
				if _, serr := out.Seek(0, 0); serr != nil {
					break
				}
				if terr := out.Truncate(0); terr != nil {
					break
				}
				res, err = ap.ApplySchema(ctx, next, o)
			}
			if out != nil {
				if cerr := out.Close(); err == nil && cerr != nil {
					err = fmt.Errorf("write %s: %w", export, cerr)
				}
				if res == nil || res.Exported == 0 {
					_ = os.Remove(export)
				}
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, applyJSON(res, export))
			}
			if dryRun || !res.Applied {
				a.printDiff(res, "would change")
				return nil
			}
			a.printDiff(res, "changed")
			fmt.Fprintf(a.stdout, "the store's schema is now version %d\n", res.ToVersion)
			if res.Exported > 0 {
				fmt.Fprintf(a.stdout, "%s written to %s\n", plural(int(res.Exported), "dropped value"), safe.Line(export))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would change and what would be refused; write nothing")
	cmd.Flags().BoolVar(&destructive, "allow-destructive", false, "apply destructive changes too, after exporting the values they drop")
	cmd.Flags().StringVar(&export, "export", "", "with --allow-destructive: the new file the dropped values go to (JSON lines)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"from_version", "to_version", "applied", "exported", "export_file", "changes"}`)
	return cmd
}
