package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_KeyReplayAfterExpiry replays keyed writes after their keys' stored expiry was moved
// into the past.
func TestDB_KeyReplayAfterExpiry(t *testing.T) {
	dsn := pgtest.DSN(t)
	db, err := postgres.Open(t.Context(), dsn, store.Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	storetest.KeyReplayAfterExpiry(t, db, func(t *testing.T) {
		conn, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(t.Context())
		if _, err := conn.Exec(t.Context(), `UPDATE idempotency SET expires_at = now() - interval '1 year'`); err != nil {
			t.Fatalf("move the keys' expiry into the past: %v", err)
		}
	})
}
