package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// TestDB_GroupCommit runs saves from many goroutines on several DBs of one file, so that
// the writers of the process commit in groups: keyed relative saves that must all apply
// once, between saves that must fail (a stale absolute save, a price that would go
// negative) and so are rolled back alone, without taking their group's saves with them.
func TestDB_GroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	dbs := []*sqlite.DB{mustOpen(t, path), mustOpen(t, path), mustOpen(t, path)}
	p := mustProduct(t, dbs[0])
	const writers, ops = 6, 40
	sys := store.WithActor(t.Context(), store.Actor{Name: "bench", Role: store.RoleSystem})
	ed := editor(t, "bob")
	var wg sync.WaitGroup
	errs := make(chan error, writers*ops*3)
	for w := range writers {
		db := dbs[w%len(dbs)]
		wg.Go(func() {
			for i := range ops {
				key := fmt.Sprintf("w%d-%d", w, i)
				if _, err := db.UpdateRecord(sys, store.KindProduct, p.ID, store.Update{
					Add: map[string]int64{"stock": 1}, IdempotencyKey: key}); err != nil {
					errs <- fmt.Errorf("save %s: %w", key, err)
				}
				_, err := db.UpdateRecord(ed, store.KindProduct, p.ID, store.Update{
					BaseVersion: 1, Set: store.Values{"name": "stale"}})
				if store.ErrorCode(err) != store.ECONFLICT {
					errs <- fmt.Errorf("stale save: %v, want %s", err, store.ECONFLICT)
				}
				_, err = db.UpdateRecord(ed, store.KindProduct, p.ID, store.Update{
					Add: map[string]int64{"price": -1_000_000}})
				if store.ErrorCode(err) != store.EINVALID {
					errs <- fmt.Errorf("negative price: %v, want %s", err, store.EINVALID)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := dbs[1].FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(writers * ops); got.Fields["stock"] != want || got.Version != want+1 {
		t.Errorf("stock %v at version %d, want %d at version %d", got.Fields["stock"], got.Version, want, want+1)
	}
	if got.Fields["name"] != "Hammer" || got.Fields["price"] != int64(2999) {
		t.Errorf("a failed save wrote: name %v, price %v", got.Fields["name"], got.Fields["price"])
	}
	changes, err := dbs[2].Changes(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != writers*ops+1 {
		t.Errorf("%d change rows, want %d (the create and one per save)", len(changes), writers*ops+1)
	}
	for i, c := range changes {
		if c.Version != int64(i+1) {
			t.Fatalf("change %d has version %d, want %d: change ids out of commit order", c.ID, c.Version, i+1)
		}
	}
	for w := range writers {
		for i := range ops {
			k, err := dbs[0].FindKey(t.Context(), store.ScopeAPI, fmt.Sprintf("w%d-%d", w, i))
			if err != nil || k.Status != store.KeyCompleted {
				t.Fatalf("key w%d-%d: %+v, %v; want completed", w, i, k, err)
			}
		}
	}
}

// TestDB_GroupCommit_Abandoned holds the writers' queue with a save whose callback waits,
// queues saves behind it whose contexts end while they wait, and one that does not: the
// abandoned ones fail with EBUSY and never apply, even after the queue moves again, and
// the one behind them is still run (the lead passes over the abandoned ones).
func TestDB_GroupCommit_Abandoned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db, other := mustOpen(t, path), mustOpen(t, path)
	p := mustProduct(t, db)
	sys := store.WithActor(t.Context(), store.Actor{Name: "worker", Role: store.RoleSystem})
	entered, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		_, err := db.LockedUpdate(sys, store.KindProduct, p.ID, func(r *store.Record) (store.Update, error) {
			close(entered)
			<-release
			return store.Update{Add: map[string]int64{"stock": 1}}, nil
		})
		held <- err
	}()
	<-entered
	for i := range 3 {
		ctx, cancel := context.WithTimeout(sys, 50*time.Millisecond)
		_, err := other.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{
			Add: map[string]int64{"stock": 100}, IdempotencyKey: fmt.Sprintf("gone-%d", i)})
		cancel()
		if store.ErrorCode(err) != store.EBUSY {
			t.Fatalf("save whose context ended in the queue = %v, want %s", err, store.EBUSY)
		}
	}
	behind := make(chan error, 1)
	go func() {
		_, err := other.UpdateRecord(sys, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 10}})
		behind <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it queue behind the abandoned ones
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("held save: %v", err)
	}
	if err := <-behind; err != nil {
		t.Fatalf("save queued behind abandoned ones: %v", err)
	}
	got, err := db.FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fields["stock"] != int64(11) || got.Version != 3 {
		t.Errorf("stock %v at version %d, want 11 at version 3 (the abandoned saves applied?)", got.Fields["stock"], got.Version)
	}
	for i := range 3 {
		if _, err := db.FindKey(t.Context(), store.ScopeAPI, fmt.Sprintf("gone-%d", i)); store.ErrorCode(err) != store.ENOTFOUND {
			t.Errorf("key of abandoned save %d: %v, want ENOTFOUND", i, err)
		}
	}
}
