package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// runDefault is what tandem does without a subcommand: on a SQLite file that does not exist
// yet it creates the store and fills it with sample data, then it opens the TUI.
func runDefault(ctx context.Context, a *app) error {
	fresh := false
	if !isPostgresDSN(a.dsn) {
		if _, err := os.Stat(a.dsn); errors.Is(err, fs.ErrNotExist) {
			fresh = true
		}
	}
	actx, err := a.actor(ctx)
	if err != nil {
		return err
	}
	st, err := a.store(actx)
	if err != nil {
		return err
	}
	if fresh {
		n, err := seedStore(actx, st, defaultSeedProducts, defaultSeedDocuments)
		if err != nil {
			return fmt.Errorf("fill the new store with sample data: %w", err)
		}
		fmt.Fprintf(a.stderr, "tandem: created %s with %s\n", a.dsn, n)
	}
	return startTUI(actx, a)
}

// startTUI opens the terminal UI on the app's store. The TUI (package tui) is wired here;
// until it exists tandem says what to use instead.
func startTUI(ctx context.Context, a *app) error {
	fmt.Fprintln(a.stderr, `tandem: the terminal UI is not part of this build yet.
Use the CLI meanwhile: "tandem list products", "tandem get product 42", "tandem --help".`)
	return nil
}
