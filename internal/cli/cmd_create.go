package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/store"
)

func newCreateCmd(a *app) *cobra.Command {
	var (
		asJSON        bool
		parentLeaseTk string
	)
	cmd := &cobra.Command{
		Use:   "create KIND field=value...",
		Short: "Create a record",
		Long: `Create adds a record at version 1. Values are written as on the command line:
money as 29.99, sets comma-separated (categories=lamps,outdoor), a document's parent
as parent_id=ID. A text field given as field=@path is read from the file at path.
Fields not given get their empty value; required fields (a product's sku and name, a
document's title) must be given. SKUs are compared ignoring case, surrounding spaces,
width and non-breaking or zero-width characters: "ABC-1" and "abc-1 " are one sku.
Creating a document under a leased one needs that lease's token, --parent-lease
(exit 4 without it).`,
		Example: `  tandem create product sku=LMP-0100 name="Desk lamp" price=39.90 stock=12
  tandem create document title="On-call rota" parent_id=1 body=@rota.md`,
		Args: minArgs(2, "KIND and at least one field=value"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, err := a.actor(cmd.Context())
			if err != nil {
				return err
			}
			kind, err := a.parseKind(ctx, args[0])
			if err != nil {
				return err
			}
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			vals, err := parseAssignments(st.Registry(), kind, args[1:], a.served == nil)
			if err != nil {
				return err
			}
			r, err := st.CreateRecord(ctx, kind, vals, store.CreateOptions{ParentLeaseToken: parentLeaseTk})
			if err != nil {
				return fmt.Errorf("create %s: %w", kind, err)
			}
			if asJSON {
				return writeJSON(a.stdout, exportRecord(st.Registry(), r))
			}
			fmt.Fprintf(a.stdout, "created %s %d (version %d)%s\n", r.Kind, r.ID, r.Version, localIDNote(ctx, st))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the new record as JSON")
	cmd.Flags().StringVar(&parentLeaseTk, "parent-lease", "", "lease token of the parent document, when you hold a lease on it")
	return cmd
}
