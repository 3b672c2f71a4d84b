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
		kindArg       string
	)
	cmd := &cobra.Command{
		Use:   "move [KIND] ID PARENT_ID|root",
		Short: "Move a document under another document, or to the root",
		Long: `Move puts a document (with everything under it) under a new parent, or at the root
of the tree. Moves are serialized against each other and checked on the locked tree:
a move that would put a document under itself or one of its descendants, or make the
tree deeper than 8 levels, is refused (exit 2) with a message naming the path. A move
to the parent the document already has changes nothing and says "no change".

A lease on the document (its editor group, or the group of parent_id in a custom
registry) binds the move too: present its token with --lease, also when you are the
holder (without it the move exits 4). Moving under a leased document needs that
document's token, --parent-lease.

In a store of your own schema, KIND (or --kind) names the tree kind whose record moves;
without it, the store's one tree kind (document in the sample schema).`,
		Example: `  tandem move 7 3
  tandem move 7 root
  tandem move 7 3 --lease 5f0c…
  tandem --db parts.db move area 4 2`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 || len(args) == 3 {
				return nil
			}
			return usagef("move takes [KIND] ID and PARENT_ID (or root), %d argument(s) given", len(args))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 3 {
				if kindArg != "" && kindArg != args[0] {
					return usagef("move: KIND %s and --kind %s name two kinds", store.Quote(args[0]), store.Quote(kindArg))
				}
				kindArg, args = args[0], args[1:]
			}
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			var parent *int64
			if p := strings.TrimSpace(args[1]); p != "root" {
				pid, err := parseID(p)
				if err != nil {
					return usagef("%s is not a record id or root", store.Quote(args[1]))
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
			kind, err := treeKind(st.Registry(), kindArg)
			if err != nil {
				return err
			}
			res, err := st.MoveRecord(ctx, kind, id, store.Move{Parent: parent, LeaseToken: leaseTk, ParentLeaseToken: parentLeaseTk})
			if err != nil {
				return err
			}
			r := res.Record
			if asJSON {
				return writeJSON(a.stdout, exportRecord(st.Registry(), r))
			}
			where := "the root"
			if parent != nil {
				where = fmt.Sprintf("%s %d", kind, *parent)
			}
			if res.Unchanged {
				fmt.Fprintf(a.stdout, "no change: %s %d is already under %s (version %d)\n", kind, r.ID, where, r.Version)
				return nil
			}
			fmt.Fprintf(a.stdout, "moved %s %d under %s (version %d)\n", kind, r.ID, where, r.Version)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the moved document as JSON")
	f.StringVar(&leaseTk, "lease", "", "lease token, when you hold a lease on the document")
	f.StringVar(&parentLeaseTk, "parent-lease", "", "lease token of the new parent, when you hold a lease on it")
	f.StringVar(&kindArg, "kind", "", "the tree kind of the record (default: the store's one tree kind)")
	return cmd
}

// treeKind returns the tree kind a move names: arg parsed with the store's kinds, or, when
// arg is empty, the schema's one tree kind. A usage error for a kind that is not a tree,
// and for no --kind where the schema has no tree kind or several.
func treeKind(reg *store.Registry, arg string) (store.Kind, error) {
	if arg != "" {
		k, err := reg.ParseKind(arg)
		if err != nil {
			return "", usageErr(err)
		}
		if !reg.Tree(k) {
			return "", usagef("a %s is not in a tree: only records of a tree kind move", k)
		}
		return k, nil
	}
	var trees []string
	for _, k := range reg.Kinds() {
		if reg.Tree(k) {
			trees = append(trees, string(k))
		}
	}
	switch len(trees) {
	case 0:
		return "", usagef("this store's schema has no tree kind: nothing moves")
	case 1:
		return store.Kind(trees[0]), nil
	}
	return "", usagef("this store has several tree kinds (%s): name one with --kind", strings.Join(trees, ", "))
}
