package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/store"
)

func newMoveCmd(a *app) *cobra.Command {
	var (
		asJSON        bool
		leaseTk       string
		parentLeaseTk string
	)
	cmd := &cobra.Command{
		Use:   "move DOC_ID PARENT_ID|root",
		Short: "Move a document under another document, or to the root",
		Long: `Move puts a document (with everything under it) under a new parent, or at the root
of the tree. Moves are serialized against each other and checked on the locked tree:
a move that would put a document under itself or one of its descendants, or make the
tree deeper than 8 levels, is refused (exit 2) with a message naming the path. A move
to the parent the document already has changes nothing and says "no change".

A lease on the document (its editor group, or the group of parent_id in a custom
registry) binds the move too: present its token with --lease, also when you are the
holder (without it the move exits 4). Moving under a leased document needs that
document's token, --parent-lease.`,
		Example: `  tandem move 7 3
  tandem move 7 root
  tandem move 7 3 --lease 5f0c…`,
		Args: exactArgs(2, "DOC_ID and PARENT_ID (or root)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			var parent *int64
			if p := strings.TrimSpace(args[1]); p != "root" {
				pid, err := parseID(p)
				if err != nil {
					return usagef("%s is not a document id or root", store.Quote(args[1]))
				}
				parent = &pid
			}
			ctx, err := a.actor(cmd.Context())
			if err != nil {
				return err
			}
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			res, err := st.MoveRecord(ctx, store.KindDocument, id, store.Move{Parent: parent, LeaseToken: leaseTk, ParentLeaseToken: parentLeaseTk})
			if err != nil {
				return err
			}
			r := res.Record
			if asJSON {
				return writeJSON(a.stdout, exportRecord(st.Registry(), r))
			}
			where := "the root"
			if parent != nil {
				where = fmt.Sprintf("document %d", *parent)
			}
			if res.Unchanged {
				fmt.Fprintf(a.stdout, "no change: document %d is already under %s (version %d)\n", r.ID, where, r.Version)
				return nil
			}
			fmt.Fprintf(a.stdout, "moved document %d under %s (version %d)\n", r.ID, where, r.Version)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the moved document as JSON")
	f.StringVar(&leaseTk, "lease", "", "lease token, when you hold a lease on the document")
	f.StringVar(&parentLeaseTk, "parent-lease", "", "lease token of the new parent, when you hold a lease on it")
	return cmd
}
