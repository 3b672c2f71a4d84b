package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// TestDB_Busy holds SQLite's write lock from another connection: a save whose context ends
// while it waits for the lock fails with EBUSY (safe to try again) and writes nothing.
func TestDB_Busy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db := mustOpen(t, path)
	p := mustProduct(t, db)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	conn, err := raw.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(editor(t, "bob"), 500*time.Millisecond)
	defer cancel()
	_, err = db.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
	if got := store.ErrorCode(err); got != store.EBUSY {
		t.Fatalf("error = %v (%s), want %s", err, got, store.EBUSY)
	}
	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil || got.Version != 1 {
		t.Errorf("record = %+v, %v; want version 1", got, err)
	}
	// Once the lock is free the same save goes through.
	if _, err := db.UpdateRecord(editor(t, "bob"), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
		t.Errorf("save after the lock was released: %v", err)
	}
}
