package sqlite_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

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
