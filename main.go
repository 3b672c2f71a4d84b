// Command tandem is a terminal editor for records that several people and programs change at
// the same time. Run without a subcommand it opens the TUI; its subcommands are the
// non-interactive CLI that scripts, workers and tests use. See docs/commands.md for the contract.
//
// The command line lives in internal/cli; this file only connects it to the process: the
// arguments, the standard streams, the signals that cancel work, and the exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tandem-editor/tandem/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
