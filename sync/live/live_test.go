package live_test

import (
	"context"
	"path/filepath"
	gosync "sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
	"github.com/tandem-editor/tandem/sync/live"
)

func as(name string) context.Context {
	return store.WithActor(context.Background(), store.Actor{Name: name, Role: store.RoleEditor})
}

func open(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// waitFor polls cond until it holds, failing after a generous wait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSyncer_PushesPullsAndWaitsOffline runs the syncer on a SQLite copy of a SQLite source
// whose opener the test switches off and on: a local save goes out at once while the source
// answers, a save on the source comes in, saves made while it does not answer wait and go
// out once, after it answers again, and the status says which.
func TestSyncer_PushesPullsAndWaitsOffline(t *testing.T) {
	dir := t.TempDir()
	src := open(t, filepath.Join(dir, "source.db"))
	r, err := src.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": "LIV-1", "name": "lamp", "price": int64(1000), "stock": int64(50)})
	if err != nil {
		t.Fatal(err)
	}
	wc := open(t, filepath.Join(dir, "copy.db"))
	if _, err := tsync.Clone(context.Background(), src, wc, tsync.CloneOptions{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	var mu gosync.Mutex
	reachable := true
	s := live.New(wc, live.Options{
		Open: func(ctx context.Context) (store.Store, error) {
			mu.Lock()
			defer mu.Unlock()
			if !reachable {
				return nil, store.Errorf(store.EUNAVAILABLE, "the test cut the source")
			}
			// A store of its own over the source's file, as a process would open it; the
			// syncer closes it when a sync fails.
			return sqlite.Open(ctx, filepath.Join(dir, "source.db"), store.Options{})
		},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	go s.Run(ctx)
	defer func() { cancel(); <-s.Done() }()
	waitFor(t, "online", func() bool { return s.Status().Online })

	get := func(st store.Store) *store.Record {
		rec, err := st.FindRecord(context.Background(), store.KindProduct, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if _, err := wc.UpdateRecord(as("ann"), store.KindProduct, r.ID, store.Update{Add: map[string]int64{"stock": -1}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the local save on the source", func() bool { return get(src).Fields["stock"] == int64(49) })
	waitFor(t, "the push in the status", func() bool {
		st := s.Status()
		return st.PushSeq > 0 && len(st.LastPushed) == 1 && st.LastPushed[0].ID == r.ID
	})
	if _, err := src.UpdateRecord(as("bob"), store.KindProduct, r.ID, store.Update{BaseVersion: get(src).Version, Set: store.Values{"name": "desk lamp"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the source's save in the copy", func() bool { return get(wc).Fields["name"] == "desk lamp" })

	// Cut: the source's opener fails, and the source open now is closed under the syncer.
	mu.Lock()
	reachable = false
	mu.Unlock()
	s.Kick()
	for range 3 {
		if _, err := wc.UpdateRecord(as("ann"), store.KindProduct, r.ID, store.Update{Add: map[string]int64{"stock": -1}}); err != nil {
			t.Fatal(err)
		}
	}
	// The open source still answers (SQLite): what matters is that nothing is lost or
	// doubled whichever way the rounds fall. Restore and converge.
	mu.Lock()
	reachable = true
	mu.Unlock()
	waitFor(t, "the three adjusts on the source", func() bool { return get(src).Fields["stock"] == int64(46) })
	waitFor(t, "nothing pending", func() bool { st := s.Status(); return st.Online && st.Pending == 0 })
	time.Sleep(200 * time.Millisecond)
	if got := get(src).Fields["stock"]; got != int64(46) {
		t.Fatalf("stock on the source %v, want 46 (each adjust once)", got)
	}
}

// TestSyncer_OfflineStatus: a source that never answers leaves the saves pending and the
// status offline, with the time it went offline.
func TestSyncer_OfflineStatus(t *testing.T) {
	dir := t.TempDir()
	src := open(t, filepath.Join(dir, "source.db"))
	r, err := src.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": "LIV-2", "name": "lamp", "price": int64(1000), "stock": int64(5)})
	if err != nil {
		t.Fatal(err)
	}
	wc := open(t, filepath.Join(dir, "copy.db"))
	if _, err := tsync.Clone(context.Background(), src, wc, tsync.CloneOptions{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	s := live.New(wc, live.Options{
		Open: func(ctx context.Context) (store.Store, error) {
			return nil, store.Errorf(store.EUNAVAILABLE, "no network")
		},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	go s.Run(ctx)
	defer func() { cancel(); <-s.Done() }()
	if _, err := wc.UpdateRecord(as("ann"), store.KindProduct, r.ID, store.Update{Add: map[string]int64{"stock": -1}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "offline with 1 pending", func() bool {
		st := s.Status()
		return st.Started && !st.Online && !st.OfflineSince.IsZero() && st.Pending == 1 && st.Err != ""
	})
}

// TestSyncer_TellsAnotherSyncsPush: two syncers on one copy (two TUIs), one of which finds
// the copy's sync lock always taken by the other: a save made through the locked-out one,
// and pushed by the other, is told by both as pushed, with the source's version.
func TestSyncer_TellsAnotherSyncsPush(t *testing.T) {
	dir := t.TempDir()
	src := open(t, filepath.Join(dir, "source.db"))
	r, err := src.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": "LIV-1", "name": "lamp", "price": int64(1000), "stock": int64(50)})
	if err != nil {
		t.Fatal(err)
	}
	wcA := open(t, filepath.Join(dir, "copy.db"))
	if _, err := tsync.Clone(context.Background(), src, wcA, tsync.CloneOptions{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	wcB := open(t, filepath.Join(dir, "copy.db"))
	opener := func(ctx context.Context) (store.Store, error) {
		return sqlite.Open(ctx, filepath.Join(dir, "source.db"), store.Options{})
	}
	a := live.New(wcA, live.Options{Open: opener})
	told := make(chan struct{}, 1)
	b := live.New(wcB, live.Options{Open: opener, Lock: func() (func(), bool, error) { return nil, false, nil },
		Notify: func() {
			select {
			case told <- struct{}{}:
			default:
			}
		}})
	ctx, cancel := context.WithCancel(context.Background())
	go a.Run(ctx)
	go b.Run(ctx)
	defer func() { cancel(); <-a.Done(); <-b.Done() }()
	waitFor(t, "online", func() bool { return a.Status().Online })
	// b has read the copy's outbox before the save.
	select {
	case <-told:
	case <-time.After(20 * time.Second):
		t.Fatal("b's first round: not within 20 s")
	}

	if _, err := wcB.UpdateRecord(as("ann"), store.KindProduct, r.ID, store.Update{Add: map[string]int64{"stock": -1}}); err != nil {
		t.Fatal(err)
	}
	b.Kick()
	waitFor(t, "the save on the source", func() bool {
		got, err := src.FindRecord(context.Background(), store.KindProduct, r.ID)
		return err == nil && got.Fields["stock"] == int64(49)
	})
	for name, s := range map[string]*live.Syncer{"a": a, "b": b} {
		waitFor(t, name+" tells the push", func() bool {
			st := s.Status()
			return st.PushSeq > 0 && len(st.LastPushed) == 1 && st.LastPushed[0].ID == r.ID && st.LastPushed[0].Version == 2
		})
	}
}
