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
			ctx, err := a.actor(cmd.Context())
			if err != nil {
				return err
			}
			kind, id, err := a.parseRecordRef(ctx, args[0], args[1])
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
			if subtree && kind != store.KindDocument {
				return usagef("--subtree restores documents only: a %s has nothing below it", kind)
			}
			st, err := a.store(ctx)
			if err != nil {
				return err
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
			if kind == store.KindDocument {
				more, err := a.restoreDeletedWith(ctx, st, id, subtree, asJSON)
				restored = append(restored, more...)
				if err != nil {
					return err
				}
			}
			if len(restored) == 0 {
				return usagef("document %d is not deleted, and nothing deleted with it is left to restore", id)
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

// restoreDeletedWith deals with the documents the subtree delete of document id removed with
// it (store.DeletedWith): with all, it restores them, parents first, and returns them;
// without, it says on stderr which stay deleted and how to bring them back.
func (a *app) restoreDeletedWith(ctx context.Context, st store.Store, id int64, all, quiet bool) ([]*store.Record, error) {
	ts, found, err := store.DeletedWith(ctx, st, id)
	if err != nil {
		return nil, fmt.Errorf("find the documents deleted with document %d: %w", id, err)
	}
	if !found {
		fmt.Fprintf(a.stderr, "tandem: note: document %d was deleted too long ago to find what was deleted with it; "+
			"tandem history shows each document's delete, and tandem restore brings each back\n", id)
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
		fmt.Fprintf(a.stderr, "tandem: note: %s deleted with it stay deleted (document %s); tandem restore document %d --subtree brings them back\n",
			plural(len(ts), "document"), strings.Join(names, ", document "), id)
		return nil, nil
	}
	var out []*store.Record
	for _, t := range ts {
		res, err := st.RestoreRecord(ctx, store.KindDocument, t.ID, store.Restore{})
		if err != nil {
			return out, fmt.Errorf("restored %d of the %s deleted with document %d; document %d: %w",
				len(out), plural(len(ts), "document"), id, t.ID, err)
		}
		if res.Note != "" {
			fmt.Fprintf(a.stderr, "tandem: note: document %d: %s\n", t.ID, res.Note)
		}
		out = append(out, res.Record)
		if !quiet {
			fmt.Fprintf(a.stdout, "restored document %d: version %d (deleted with document %d)\n", t.ID, res.Record.Version, id)
		}
	}
	return out, nil
}
