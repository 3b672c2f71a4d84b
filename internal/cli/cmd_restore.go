package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/store"
)

func newRestoreCmd(a *app) *cobra.Command {
	var (
		asJSON  bool
		leaseTk string
	)
	cmd := &cobra.Command{
		Use:   "restore KIND ID",
		Short: "Bring back a deleted record, with the values it had when it was deleted",
		Long: `Restore brings back a record that "tandem delete" removed, under the same id, with
every field as its tombstone in history kept it, as the next version. A document whose
parent is gone meanwhile is restored at the root, and restore says so; a product whose
sku another product took meanwhile is refused (exit 2). A record that is not deleted
is refused (exit 2); one history never saw deleted is not found (exit 5). Restoring is
an editor's act (--as system: exit 6).`,
		Example: `  tandem restore product 42
  tandem restore document 7 --json`,
		Args: exactArgs(2, "KIND ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, id, err := parseRecordRef(args[0], args[1])
			if err != nil {
				return err
			}
			ctx, err := a.actor(cmd.Context())
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
			res, err := st.RestoreRecord(ctx, kind, id, store.Restore{ParentLeaseToken: leaseTk})
			if err != nil {
				return err
			}
			if res.Note != "" {
				fmt.Fprintf(a.stderr, "tandem: note: %s\n", res.Note)
			}
			if asJSON {
				return writeJSON(a.stdout, exportRecord(st.Registry(), res.Record))
			}
			fmt.Fprintf(a.stdout, "restored %s %d: version %d\n", kind, id, res.Record.Version)
			return nil
		},
	}
	cmd.Flags().StringVar(&leaseTk, "parent-lease", "", "lease token of the parent document's tree lease, when you hold it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the restored record as JSON")
	return cmd
}
