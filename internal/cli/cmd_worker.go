package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/worker"
)

func newWorkerCmd(a *app) *cobra.Command {
	var (
		interval time.Duration
		once     bool
		verbose  bool
	)
	names := make([]string, 0, len(worker.Tasks))
	for _, t := range worker.Tasks {
		names = append(names, t.Name)
	}
	cmd := &cobra.Command{
		Use:   "worker TASK [--interval D] [--once]",
		Short: "Run a background worker that keeps system fields up to date (" + strings.Join(names, ", ") + ")",
		Long: `Worker runs one background task as a system writer named worker:TASK@HOST:PID:

  checksum   products and documents: SHA-256 of the editor content -> checksum
  thumbnail  products: a thumbnail path from the sku and the content hash -> thumbnail
  wordcount  documents: the number of words in the body -> word_count

For each record whose value is stale it takes a lease on the record's system group
(records another worker is on are skipped, not waited for), claims a job key for the
record version, and writes under a short database lock with the lease token. Its writes
go to the operation log (tandem history), never to the history versions. Any number of
workers may share one store. A working copy is refused (exit 6): its system fields come
from the source, so run workers there.

It makes a pass every --interval until Ctrl-C or SIGTERM, then prints what it did.
--once makes one pass and prints "done N, skipped N, failed N".`,
		Example: `  tandem worker checksum --once
  tandem worker wordcount --interval 10s`,
		Args: exactArgs(1, "TASK ("+strings.Join(names, ", ")+")"),
		RunE: func(cmd *cobra.Command, args []string) error {
			task, err := worker.Lookup(args[0])
			if err != nil {
				return usageErr(err)
			}
			if interval <= 0 {
				return usagef("--interval %s must be positive", interval)
			}
			ctx := store.WithActor(cmd.Context(), store.Actor{Name: worker.ActorName(task.Name), Role: store.RoleSystem})
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			opts := worker.Options{Interval: interval}
			if verbose {
				opts.Logf = func(format string, args ...any) {
					fmt.Fprintf(a.stderr, "%s %s\n", time.Now().Format("15:04:05.000"), safe.Line(fmt.Sprintf(format, args...)))
				}
			}
			w := worker.New(st, task, opts)
			var sum worker.Summary
			if once {
				sum, err = w.RunOnce(ctx)
			} else {
				sum, err = w.Run(ctx)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s: %s\n", task.Name, sum)
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&interval, "interval", worker.DefaultInterval, "pause between passes")
	f.BoolVar(&once, "once", false, "make one pass, print a summary and exit")
	f.BoolVarP(&verbose, "verbose", "v", false, "log every job to stderr")
	return cmd
}
