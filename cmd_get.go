package main

import (
	"github.com/spf13/cobra"
)

func newGetCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get KIND ID",
		Short: "Show one record",
		Long: `Get prints one record with its version, last writer and every field. With --json it
prints {"kind","id","version","updated_by","updated_at","fields":{...}}: money as a
decimal string ("29.99"), sets as arrays, whole numbers as numbers.`,
		Example: `  tandem get product 42
  tandem get document 3 --json`,
		Args: exactArgs(2, "KIND ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, id, err := parseRecordRef(args[0], args[1])
			if err != nil {
				return err
			}
			st, err := a.store(cmd.Context())
			if err != nil {
				return err
			}
			r, err := st.FindRecord(cmd.Context(), kind, id)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, exportRecord(st.Registry(), r))
			}
			printRecord(a.stdout, st.Registry(), r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the record as JSON")
	return cmd
}
