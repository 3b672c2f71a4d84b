package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newMoveCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "move DOC_ID PARENT_ID|root",
		Short: "Move a document under another document, or to the root",
		Long: `Move puts a document (with everything under it) under a new parent, or at the root
of the tree. Moves are serialized against each other and checked on the locked tree:
a move that would put a document under itself or one of its descendants, or make the
tree deeper than 8 levels, is refused (exit 2) with a message naming the path.`,
		Example: `  tandem move 7 3
  tandem move 7 root`,
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
					return usagef("%q is not a document id or root", args[1])
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
			r, err := st.MoveDocument(ctx, id, parent)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, exportRecord(st.Registry(), r))
			}
			where := "the root"
			if parent != nil {
				where = fmt.Sprintf("document %d", *parent)
			}
			fmt.Fprintf(a.stdout, "moved document %d under %s (version %d)\n", r.ID, where, r.Version)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the moved document as JSON")
	return cmd
}
