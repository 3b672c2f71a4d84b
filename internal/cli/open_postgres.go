package cli

import (
	"context"

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
