package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
)

// jsonCopy is one local copy in tandem copies --json.
type jsonCopy struct {
	ID        string `json:"id"`
	Source    string `json:"source"`
	Pending   int    `json:"pending"`
	Conflicts int    `json:"conflicts"`
	SyncedAt  string `json:"synced_at"`
	Size      int64  `json:"size"`
	Path      string `json:"path"`
	Error     string `json:"error,omitempty"`
}

func newCopiesCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "copies",
		Short: "List the local copies --local works on",
		Long: `Copies lists the working copies that --local keeps in $XDG_DATA_HOME/tandem/copies
(by default ~/.local/share/tandem/copies), one per source store, named by the source's
store id: where the source is (without a password), the local changes not yet on the
source, the conflicts waiting for you, when the copy last synced and its size on disk.
tandem copies forget ID removes one, after checking that nothing is pending.`,
		Example: `  tandem copies
  tandem copies --json`,
		Args: exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := copiesDir()
			if err != nil {
				return err
			}
			cs, err := listCopies(cmd.Context(), dir)
			if err != nil {
				return err
			}
			out := []jsonCopy{}
			for _, c := range cs {
				j := jsonCopy{ID: c.id, Size: c.size, Path: c.path}
				if c.err != nil {
					j.Error = c.err.Error()
				} else {
					j.Source, j.Pending, j.Conflicts = redact(c.state.Source), c.state.Pending, c.state.Conflict
					j.SyncedAt = formatTime(c.state.SyncedAt)
				}
				out = append(out, j)
			}
			if asJSON {
				return writeJSON(a.stdout, out)
			}
			if len(out) == 0 {
				fmt.Fprintf(a.stdout, "no local copies in %s (tandem --db SOURCE --local makes one)\n", safe.Line(dir))
				return nil
			}
			for _, c := range cs {
				if c.err != nil {
					fmt.Fprintf(a.stdout, "%s  cannot be read: %s\n", safe.Line(c.id), safe.Line(c.err.Error()))
					continue
				}
				fmt.Fprintf(a.stdout, "%s  %s  %d pending  %s  synced %s  %s\n", safe.Line(c.id),
					safe.Line(redact(c.state.Source)), c.state.Pending, plural(c.state.Conflict, "conflict"),
					ago(c.state.SyncedAt, time.Now()), diskSize(c.size))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the copies as JSON")
	cmd.AddCommand(newCopiesForgetCmd(a))
	return cmd
}

func newCopiesForgetCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "forget ID",
		Short: "Remove a local copy that has nothing pending",
		Long: `Forget removes the local copy ID (as tandem copies lists it) with its files. It refuses
(exit 2) while the copy holds local changes not yet on the source or open conflicts:
sync them first (tandem --db SOURCE --local sync), or resolve them. The next --local
run on that source clones it afresh.`,
		Example: `  tandem copies forget 3f9c2a7e-…
  tandem copies forget 3f9c2a7e-… --json`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if !fileStoreID(id) {
				return usagef("%s is not a copy id (tandem copies lists them)", safe.Line(id))
			}
			dir, err := copiesDir()
			if err != nil {
				return err
			}
			cs, err := listCopies(cmd.Context(), dir)
			if err != nil {
				return err
			}
			for _, c := range cs {
				if c.id != id {
					continue
				}
				if c.err != nil {
					return fmt.Errorf("copy %s cannot be read, nothing removed: %w", safe.Line(id), c.err)
				}
				// A tandem that has the copy open (an editor with --local, sync --follow)
				// would go on writing its edits into the removed file, and lose them
				// when it exits: its own sync rounds are kept out by the sync lock.
				unlock, locked, err := lockFile((&app{dsn: c.path}).syncLockPath(), "sync")
				if err != nil {
					return err
				}
				if !locked {
					return usagef("copy %s is syncing in another tandem: nothing removed; close it first", safe.Line(id))
				}
				defer unlock()
				if pid := openedBy(c.path); pid != 0 {
					return usagef("copy %s is open in another tandem (process %d): nothing removed; close it first", safe.Line(id), pid)
				}
				if c.state.Pending > 0 || c.state.Conflict > 0 {
					return usagef("copy %s holds %s and %s: nothing removed; sync or resolve them first",
						safe.Line(id), plural(c.state.Pending, "pending change"), plural(c.state.Conflict, "conflict"))
				}
				for _, x := range []string{"", "-wal", "-shm", "-journal"} {
					if err := os.Remove(c.path + x); err != nil && !os.IsNotExist(err) {
						return fmt.Errorf("forget copy %s: %w", safe.Line(id), err)
					}
				}
				if asJSON {
					return writeJSON(a.stdout, map[string]any{"forgotten": id})
				}
				fmt.Fprintf(a.stdout, "forgot the local copy %s of %s\n", safe.Line(id), safe.Line(redact(c.state.Source)))
				return nil
			}
			return usagef("no local copy %s (tandem copies lists them)", safe.Line(id))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// diskSize says a size on disk for people.
func diskSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
