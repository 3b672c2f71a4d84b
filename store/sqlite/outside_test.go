package sqlite_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_Outside runs the outside-write checks with a real sqlite3 process writing the file.
func TestDB_Outside(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to write the store as another program")
	}
	storetest.RunOutside(t, func(t *testing.T) (store.Store, func(string), string) {
		path := filepath.Join(t.TempDir(), "tandem.db")
		db, err := sqlite.Open(t.Context(), path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		run := func(sql string) {
			t.Helper()
			if out, err := exec.Command(cli, "-bail", "-cmd", ".timeout 10000", path, sql).CombinedOutput(); err != nil {
				t.Fatalf("sqlite3 %q: %v\n%s", sql, err, out)
			}
		}
		return db, run, store.OutsideActor
	})
}
