package memory_test

import (
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_KeyReplayAfterExpiry replays keyed writes after the store's clock moved past every
// key's lifetime (a year on).
func TestDB_KeyReplayAfterExpiry(t *testing.T) {
	db := memory.New(store.Options{})
	storetest.KeyReplayAfterExpiry(t, db, func(*testing.T) { db.Advance(365 * 24 * time.Hour) })
}
