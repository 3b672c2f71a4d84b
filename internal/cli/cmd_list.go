package cli

import (
	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/store"
)

func newListCmd(a *app) *cobra.Command {
	var (
		asJSON bool
		search string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "list KIND",
		Short: "List the records of one kind (products, documents, or the store's own kinds)",
		Long: `List prints the records of one kind in id order: a table for people, or with --json
an array of records in the same form "tandem get --json" prints. KIND is one of the
store's kinds, singular or plural (product or products in the sample schema; tandem
schema show lists a store's kinds).`,
		Example: `  tandem list products
  tandem list documents --json
  tandem list products --search lamp
  tandem --db parts.db list suppliers`,
		Args: exactArgs(1, "KIND"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usagef("--limit cannot be negative")
			}
			if err := checkSearch(search); err != nil {
				return err
			}
			kind, err := a.parseKind(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			st, err := a.store(cmd.Context())
			if err != nil {
				return err
			}
			recs, err := st.FindRecords(cmd.Context(), store.Filter{Kind: kind, Search: search, Limit: limit})
			if err != nil {
				return err
			}
			reg := st.Registry()
			if asJSON {
				out := make([]jsonRecord, 0, len(recs))
				for _, r := range recs {
					out = append(out, exportRecord(reg, r))
				}
				return writeJSON(a.stdout, out)
			}
			return printTable(a.stdout, reg, kind, recs)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of records")
	cmd.Flags().StringVar(&search, "search", "", "only records whose searched fields (the schema's search: true; sku, name, description, categories; title, body, tags in the sample) contain this text, in any case (Unicode case folding)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many records (0: all)")
	return cmd
}
