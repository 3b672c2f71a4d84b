package exchange

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/resave"
)

// racingStore is a store where another writer (bob) changes the stock of product 1 just
// before each of the next racing saves of its other fields, so that each of them meets a
// newer version.
type racingStore struct {
	store.Store
	racing int
}

func (s *racingStore) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	if kind == store.KindProduct && id == 1 && len(u.Set) > 0 && s.racing > 0 {
		s.racing--
		if _, err := s.Store.UpdateRecord(store.WithActor(ctx, bob), kind, id, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
			return nil, fmt.Errorf("bob's adjust: %w", err)
		}
	}
	return s.Store.UpdateRecord(ctx, kind, id, u)
}

// TestImport_MergeBound: a stale row imported with --merge merges and saves again each time
// another writer got in first, resave.MaxRounds saves in all (the bound sync and the editor
// keep), and lands when the last of them meets no newer version; when it does, the row is a
// conflict that says the record kept changing, and nothing of it is written. (The import
// gave up after four tries before.)
func TestImport_MergeBound(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		base := open(t)
		mustProducts(t, base, 1)
		st := &racingStore{Store: base}
		ctx := as(t, alice)
		if _, err := base.UpdateRecord(as(t, bob), store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"name": "Bob's"}}); err != nil {
			t.Fatal(err)
		}
		row := []byte("kind,id,version,price\nproduct,1,1,4.56\n")

		st.racing = resave.MaxRounds - 1
		res, sum := mustImport(t, ctx, st, row, CSV, ImportOptions{Merge: true, KeyPrefix: "lands"})
		r, _ := base.FindRecord(ctx, store.KindProduct, 1)
		if sum[Updated] != 1 || r.Fields["price"] != int64(456) || r.Fields["name"] != "Bob's" || r.UpdatedBy != "alice" {
			t.Fatalf("a record that moved on at %d saves: %v %+v, record %v by %s; want the price merged in on the last save",
				resave.MaxRounds-1, sum, res[0], r.Fields, r.UpdatedBy)
		}

		st.racing = resave.MaxRounds
		avail := "discontinued" // a field no one else changed since version 1
		if r.Fields["availability"] == avail {
			avail = "backorder"
		}
		row = []byte("kind,id,version,availability\nproduct,1,1," + avail + "\n")
		res, sum = mustImport(t, ctx, st, row, CSV, ImportOptions{Merge: true, KeyPrefix: "gives-up"})
		if sum[Conflict] != 1 || !strings.Contains(res[0].Message, "product 1 kept changing while the import merged and wrote it (5 merged saves)") {
			t.Fatalf("a record that moved on at each of %d saves: %v %+v, want a conflict saying it kept changing", resave.MaxRounds, sum, res[0])
		}
		if r, _ := base.FindRecord(ctx, store.KindProduct, 1); r.Fields["availability"] == avail {
			t.Fatalf("the row that gave up wrote its availability: %v", r.Fields)
		}
	})
}
