package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// TestCLI_SyncConcurrent: a sync of a copy another sync holds is refused (exit 2) with a
// message saying so and changes nothing; of several sync processes on one copy at once,
// each either syncs or says another one runs, and the copy ends in sync with every change
// on the source once.
func TestCLI_SyncConcurrent(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, train)

	// Pending edits, made in-process so the setup stays quick: one per product.
	ctx := store.WithActor(context.Background(), store.Actor{Name: "alice", Role: store.RoleEditor})
	wc, err := sqlite.Open(ctx, train, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := wc.FindRecords(ctx, store.Filter{Kind: store.KindProduct})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := wc.UpdateRecord(ctx, store.KindProduct, r.ID, store.Update{BaseVersion: r.Version, Add: map[string]int64{"stock": 1}}); err != nil {
			t.Fatal(err)
		}
	}
	wc.Close()

	unlock, ok, err := lockFile(filepath.Join(dir, ".train.db.sync.lock"), "sync")
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	wantExit(t, "sync while another holds the lock", tandem(t, train, "sync"), 2, "another tandem sync of", "nothing was done")
	unlock()
	if out := mustTandem(t, team, "get", "product", "42", "--json"); !strings.Contains(out, `"version": 1`) {
		t.Fatalf("the refused sync pushed: %s", out)
	}

	const n = 4
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = tandem(t, train, "sync")
		}()
	}
	wg.Wait()
	for _, r := range results {
		switch {
		case r.code == 0:
		case r.code == 2 && strings.Contains(r.stderr, "another tandem sync of"):
		default:
			t.Errorf("concurrent sync: exit %d %q", r.code, r.stderr)
		}
	}
	mustTandem(t, train, "sync")
	src, err := sqlite.Open(context.Background(), team, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, r := range recs {
		got, err := src.FindRecord(context.Background(), store.KindProduct, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Fields["stock"] != r.Fields["stock"].(int64)+1 {
			t.Errorf("product %d: stock %v on the source, want %d (one +1 pushed once)", r.ID, got.Fields["stock"], r.Fields["stock"].(int64)+1)
		}
	}
}

// TestCLI_SyncLockFollowsSymlinks: the sync lock belongs to the copy's file, not to the name
// it is opened by: a sync through a symlink while another sync holds the lock is refused
// (exit 2), and the refusal does not advise removing the lock file (which would let two
// syncs run).
func TestCLI_SyncLockFollowsSymlinks(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	team, train, link := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db"), filepath.Join(dir, "link.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, train)
	mustTandem(t, train, "adjust", "product", "42", "stock", "+1")
	if err := os.Symlink(train, link); err != nil {
		t.Fatal(err)
	}
	unlock, ok, err := lockFile(filepath.Join(dir, ".train.db.sync.lock"), "sync")
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	r := tandem(t, link, "sync")
	unlock()
	wantExit(t, "sync through a symlink while another sync holds the copy", r, 2, "another tandem sync of", "nothing was done")
	if strings.Contains(r.stderr, "remove") {
		t.Errorf("the refusal advises removing the lock file: %q", r.stderr)
	}
	if out := mustTandem(t, team, "get", "product", "42", "--json"); !strings.Contains(out, `"version": 1`) {
		t.Fatalf("the refused sync pushed: %s", out)
	}
}

// TestCLI_TUISyncWaitsForAnotherRound: the TUI's S on a copy whose sync lock another sync
// holds (a --local TUI's background syncer, mid-round) waits for it to end and then syncs,
// where the sync command refuses at once.
func TestCLI_TUISyncWaitsForAnotherRound(t *testing.T) {
	dir := t.TempDir()
	team, train := filepath.Join(dir, "team.db"), filepath.Join(dir, "train.db")
	madeStoreAt(t, team, "init", "--sample")
	mustTandem(t, team, "clone", team, train)

	unlock, ok, err := lockFile(filepath.Join(dir, ".train.db.sync.lock"), "sync")
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond) // the other round, still running when S is pressed
		close(released)
		unlock()
	}()
	a := &app{dsn: train, stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	defer func() {
		if a.st != nil {
			a.st.Close()
		}
	}()
	src, err := a.copySource(context.Background())
	if err != nil {
		t.Fatalf("S while another round holds the copy: %v", err)
	}
	select {
	case <-released:
	default:
		t.Fatal("S took the sync lock while the other round still held it")
	}
	// S holds the lock now: a sync command meanwhile is refused, and once S's sync ends the
	// lock is free again.
	wantExit(t, "sync while S syncs", tandem(t, train, "sync"), 2, "another tandem sync of")
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	mustTandem(t, train, "sync")
}
