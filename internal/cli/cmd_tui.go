package cli

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/tui"
)

// runDefault is what tandem does without a subcommand: on a SQLite file that does not exist
// yet it creates the store filled with sample data (and says so), then it opens the TUI.
// Creating and filling is one step (see createStore): when two first runs race, one creates
// the store and the other opens it.
func runDefault(ctx context.Context, a *app) error {
	// Before anything is created: run from cron, or with a mistyped subcommand, tandem
	// must not leave a new store behind on its way to finding no terminal.
	if err := needTerminal(a.stdin); err != nil {
		return err
	}
	actx, err := a.actor(ctx)
	if err != nil {
		return err
	}
	what, fill := sampleFill(defaultSeedProducts, defaultSeedDocuments)
	_, created, err := a.createStore(actx, func(ctx context.Context, st store.Store) error {
		if err := fill(ctx, st); err != nil {
			return fmt.Errorf("fill the new store with sample data: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if created {
		// The path is the user's input, echoed to a terminal: defuse it.
		fmt.Fprintf(a.stderr, "tandem: created %s with %s\n", safe.Line(a.dsn), *what)
	}
	return startTUI(actx, a)
}

// tuiFlags are the root command's own flags: they configure the TUI. NO_COLOR, $VISUAL
// and $EDITOR are read by the TUI itself (see tui.Options).
type tuiFlags struct {
	lease       bool
	leaseOnEdit bool
	leaseTTL    time.Duration
	onConflict  string
	noColor     bool
	draftDir    string
}

// addTUIFlags defines the TUI's flags on the root command.
func addTUIFlags(root *cobra.Command, f *tuiFlags) {
	root.Flags().BoolVar(&f.lease, "lease", false, "take a lease on every record you open, so others see it read-only")
	root.Flags().BoolVar(&f.leaseOnEdit, "lease-on-edit", false,
		"take the lease at your first edit of a record instead of on open (e still takes it on open)")
	root.Flags().DurationVar(&f.leaseTTL, "lease-ttl", tui.DefaultLeaseTTL, "lifetime of the TUI's leases (renewed at half of it)")
	root.Flags().StringVar(&f.onConflict, "on-conflict", tui.OnConflictAsk,
		"what a conflicting save does: ask, reload, retry (relative changes only) or merge")
	root.Flags().BoolVar(&f.noColor, "no-color", false, "draw without colour (as NO_COLOR=1 does)")
	root.Flags().StringVar(&f.draftDir, "draft-dir", "",
		"where unsaved edits are kept until saved (default: tandem/drafts in your cache directory)")
}

// startTUI opens the terminal UI on the app's store.
func startTUI(ctx context.Context, a *app) error {
	act, err := store.ActorFrom(ctx)
	if err != nil {
		return usageErr(err)
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	opts := a.tui.options(act)
	// Drafts belong to the store they were made on: keyed by the store's own id, so a draft
	// of a.db is never offered on the team server, and a moved file keeps its drafts.
	opts.StoreID = st.StoreID()
	opts.OpenSource = a.copySource
	// A closed terminal (its window, tmux killed) sends SIGHUP: end like SIGTERM does,
	// releasing leases and keeping drafts, instead of dying with the lease held for its TTL.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	if wc, ok := st.(store.WorkingCopy); ok && a.local != nil {
		// --local: the copy syncs itself while the TUI runs (local.go).
		lctx, cancel := context.WithCancel(ctx)
		syncer := a.liveSyncer(wc)
		go syncer.Run(lctx)
		defer func() { cancel(); <-syncer.Done() }()
		opts.Live = syncer
	}
	return tui.Run(ctx, st, opts)
}

// options are the TUI's options for act from the flags.
func (f tuiFlags) options(act store.Actor) tui.Options {
	return tui.Options{
		User:        act.Name,
		Role:        act.Role,
		Lease:       f.lease,
		LeaseOnEdit: f.leaseOnEdit,
		LeaseTTL:    f.leaseTTL,
		OnConflict:  f.onConflict,
		NoColor:     f.noColor,
		DraftDir:    f.draftDir,
	}
}
