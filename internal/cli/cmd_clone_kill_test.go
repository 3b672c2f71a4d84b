package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// fillSQLiteSource makes a SQLite store at path holding n products, created by eight
// writers at once (the store's group commit writes them in few transactions).
func fillSQLiteSource(t *testing.T, path string, n int) {
	t.Helper()
	ctx := store.WithActor(context.Background(), store.Actor{Name: "filler", Role: store.RoleEditor})
	db, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const writers = 8
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				if _, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("KILL-%05d", i),
					"name": fmt.Sprintf("Lampe Nr. %d", i), "description": "eine Straßenlaterne", "categories": []string{"licht"}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// copyProducts returns how many products the working copy at path holds, and how many of
// them a search finds; it fails the test when path is not a working copy.
func copyProducts(t *testing.T, path string) (all, found int) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CopyState(ctx); err != nil {
		t.Fatalf("%s is not a working copy: %v", path, err)
	}
	if all, err = db.CountRecords(ctx, store.KindProduct); err != nil {
		t.Fatal(err)
	}
	recs, err := db.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: "strasse"})
	if err != nil {
		t.Fatal(err)
	}
	return all, len(recs)
}

// TestCLI_CloneKilled: tandem clone SIGKILLed at random points (6 kills, 25 under
// TANDEM_LONG_TESTS) leaves either no FILE or a whole working copy, never part of one;
// the clone after the kills makes the whole copy, search included, and leaves nothing
// else behind.
func TestCLI_CloneKilled(t *testing.T) {
	dir := t.TempDir()
	team, file := filepath.Join(dir, "team.db"), filepath.Join(dir, "k.db")
	const n = 4000
	fillSQLiteSource(t, team, n)

	start := time.Now()
	mustTandem(t, team, "clone", team, file)
	took := time.Since(start)
	if all, found := copyProducts(t, file); all != n || found != n {
		t.Fatalf("clone: %d products, search finds %d; want %d and %d", all, found, n, n)
	}
	kills := 6
	if longTests() {
		kills = 25
	}
	rng := testRand(t)
	for i := 0; i < kills; i++ {
		for _, s := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(file + s); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		cmd := tandemCmd(team, "clone", team, file)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(took))))
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if _, err := os.Stat(file); err == nil {
			// Killed after the copy was linked into place: it must be whole.
			if all, found := copyProducts(t, file); all != n || found != n {
				t.Fatalf("kill %d: %s holds %d products, search finds %d; want %d and %d", i, file, all, found, n, n)
			}
		}
	}
	for _, s := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(file + s); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	mustTandem(t, team, "clone", team, file)
	if all, found := copyProducts(t, file); all != n || found != n {
		t.Fatalf("clone after the kills: %d products, search finds %d; want %d and %d", all, found, n, n)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".k.db") || strings.HasPrefix(e.Name(), "..k.db") {
			t.Errorf("left after the clone: %s", e.Name())
		}
	}
}
