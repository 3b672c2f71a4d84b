package sqlite_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// pulled returns the "pulled" rows of the copy's change log after cursor, as "kind id vN by".
func pulled(t *testing.T, db *sqlite.DB, after int64) ([]string, int64) {
	t.Helper()
	chs, err := db.Changes(context.Background(), after, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range chs {
		after = c.ID
		if c.Event == store.EventPulled {
			out = append(out, string(c.Kind)+" "+itoa(c.RecordID)+" v"+itoa(c.Version)+" "+c.Actor)
		}
	}
	return out, after
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestDB_WorkingCopyPulledEvents: a sync's pull leaves one "pulled" row in the copy's change
// log per record it took from the source, with the source's writer and version, so that a
// TUI or a watch on the copy hears of it as of a save; records it held back (local changes)
// or already had at that version get none, and history leaves the rows out.
func TestDB_WorkingCopyPulledEvents(t *testing.T) {
	ctx := context.Background()
	db, _ := newCopy(t, "wc.db", 7, store.KindProduct, store.KindDocument)
	now := time.Now().UTC().Truncate(time.Millisecond)
	prod := func(v int64, name string) *store.Record {
		return &store.Record{Kind: store.KindProduct, ID: 42, Version: v, UpdatedBy: "bob", UpdatedAt: now,
			Fields: store.Values{"sku": "A-1", "name": name, "stock": int64(10)}}
	}
	doc := func(v int64, title string) *store.Record {
		return &store.Record{Kind: store.KindDocument, ID: 3, Version: v, UpdatedBy: "carol", UpdatedAt: now, Fields: store.Values{"title": title}}
	}

	// A copy with nothing local takes records in bulk.
	if err := db.ApplySource(ctx, []*store.Record{prod(5, "lamp"), doc(2, "t")}, store.FeedPoint{ID: 9}); err != nil {
		t.Fatal(err)
	}
	got, cur := pulled(t, db, 0)
	if want := []string{"product 42 v5 bob", "document 3 v2 carol"}; !equalUnordered(got, want) {
		t.Fatalf("first pull logged %q, want %q", got, want)
	}
	// The same versions again: nothing new to hear.
	if err := db.ApplySource(ctx, []*store.Record{prod(5, "lamp"), doc(2, "t")}, store.FeedPoint{ID: 9}); err != nil {
		t.Fatal(err)
	}
	if got, _ := pulled(t, db, cur); len(got) != 0 {
		t.Fatalf("a pull of versions the copy had logged %q", got)
	}
	// A local save holds product 42 back; the document still comes, one by one.
	if _, err := db.UpdateRecord(wcEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: 5, Set: store.Values{"name": "lamp 2"}}); err != nil {
		t.Fatal(err)
	}
	_, cur = pulled(t, db, cur)
	if err := db.ApplySource(ctx, []*store.Record{prod(6, "lamp by bob"), doc(3, "t 2")}, store.FeedPoint{ID: 11}); err != nil {
		t.Fatal(err)
	}
	got, _ = pulled(t, db, cur)
	if want := []string{"document 3 v3 carol"}; !equalUnordered(got, want) {
		t.Fatalf("pull beside a local change logged %q, want %q", got, want)
	}
	// History and the operation log are the copy's own writes only.
	ops, err := db.FindOps(ctx, store.KindDocument, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ops {
		if c.Event == store.EventPulled {
			t.Fatalf("operation log of document 3 holds a pulled row: %+v", c)
		}
	}
}

func equalUnordered(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s]--; seen[s] < 0 {
			return false
		}
	}
	return true
}
