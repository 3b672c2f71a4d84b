package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/merge"
)

func newMergeFileCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "merge-file [-p] [--diff3] [-L label]... CURRENT BASE OTHER",
		Short: "Three-way merge of text files, compatible with git merge-file",
		Long: `Merge-file merges the changes from BASE to OTHER into CURRENT, line by line, with the
same arguments, output and exit status as git merge-file: the result replaces CURRENT
unless -p prints it; the exit status is the number of conflicts (at most 127), 255 when
a file cannot be read or is binary. It needs no store, so it also serves as a git merge
driver:

  git config merge.tandem.driver "tandem merge-file -L ours -L base -L theirs %A %O %B"
  echo "*.md merge=tandem" >> .gitattributes

Options: -p/--stdout, --diff3, --ours, --theirs, --union, --marker-size N, -q/--quiet,
-L NAME (up to three labels for current, base and other).`,
		Example: `  tandem merge-file -p mine.txt base.txt theirs.txt
  tandem merge-file --diff3 -L mine -L base -L theirs mine.txt base.txt theirs.txt`,
		// git merge-file's own flags pass through untouched, and its exit status is kept.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Cobra hands over global flags given before the command too; git's arguments
			// are only those after it.
			if i := slices.Index(a.args, cmd.Name()); i >= 0 {
				args = a.args[i+1:]
			}
			for _, arg := range args {
				if arg == "-h" || arg == "--help" {
					return cmd.Help()
				}
			}
			if code := merge.FileMain(args, a.stdout, a.stderr); code != 0 {
				return &exitCodeError{code: code}
			}
			return nil
		},
	}
}
