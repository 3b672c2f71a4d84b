package sync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/resave"
	tsync "github.com/tandem-editor/tandem/sync"
)

// busySource is a source where another writer (carol) saves the record busy names just
// before each of the sync's first racing saves of it, so that each of those meets a newer
// version.
type busySource struct {
	store.Store
	busy   int64
	racing int
}

func (s *busySource) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	if kind == store.KindProduct && id == s.busy && s.racing > 0 && len(u.Set) > 0 {
		s.racing--
		r, err := s.Store.FindRecord(ctx, kind, id)
		if err != nil {
			return nil, err
		}
		// Returned, not t.Fatal: the push may call this from a goroutine of its own.
		if _, err := s.Store.UpdateRecord(as("carol"), kind, id, store.Update{BaseVersion: r.Version,
			Set: store.Values{"price": r.Fields["price"].(int64) + 1}}); err != nil {
			return nil, fmt.Errorf("carol's save: %w", err)
		}
	}
	return s.Store.UpdateRecord(ctx, kind, id, u)
}

// TestSync_MergeBound: a push whose source moves on at every save merges and saves again,
// resave.MaxRounds times after its first save, and lands when the last of those meets no
// newer version; when it does, the sync stops with an error that names the record, and the
// copy keeps its edit for the next sync.
func TestSync_MergeBound(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			base := open(t)
			r, err := base.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": "HOT-1", "name": "hot", "price": int64(1000)})
			if err != nil {
				t.Fatal(err)
			}
			src := &busySource{Store: base, busy: r.ID}
			a := mustClone(t, src, "a")
			mustSet(t, a, "alice", store.KindProduct, r.ID, store.Values{"name": "from alice"})

			src.racing = 1 + resave.MaxRounds
			_, err = tsync.Sync(context.Background(), src, a)
			if err == nil || !strings.Contains(err.Error(), "product 1 kept changing: 5 merged saves") {
				t.Fatalf("sync against a source that moved on at each of %d saves: %v, want it to give up naming product 1", 1+resave.MaxRounds, err)
			}
			if got := mustGet(t, base, store.KindProduct, r.ID).Fields["name"]; got != "hot" {
				t.Errorf("the source's name is %v after the sync gave up", got)
			}

			src.racing = resave.MaxRounds
			mustSync(t, src, a)
			got := mustGet(t, base, store.KindProduct, r.ID)
			if got.Fields["name"] != "from alice" || got.Fields["price"] != int64(1000+2*resave.MaxRounds+1) {
				t.Errorf("after the merges the source has %v, want alice's name and carol's last price", got.Fields)
			}
		})
	}
}
