package postgres

import (
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// TestRelativeSave_OneStatement: a system writer's keyed relative save is written by the one
// statement of relativeSave, and each case that statement leaves to the full save (a replayed
// key, a lease row on a written group, a counter leaving its range) is answered by the full
// save, with nothing of it written by the statement.
func TestRelativeSave_OneStatement(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	p := mustCreateProduct(t, db, "ONE")
	ctx := actx(t, worker)
	add := func(key string, d int64) (*store.UpdateResult, error) {
		return db.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": d}, IdempotencyKey: key})
	}
	fast := func() int64 { return db.oneStatementSaves.Load() }

	for i, key := range []string{"a", "b", "c"} {
		res, err := add(key, 2)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(2 * (i + 1)); res.Record.Fields["stock"] != want || res.Version != p.Version+int64(i+1) {
			t.Fatalf("save %s = stock %v, version %d; want %d, %d", key, res.Record.Fields["stock"], res.Version, want, p.Version+int64(i+1))
		}
	}
	if fast() != 3 {
		t.Fatalf("%d of 3 saves made by the one statement", fast())
	}
	if res, err := add("b", 2); err != nil || !res.Replayed || res.Version != p.Version+2 {
		t.Fatalf("key b again = %+v, %v; want a replay of version %d", res, err, p.Version+2)
	}
	if _, err := add("d", -7); store.ErrorCode(err) != "" {
		t.Fatalf("stock 6 - 7 = %v; a product's stock may go below zero", err)
	}
	if fast() != 4 {
		t.Fatalf("one-statement saves = %d after a replay and a negative stock, want 4", fast())
	}
	l, err := db.AcquireLease(actx(t, alice), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := add("e", 1); store.ErrorCode(err) != store.ELEASE {
		t.Fatalf("save under a live lease = %v, want ELEASE", err)
	}
	if _, err := db.ReleaseLease(actx(t, alice), l.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := add("f", 1); err != nil {
		t.Fatalf("save after the release: %v", err)
	}
	if fast() != 4 {
		t.Fatalf("one-statement saves = %d with a lease row on the record, want still 4 (the full save decides)", fast())
	}
	got, err := db.FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fields["stock"] != int64(0) || got.Version != p.Version+5 {
		t.Errorf("record = stock %v, version %d; want 0, %d", got.Fields["stock"], got.Version, p.Version+5)
	}
	ops, err := db.Changes(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	saves := 0
	for _, c := range ops {
		if c.Event == store.EventSaved && c.RecordID == p.ID {
			saves++
		}
	}
	if saves != 5 {
		t.Errorf("%d saved changes, want 5: one per written save, none for the replay or the refused save", saves)
	}
}
