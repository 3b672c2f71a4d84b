package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// machineDefaults are the flags whose default the machine decides (the account's name, the
// clock), with what the CLI reference says instead, so the reference is the same on every
// machine.
var machineDefaults = map[string]string{
	"user": "",                 // $TANDEM_USER, then $USER: the flag's help says so
	"seed": "the current time", // torture's random seed
}

// DocsCommand returns tandem's command tree as the binary builds it, for the generated CLI
// reference (internal/cli/gendocs writes docs/cli from it). Only the defaults in
// machineDefaults differ from what --help prints; the tree must not be run. It returns no
// error.
func DocsCommand() *cobra.Command {
	root := newRootCmd(&app{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalNonPersistentFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if def, ok := machineDefaults[f.Name]; ok {
					f.DefValue = def
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return root
}
