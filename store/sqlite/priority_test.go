package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// TestDB_BackgroundWrites mixes background writes (a sync's, InBackground) with a person's
// saves on one file from many goroutines: every keyed relative save applies exactly once,
// whichever runs first, and a background write whose context ends while it gives way fails
// with its context's error and writes nothing.
func TestDB_BackgroundWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db, other := mustOpen(t, path), mustOpen(t, path)
	p := mustProduct(t, db)
	const writers, ops = 6, 30
	var wg sync.WaitGroup
	errs := make(chan error, writers*ops)
	for w := range writers {
		wg.Go(func() {
			ctx := editor(t, fmt.Sprintf("w%d", w))
			st := db
			if w%2 == 1 {
				// Half the writers write in the background, on another DB of the file.
				st, ctx = other, other.InBackground(ctx)
			}
			for i := range ops {
				key := fmt.Sprintf("w%d-%d", w, i)
				if _, err := st.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{
					Add: map[string]int64{"stock": 1}, IdempotencyKey: key}); err != nil {
					errs <- fmt.Errorf("save %s: %w", key, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := db.FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(writers * ops); got.Fields["stock"] != want || got.Version != want+1 {
		t.Errorf("stock %v at version %d, want %d at version %d", got.Fields["stock"], got.Version, want, want+1)
	}

	// A background write that gives way while saves keep the queue busy, until its context
	// ends: written once it answers nil, not at all once it answers an error.
	stop := make(chan struct{})
	var saves sync.WaitGroup
	saves.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := db.UpdateRecord(editor(t, "ann"), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(db.InBackground(editor(t, "sync")), time.Millisecond)
	_, err = db.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{Set: store.Values{"name": "from the sync"}})
	cancel()
	close(stop)
	saves.Wait()
	got, ferr := db.FindRecord(t.Context(), store.KindProduct, p.ID)
	if ferr != nil {
		t.Fatal(ferr)
	}
	switch name := got.Fields["name"]; {
	case err == nil && name != "from the sync":
		t.Errorf("background save answered nil but the name is %q", name)
	case err != nil && name == "from the sync":
		t.Errorf("background save answered %v but was written", err)
	}
}
