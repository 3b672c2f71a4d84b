package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_KeyReplayAfterExpiry replays keyed writes after their keys' stored expiry was moved
// into the past, as another process whose clock runs a year ahead would judge them.
func TestDB_KeyReplayAfterExpiry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	db, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	storetest.KeyReplayAfterExpiry(t, db, func(t *testing.T) {
		raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Exec(`UPDATE idempotency SET expires_at = '2001-01-01T00:00:00.000Z'`); err != nil {
			t.Fatalf("move the keys' expiry into the past: %v", err)
		}
	})
}
