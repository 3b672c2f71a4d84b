package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

func newRestoreCmd(a *app) *cobra.Command {
	var (
		asJSON  bool
		leaseTk string
		subtree bool
	)
	cmd := &cobra.Command{
		Use:   "restore KIND ID",
		Short: "Bring back a deleted record, with the values it had when it was deleted",
		Long: `Restore brings back a record that "tandem delete" removed, under the same id, with
every field as its tombstone in history kept it, as the next version. A document whose
parent is gone meanwhile is restored at the root, and restore says so; a product whose
sku another product took meanwhile is refused (exit 2). A record that is not deleted
is refused (exit 2); one history never saw deleted is not found (exit 5). Restoring is
an editor's act (--as system: exit 6).

A document deleted with --subtree comes back alone; restore names the documents deleted
with it that stay deleted. --subtree brings them back too, parents first (also after the
document itself was restored without it); --json then prints an array of the restored
records. On a working copy each restore cancels the pending delete of what it brings back,
and only of that.`,
		Example: `  tandem restore product 42
  tandem restore document 7 --json
  tandem restore document 2 --subtree`,
		Args: exactArgs(2, "KIND ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, kind, id, err := a.actorRecord(cmd, args)
			if err != nil {
				return err
			}
			actor, err := store.ActorFrom(ctx)
			if err != nil {
				return err
			}
			if err := store.CheckDeleter(kind, actor); err != nil {
				return err
			}
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			tree := st.Registry().Tree(kind)
			if subtree && !tree {
				return usagef("--subtree restores the records of a tree kind: a %s has nothing below it", kind)
			}
			res, err := st.RestoreRecord(ctx, kind, id, store.Restore{ParentLeaseToken: leaseTk})
			switch {
			case err == nil:
			case subtree && store.ErrorCode(err) == store.EINVALID:
				// Restored before without --subtree: the documents deleted with it are
				// what is left to do.
				if _, ferr := st.FindRecord(ctx, kind, id); ferr != nil {
					return err
				}
			default:
				return err
			}
			var restored []*store.Record
			if res != nil {
				if res.Note != "" {
					fmt.Fprintf(a.stderr, "tandem: note: %s\n", res.Note)
				}
				restored = append(restored, res.Record)
				if !asJSON {
					fmt.Fprintf(a.stdout, "restored %s %d: version %d\n", kind, id, res.Record.Version)
				}
			}
			if tree {
				more, err := a.restoreDeletedWith(ctx, st, kind, id, subtree, asJSON)
				restored = append(restored, more...)
				if err != nil {
					return err
				}
			}
			if len(restored) == 0 {
				return usagef("%s %d is not deleted, and nothing deleted with it is left to restore", kind, id)
			}
			if asJSON {
				if !subtree {
					return writeJSON(a.stdout, exportRecord(st.Registry(), restored[0]))
				}
				out := make([]any, 0, len(restored))
				for _, r := range restored {
					out = append(out, exportRecord(st.Registry(), r))
				}
				return writeJSON(a.stdout, out)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&subtree, "subtree", false, "also restore the documents deleted with it by delete --subtree, parents first")
	cmd.Flags().StringVar(&leaseTk, "parent-lease", "", "lease token of the parent document's tree lease, when you hold it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the restored record as JSON")
	return cmd
}

// restoreDeletedWith deals with the records the subtree delete of id, of the tree kind, removed
// with it (store.TreeDeletedWith): with all, it restores them, parents first, and returns them;
// without, it says on stderr which stay deleted and how to bring them back.
func (a *app) restoreDeletedWith(ctx context.Context, st store.Store, kind store.Kind, id int64, all, quiet bool) ([]*store.Record, error) {
	ts, found, err := store.TreeDeletedWith(ctx, st, kind, id)
	if err != nil {
		return nil, fmt.Errorf("find the %ss deleted with %s %d: %w", kind, kind, id, err)
	}
	if !found {
		fmt.Fprintf(a.stderr, "tandem: note: %s %d was deleted too long ago to find what was deleted with it; "+
			"tandem history shows each %s's delete, and tandem restore brings each back\n", kind, id, kind)
		return nil, nil
	}
	if len(ts) == 0 {
		return nil, nil
	}
	if !all {
		names := make([]string, 0, len(ts))
		for _, t := range ts {
			names = append(names, fmt.Sprintf("%d \"%s\"", t.ID, safe.Line(t.Title)))
		}
		fmt.Fprintf(a.stderr, "tandem: note: %s deleted with it stay deleted (%s %s); tandem restore %s %d --subtree brings them back\n",
			plural(len(ts), string(kind)), kind, strings.Join(names, ", "+string(kind)+" "), kind, id)
		return nil, nil
	}
	var out []*store.Record
	for _, t := range ts {
		res, err := st.RestoreRecord(ctx, kind, t.ID, store.Restore{})
		if err != nil {
			return out, fmt.Errorf("restored %d of the %s deleted with %s %d; %s %d: %w",
				len(out), plural(len(ts), string(kind)), kind, id, kind, t.ID, err)
		}
		if res.Note != "" {
			fmt.Fprintf(a.stderr, "tandem: note: %s %d: %s\n", kind, t.ID, res.Note)
		}
		out = append(out, res.Record)
		if !quiet {
			fmt.Fprintf(a.stdout, "restored %s %d: version %d (deleted with %s %d)\n", kind, t.ID, res.Record.Version, kind, id)
		}
	}
	return out, nil
}
