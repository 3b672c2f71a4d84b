package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestDB_WALStaysBounded saves 3,000 times in a row: the WAL must be checkpointed and
// restarted along the way, not grow by every save's pages (about 40 MB here), whatever
// the writers' queue does with the commits. The bound is half of that: a commit's own
// checkpoint (past backstopPages, 8 MiB) is skipped while the background one runs, so on a
// loaded machine the WAL reaches 10 to 17 MiB before one restarts it.
func TestDB_WALStaysBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db := mustOpen(t, path)
	p := mustProduct(t, db)
	sys := store.WithActor(t.Context(), store.Actor{Name: "bench", Role: store.RoleSystem})
	for range 3000 {
		if _, err := db.UpdateRecord(sys, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 20<<20 {
		t.Errorf("WAL is %d bytes after 3,000 saves, want it checkpointed (under 20 MiB)", fi.Size())
	}
}
