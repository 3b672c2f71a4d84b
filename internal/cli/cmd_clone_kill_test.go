package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// fillSQLiteSource makes a SQLite store at path holding n products, created in one batch
// by the store's bulk create (what a first import uses), a few hundred to a statement: the
// clone tests need a source of n products, not n saves (one save at a time took most of
// TestCLI_CloneKilled's setup).
func fillSQLiteSource(t *testing.T, path string, n int) {
	t.Helper()
	ctx := store.WithActor(context.Background(), store.Actor{Name: "filler", Role: store.RoleEditor})
	db, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs := make([]store.NewRecord, n)
	for i := range recs {
		recs[i] = store.NewRecord{Kind: store.KindProduct, Values: store.Values{"sku": fmt.Sprintf("KILL-%05d", i),
			"name": fmt.Sprintf("Lampe Nr. %d", i), "description": "eine Straßenlaterne", "categories": []string{"licht"}}}
	}
	bulkCreate(t, ctx, db, recs)
}

// bulkCreate creates recs in db in one batch (store.Batcher) through the store's bulk
// create (store.BulkCreator), and each record it leaves to CreateRecord with that, as the
// actor of ctx; it fails the test when db has no bulk create or a record is refused.
func bulkCreate(t *testing.T, ctx context.Context, db store.Store, recs []store.NewRecord) {
	t.Helper()
	batcher, ok1 := db.(store.Batcher)
	bulk, ok2 := db.(store.BulkCreator)
	if !ok1 || !ok2 {
		t.Fatalf("%T creates no records in bulk", db)
	}
	err := batcher.WriteBatch(ctx, func(bctx context.Context) error {
		for rest := recs; len(rest) > 0; {
			made, err := bulk.CreateRecords(bctx, rest)
			if err != nil {
				return err
			}
			rest = rest[len(made):]
			if len(rest) > 0 {
				if _, err := db.CreateRecord(bctx, rest[0].Kind, rest[0].Values, rest[0].Options); err != nil {
					return err
				}
				rest = rest[1:]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bulk create of %d records: %v", len(recs), err)
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
	besideOthers(t)
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
