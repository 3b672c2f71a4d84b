package cli

import (
	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/store"
)

func newAdjustCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "adjust KIND ID FIELD DELTA",
		Short: "Add DELTA to a counter field (stock), never losing a concurrent change",
		Long: `Adjust applies a relative change to a counter field, such as a product's stock:
"stock -1" is an operation, not a value, so it needs no --expect-version and two
adjusts at the same moment both count. DELTA may be negative (-3).

--key makes the adjust idempotent: a script that retries after a timeout passes the
same key and the change is applied once; the same key with another delta is refused
(exit 2). --lease presents your lease token when the record is leased.`,
		Example: `  tandem adjust product 42 stock -1
  tandem adjust product 42 stock 25 --key delivery-2026-11-03
  tandem adjust product 42 stock -3 --json`,
		// Flags are parsed in RunE so that a negative DELTA (and only the DELTA) is not
		// taken for a flag.
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, raw []string) error {
			args, err := parseFlagsWithDelta(cmd, raw, 3)
			if err != nil {
				return err
			}
			if help, _ := cmd.Flags().GetBool("help"); help {
				return cmd.Help()
			}
			if err := exactArgs(4, "KIND ID FIELD DELTA")(cmd, args); err != nil {
				return err
			}
			key, _ := cmd.Flags().GetString("key")
			leaseTk, _ := cmd.Flags().GetString("lease")
			asJSON, _ := cmd.Flags().GetBool("json")

			w, err := a.writeTarget(cmd, args[0], args[1])
			if err != nil {
				return err
			}
			ctx, kind, id, reg := w.ctx, w.kind, w.id, w.reg
			f, err := reg.Field(kind, args[2])
			if err != nil {
				return usageErr(err)
			}
			delta, err := parseDelta(f, args[3])
			if err != nil {
				return err
			}
			u := store.Update{Add: map[string]int64{f.Name: delta}, IdempotencyKey: key, LeaseToken: leaseTk}
			return a.save(ctx, reg, kind, id, u, asJSON)
		},
	}
	f := cmd.Flags()
	f.String("key", "", "idempotency key: the same key applies the change at most once")
	f.String("lease", "", "lease token, when you hold a lease on the record")
	f.Bool("json", false, "print the saved record as JSON")
	return cmd
}
