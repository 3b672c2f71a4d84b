package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_WorkingCopy runs the working-copy contract on copies in real files.
func TestDB_WorkingCopy(t *testing.T) {
	storetest.RunWorkingCopy(t, func(t *testing.T) store.WorkingCopy {
		return mustOpen(t, filepath.Join(t.TempDir(), "wc.db"))
	})
}

func wcEditor(name string) context.Context {
	return store.WithActor(context.Background(), store.Actor{Name: name, Role: store.RoleEditor})
}

func mustOutbox(t *testing.T, db *sqlite.DB) []store.OutboxEntry {
	t.Helper()
	es, err := db.Outbox(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return es
}
