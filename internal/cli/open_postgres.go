package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
)

// openPostgres opens the PostgreSQL store at dsn: EINVALID for a DSN that cannot be parsed,
// EUNAVAILABLE for a server that cannot be reached (store/postgres gives up within seconds).
func openPostgres(ctx context.Context, dsn string, opts store.Options) (store.Store, error) {
	db, err := postgres.Open(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// dsnWhere names the store dsn points to in output and messages: a SQLite path as given, a
// PostgreSQL connection string as user@host:port/database[?search_path=…], built from the
// driver's parse of it and so without its password however the password is written.
func dsnWhere(dsn string) string {
	if !isPostgresDSN(dsn) {
		return dsn
	}
	w, err := postgres.Describe(dsn)
	if err != nil {
		return "a PostgreSQL connection string that cannot be parsed"
	}
	return w
}

// openAskingPassword opens the store at dsn (openStore); when a PostgreSQL server asks for a
// password that neither dsn, PGPASSWORD nor the password file gives, it asks for one on the
// terminal, without echo, when standard input is one, and opens again with it. The password
// is used for this connection only and kept nowhere.
func (a *app) openAskingPassword(ctx context.Context, dsn string, opts store.Options) (store.Store, error) {
	st, err := openStore(ctx, dsn, opts)
	if !errors.Is(err, postgres.ErrNoPassword) {
		return st, err
	}
	f, ok := a.stdin.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return nil, &store.Error{Code: store.ErrorCode(err), Err: err,
			Message: err.Error() + "; or run the command in a terminal, which asks for it"}
	}
	fmt.Fprintf(a.stderr, "password for %s: ", safe.Line(dsnWhere(dsn)))
	pw, rerr := term.ReadPassword(f.Fd())
	fmt.Fprintln(a.stderr)
	if rerr != nil {
		return nil, fmt.Errorf("read the password from the terminal: %w", rerr)
	}
	with, werr := postgres.WithPassword(dsn, string(pw))
	if werr != nil {
		return nil, werr
	}
	return openStore(ctx, with, opts)
}
