package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// TestBulkLoad_SearchAndLogs: records a Loader creates, and records a bulk create in a batch
// creates, are found by a search of each folded field (the load writes the search rows its
// COPY's triggers left), each has one history version and one change (the outside-write
// triggers wrote none), and a save later in the same batch as a bulk create is indexed by
// the trigger again (the load's setting is off after its COPY).
func TestBulkLoad_SearchAndLogs(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	doc := func(i int) store.NewRecord {
		return store.NewRecord{Kind: store.KindDocument, Values: store.Values{
			"title": fmt.Sprintf("Loaded %d", i), "body": fmt.Sprintf("Σοφία%d line", i), "tags": []string{fmt.Sprintf("TAG%d", i)}}}
	}
	l, err := db.OpenLoader(ctx)
	if err != nil || l == nil {
		t.Fatalf("open a load: %v, %v", l, err)
	}
	defer l.Close()
	loaded, err := l.CreateRecords(ctx, []store.NewRecord{doc(1), doc(2), doc(3)})
	if err != nil || len(loaded) != 3 {
		t.Fatalf("load: %d records, %v", len(loaded), err)
	}
	var batched []*store.Record
	err = db.WriteBatch(ctx, func(bctx context.Context) error {
		var err error
		if batched, err = db.CreateRecords(bctx, []store.NewRecord{doc(4), doc(5)}); err != nil || len(batched) != 2 {
			return fmt.Errorf("bulk create: %d records, %v", len(batched), err)
		}
		_, err = db.UpdateRecord(bctx, store.KindDocument, batched[1].ID, store.Update{BaseVersion: 1, Set: store.Values{"body": "Νέο κείμενο"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{"σοφία1": 1, "σοφία3": 1, "σοφία4": 1, "σοφία5": 0, "νέο κείμενο": 1, "loaded 2": 1, "tag3": 1, "loaded": 5} {
		rs, err := db.FindRecords(t.Context(), store.Filter{Kind: store.KindDocument, Search: q})
		if err != nil || len(rs) != want {
			t.Errorf("search %q = %d records, %v; want %d", q, len(rs), err, want)
		}
	}
	for _, r := range append(loaded, batched...) {
		var hist, changes int
		if err := db.pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM history WHERE kind = $1 AND record_id = $2 AND version = 1),
			(SELECT count(*) FROM changes WHERE kind = $1 AND record_id = $2 AND version = 1)`, string(r.Kind), r.ID).Scan(&hist, &changes); err != nil {
			t.Fatal(err)
		}
		if hist != 1 || changes != 1 {
			t.Errorf("%s %d: %d history versions and %d changes of its create, want 1 and 1", r.Kind, r.ID, hist, changes)
		}
	}
}

// TestBulkLoad_RacesCreatesOfTheSameSKUs: while a Loader creates products, CreateRecord
// creates some of the same SKUs (in another case: the same unique key) on other
// connections at the same time. No load fails: one a create beats between its check and its
// COPY is rolled back whole and creates none (the caller's batches then refuse those rows
// one by one); each SKU is created once, by the load or by the create.
func TestBulkLoad_RacesCreatesOfTheSameSKUs(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	l, err := db.OpenLoader(ctx)
	if err != nil || l == nil {
		t.Fatalf("open a load: %v, %v", l, err)
	}
	defer l.Close()
	const rounds, n = 20, 300
	beaten := 0
	for r := range rounds {
		recs := make([]store.NewRecord, n)
		for i := range recs {
			recs[i] = store.NewRecord{Kind: store.KindProduct, Values: store.Values{"sku": fmt.Sprintf("R%d-%d", r, i), "name": "loaded"}}
		}
		start := make(chan struct{})
		bySKU := make(chan string, n)
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := n - 1 - g; i >= 0; i -= 7 {
					sku := fmt.Sprintf("r%d-%d", r, i)
					if _, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": sku, "name": "raced"}); err == nil {
						bySKU <- store.SKUKey(sku)
					}
				}
			}()
		}
		close(start)
		loaded, err := l.CreateRecords(ctx, recs)
		wg.Wait()
		close(bySKU)
		if err != nil {
			t.Fatalf("round %d: the load failed: %v", r, err)
		}
		if len(loaded) < n {
			beaten++
		}
		raced := map[string]bool{}
		for k := range bySKU {
			raced[k] = true
		}
		for _, rec := range loaded {
			if k := store.SKUKey(rec.Fields["sku"].(string)); raced[k] {
				t.Errorf("round %d: %s created by the load and by a create", r, k)
			}
		}
		var count int
		if err := db.pool.QueryRow(t.Context(), "SELECT count(*) FROM products WHERE sku_key LIKE $1", store.SKUKey(fmt.Sprintf("r%d-", r))+"%").Scan(&count); err != nil {
			t.Fatal(err)
		}
		if count != len(loaded)+len(raced) {
			t.Errorf("round %d: %d products, want %d loaded and %d raced", r, count, len(loaded), len(raced))
		}
	}
	t.Logf("%d of %d loads took fewer than all their records", beaten, rounds)
}
