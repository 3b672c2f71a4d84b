package main

import (
	"context"

	"github.com/tandem-editor/tandem/store"
)

// openPostgres opens the PostgreSQL store at dsn. Placeholder until store/postgres builds.
func openPostgres(ctx context.Context, dsn string, opts store.Options) (store.Store, error) {
	return nil, store.Errorf(store.EUNAVAILABLE, "this build has no PostgreSQL store yet")
}
