package cli

import (
	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/store"
)

func newGetCmd(a *app) *cobra.Command {
	var (
		asJSON  bool
		version int64
	)
	cmd := &cobra.Command{
		Use:   "get KIND ID",
		Short: "Show one record",
		Long: `Get prints one record with its version, last writer and every field. With --json it
prints {"kind","id","version","updated_by","updated_at","fields":{...}}: money as a
decimal string ("29.99"), sets as arrays, whole numbers as numbers. With --version N it
prints the record as history version N left it (the versions tandem history lists;
writes that keep no history, such as workers' system writes, have none: exit 5).`,
		Example: `  tandem get product 42
  tandem get document 3 --json
  tandem get document 3 --version 7`,
		Args: exactArgs(2, "KIND ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("version") && version < 1 {
				return usagef("--version %d is not a version (versions start at 1)", version)
			}
			kind, id, err := a.parseRecordRef(cmd.Context(), args[0], args[1])
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
			if version > 0 {
				v, err := st.FindVersion(cmd.Context(), kind, id, version)
				if err != nil {
					return err
				}
				r = &store.Record{Kind: kind, ID: id, Version: v.Version, UpdatedBy: v.Actor, UpdatedAt: v.At, Fields: v.Snapshot}
			}
			if asJSON {
				return writeJSON(a.stdout, exportRecord(st.Registry(), r))
			}
			printRecord(a.stdout, st.Registry(), r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the record as JSON")
	cmd.Flags().Int64Var(&version, "version", 0, "print history version N instead of the current record")
	return cmd
}
