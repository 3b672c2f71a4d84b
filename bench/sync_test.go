package bench_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/bench"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestSync_Rounds: bench sync measures each side once per round, taking turns, and reports
// the medians; every round's push ends in sync, each pushing only its own changes.
func TestSync_Rounds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openStore(t, filepath.Join(dir, "src.db"))
	exports := 0
	res, err := bench.Sync(ctx, bench.SyncConfig{Source: src, Products: 60, Changes: 20, Rounds: 3, Dir: dir,
		OpenCopy: func(ctx context.Context, path string) (store.WorkingCopy, error) {
			return sqlite.Open(ctx, path, store.Options{})
		},
		Export: func(context.Context) (time.Duration, error) {
			exports++
			return time.Duration(exports) * time.Millisecond, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 3 || len(res.CloneRatios) != 3 || len(res.PushRatios) != 3 || exports != 3 {
		t.Fatalf("rounds %d, clone ratios %v, push ratios %v, exports %d: want 3 of each", res.Rounds, res.CloneRatios, res.PushRatios, exports)
	}
	if res.Export != 2*time.Millisecond {
		t.Errorf("export %v, want the median of 1, 2 and 3 ms", res.Export)
	}
	if !res.PushedOK || res.Push <= 0 || res.Direct <= 0 || res.Clone <= 0 {
		t.Errorf("push %v (in sync: %v), direct %v, clone %v", res.Push, res.PushedOK, res.Direct, res.Clone)
	}
	if res.Products != 60 {
		t.Errorf("%d products, want 60", res.Products)
	}
}

// TestSync_RefusesWorkingCopy: bench sync on a working copy is refused before it writes
// anything: the products it would create to fill the source would be queued in the copy's
// outbox, and the copy's next sync would create them on the real source.
func TestSync_RefusesWorkingCopy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openStore(t, filepath.Join(dir, "src.db"))
	wc := openStore(t, filepath.Join(dir, "copy.db"))
	if _, err := tsync.Clone(ctx, src, wc, tsync.CloneOptions{Source: "src.db"}); err != nil {
		t.Fatal(err)
	}
	_, err := bench.Sync(ctx, bench.SyncConfig{Source: wc, Products: 10, Changes: 2, Rounds: 1, Dir: dir,
		OpenCopy: func(ctx context.Context, path string) (store.WorkingCopy, error) {
			return sqlite.Open(ctx, path, store.Options{})
		}})
	if store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("bench sync on a working copy: %v, want EINVALID", err)
	}
	out, err := wc.Outbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 0 {
		t.Fatalf("bench sync left %d entries in the copy's outbox, want none", len(out))
	}
}

// openStore opens (creates) the SQLite store at path, closed when the test ends.
func openStore(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
