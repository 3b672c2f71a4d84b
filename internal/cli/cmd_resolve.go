package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

func newResolveCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resolve KIND ID FIELD=mine|theirs|base|VALUE... | mine|theirs",
		Short: "Resolve a working copy's conflict, field by field",
		Long: `Resolve answers the conflict a sync queued for one record of the working copy named
by --db: every colliding field needs an answer, mine (your value), theirs (the
source's), base (what both started from) or a value. Fields that merged cleanly keep
their merge. The result becomes the local record and is pushed at the next sync,
version-checked against the source again. Nothing changes if an answer is missing or
bad (exit 2).

A record deleted on the source after you edited it has no source version to resolve
against: answering theirs accepts the delete and drops the local record with your edit;
any other answer is refused (exit 2) and the edit stays until the record is restored on
the source, after which a sync brings the restored record in as theirs.

A record created in the copy whose create the source refused (its sku is taken there)
has no theirs or base: answer a value (a new sku) or mine (try the same again at the
next sync); or delete the local record (tandem delete), which drops it with its conflict.

A record you deleted in the copy that the source changed since is answered for the
whole record: mine deletes it on the source too, at the next sync and version-checked
again; theirs keeps the source's record, which the next sync brings back into the copy.
A document the source would not delete because it has children there the copy did not
have takes theirs only: the next sync brings it and them into the copy, where you can
delete the subtree again, seeing all of it.`,
		Example: `  tandem resolve product 42 price=theirs
  tandem resolve product 42 price=92.00
  tandem resolve document 7 body=mine parent_id=theirs
  tandem resolve product 42 theirs`,
		Args: minArgs(3, "KIND ID FIELD=mine|theirs|base|VALUE..."),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validUTF8(args); err != nil {
				return err
			}
			ctx, kind, id, err := a.actorRecord(cmd, args)
			if err != nil {
				return err
			}
			if len(args) == 3 && (args[2] == "mine" || args[2] == "theirs") {
				return a.resolveDelete(ctx, kind, id, args[2], asJSON)
			}
			picks := tsync.Picks{}
			for _, arg := range args[2:] {
				name, val, ok := strings.Cut(arg, "=")
				if !ok || name == "" {
					return usagef("%q: want FIELD=mine, FIELD=theirs, FIELD=base or FIELD=VALUE", arg)
				}
				if _, dup := picks[name]; dup {
					return usagef("%s is answered twice", name)
				}
				picks[name] = val
			}
			wc, _, err := a.workingCopy(ctx)
			if err != nil {
				return err
			}
			vals, err := tsync.Resolve(ctx, wc, kind, id, picks)
			if err != nil {
				return err
			}
			if vals == nil {
				// The source deleted the record and theirs accepted it.
				if asJSON {
					return writeJSON(a.stdout, map[string]any{"kind": kind, "id": id, "dropped": true})
				}
				fmt.Fprintf(a.stdout, "dropped %s %d from the copy with its local edit: the source deleted it\n", kind, id)
				return nil
			}
			reg := wc.Registry()
			var parts []string
			for name := range picks {
				f, _ := reg.Field(kind, name)
				// Quoted as Go quotes strings: a value with spaces reads as one, and a
				// control character or a quote in it cannot change the line.
				parts = append(parts, name+"="+strconv.Quote(f.Format(vals[name])))
			}
			slices.Sort(parts)
			if asJSON {
				out := map[string]any{}
				for name := range picks {
					out[name] = vals[name]
				}
				return writeJSON(a.stdout, map[string]any{"kind": kind, "id": id, "resolved": out})
			}
			fmt.Fprintf(a.stdout, "resolved %s %d: %s; tandem sync sends it to the source\n", kind, id, safe.Line(cut(strings.Join(parts, " "), 200)))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the resolved values as JSON")
	return cmd
}

// resolveDelete answers the conflict of a delete made in the copy for the whole record:
// mine deletes it on the source at the next sync, theirs keeps the source's record.
func (a *app) resolveDelete(ctx context.Context, kind store.Kind, id int64, pick string, asJSON bool) error {
	wc, _, err := a.workingCopy(ctx)
	if err != nil {
		return err
	}
	c, err := tsync.FindConflict(ctx, wc, kind, id)
	if err != nil {
		return err
	}
	if c.Op != store.CopyDelete {
		return usagef("%s %d's conflict is not about a delete (%s): answer it field by field, FIELD=mine|theirs|base|VALUE", kind, id, safe.Line(c.Reason))
	}
	if err := tsync.ResolveDelete(ctx, wc, kind, id, pick); err != nil {
		return err
	}
	if asJSON {
		return writeJSON(a.stdout, map[string]any{"kind": kind, "id": id, "delete": pick == "mine"})
	}
	if pick == "mine" {
		fmt.Fprintf(a.stdout, "resolved %s %d: delete it on the source too; tandem sync sends it, checked against version %d\n", kind, id, c.TheirsVersion)
		return nil
	}
	fmt.Fprintf(a.stdout, "resolved %s %d: the source's record stays; tandem sync brings it back into the copy\n", kind, id)
	return nil
}
