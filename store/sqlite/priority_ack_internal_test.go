package sqlite

import (
	"database/sql/driver"
	"path/filepath"
	"sync"
	"testing"
	"time"

	modernc "modernc.org/sqlite"

	"github.com/tandem-editor/tandem/store"
)

// ackStep is called by a trigger of the test below at each outbox entry an acknowledgement
// deletes; the test sets it (nil: nothing).
var (
	ackStepMu sync.Mutex
	ackStep   func()
)

func init() {
	if err := modernc.RegisterScalarFunction("tandem_test_ack_step", 0, func(*modernc.FunctionContext, []driver.Value) (driver.Value, error) {
		ackStepMu.Lock()
		f := ackStep
		ackStepMu.Unlock()
		if f != nil {
			f()
		}
		return nil, nil
	}); err != nil {
		panic(err)
	}
}

// TestAckEntries_GivesWay: the acknowledgements of a sync (a background write) that a save
// comes to wait for while they run commit the ones done and let the save go before the
// rest: the save sees the first acknowledged and the others not yet, and all of them are
// done in the end. A write of the person waits for one acknowledgement, not for the batch.
func TestAckEntries_GivesWay(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "wc.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.StartCopy(ctx, store.CopyState{SourceID: "src", Source: "somewhere", Kinds: []store.Kind{store.KindProduct}, Position: 1}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	var recs []*store.Record
	for i := range 4 {
		recs = append(recs, &store.Record{Kind: store.KindProduct, ID: int64(i + 1), Version: 1, UpdatedBy: "bob", UpdatedAt: now,
			Fields: store.Values{"sku": "S-" + string(rune('A'+i)), "name": "lamp", "price": int64(100), "stock": int64(10)}})
	}
	if err := db.ApplySource(ctx, recs, store.FeedPoint{}); err != nil {
		t.Fatal(err)
	}
	ed := store.WithActor(ctx, store.Actor{Name: "ann", Role: store.RoleEditor})
	for _, r := range recs {
		if _, err := db.UpdateRecord(ed, store.KindProduct, r.ID, store.Update{Add: map[string]int64{"stock": -1}}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := db.Outbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(recs) {
		t.Fatalf("%d outbox entries, want %d", len(out), len(recs))
	}
	var acks []store.Ack
	for i, e := range out {
		r := *recs[i]
		r.Version, r.Fields = 2, r.Fields.Clone()
		r.Fields["stock"] = int64(9)
		acks = append(acks, store.Ack{Seq: e.Seq, Record: &r, Rebase: true})
	}
	if _, err := db.write.ExecContext(ctx, `CREATE TRIGGER ack_step AFTER DELETE ON wc_outbox BEGIN SELECT tandem_test_ack_step(); END`); err != nil {
		t.Fatal(err)
	}

	// However slow the machine, the acknowledgements give way here.
	defer func(d time.Duration) { givingWay = d }(givingWay)
	givingWay = time.Hour

	// At the first acknowledgement's delete, a write of the person is queued, and the
	// acknowledgements go on once it waits.
	left := make(chan int, 1)
	var once sync.Once
	var probe sync.WaitGroup
	ackStepMu.Lock()
	ackStep = func() {
		once.Do(func() {
			probe.Go(func() {
				err := db.inTx(ctx, "probe", func(t *tx) error {
					var n int
					if err := t.QueryRowContext(ctx, `SELECT count(*) FROM wc_outbox`).Scan(&n); err != nil {
						return err
					}
					left <- n
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			})
			for !db.writer.othersWaiting() {
				time.Sleep(time.Millisecond)
			}
		})
	}
	ackStepMu.Unlock()
	defer func() {
		ackStepMu.Lock()
		ackStep = nil
		ackStepMu.Unlock()
	}()
	if err := db.AckEntries(db.InBackground(ctx), acks); err != nil {
		t.Fatal(err)
	}
	probe.Wait()
	if got, want := <-left, len(acks)-1; got != want {
		t.Errorf("the waiting write saw %d outbox entries, want %d (the first acknowledgement committed, the rest after it)", got, want)
	}
	if out, err := db.Outbox(ctx, 0); err != nil || len(out) != 0 {
		t.Errorf("outbox after the acknowledgements: %d entries (%v), want none", len(out), err)
	}
	for _, r := range recs {
		got, err := db.FindRecord(ctx, store.KindProduct, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 2 || got.Fields["stock"] != int64(9) {
			t.Errorf("product %d: stock %v at version %d, want 9 at version 2", r.ID, got.Fields["stock"], got.Version)
		}
	}
}
