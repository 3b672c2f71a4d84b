package memory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// These tests pin the test hooks of faults.go, which the contract suite does not know about:
// tests of the TUI, the lease manager and workers rely on them.

var (
	alice  = store.Actor{Name: "alice", Role: store.RoleEditor}
	worker = store.Actor{Name: "thumbnailer", Role: store.RoleSystem}
)

func as(a store.Actor) context.Context { return store.WithActor(context.Background(), a) }

func mustProduct(t *testing.T, f *memory.DB, sku string) *store.Record {
	t.Helper()
	r, err := f.CreateRecord(as(alice), store.KindProduct, store.Values{"sku": sku, "name": "Lamp " + sku, "price": int64(2999), "stock": int64(10)})
	if err != nil {
		t.Fatalf("create product: %v", err)
	}
	return r
}

func mustUpdate(t *testing.T, f *memory.DB, ctx context.Context, kind store.Kind, id int64, u store.Update) *store.Record {
	t.Helper()
	res, err := f.UpdateRecord(ctx, kind, id, u)
	if err != nil {
		t.Fatalf("update %s %d: %v", kind, id, err)
	}
	return res.Record
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := store.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func TestDB_Failures(t *testing.T) {
	f := memory.New(store.Options{})
	p := mustProduct(t, f, "A1")
	f.FailNext(store.Errorf(store.EUNAVAILABLE, "connection refused"))
	_, err := f.FindRecord(as(alice), store.KindProduct, p.ID)
	wantCode(t, err, store.EUNAVAILABLE)
	if _, err := f.FindRecord(as(alice), store.KindProduct, p.ID); err != nil {
		t.Fatalf("second call: %v, want the failure used up", err)
	}
	f.FailNextOn("UpdateRecord", store.Errorf(store.EBUSY, "locked"))
	if _, err := f.FindRecord(as(alice), store.KindProduct, p.ID); err != nil {
		t.Fatalf("other method: %v, want it untouched by FailNextOn(UpdateRecord)", err)
	}
	_, err = f.UpdateRecord(as(alice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
	wantCode(t, err, store.EBUSY)
	if r, _ := f.FindRecord(as(alice), store.KindProduct, p.ID); r.Version != 1 {
		t.Fatalf("version = %d, want the failed save not written", r.Version)
	}

	l, err := f.AcquireLease(as(alice), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	f.SetFailure(func(op string) error {
		if op == "ExtendLease" {
			return store.Errorf(store.EUNAVAILABLE, "connection refused")
		}
		return nil
	})
	_, err = f.ExtendLease(as(alice), l.Token, time.Minute)
	wantCode(t, err, store.EUNAVAILABLE)
	if got := f.Calls("ExtendLease"); got != 1 {
		t.Errorf("Calls(ExtendLease) = %d, want 1", got)
	}
	if _, err := f.FindRecord(as(alice), store.KindProduct, p.ID); err != nil {
		t.Fatalf("other op: %v", err)
	}
	f.SetFailure(nil)
	if _, err := f.ExtendLease(as(alice), l.Token, time.Minute); err != nil {
		t.Fatal(err)
	}
}

func TestDB_SetClock(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f := memory.New(store.Options{})
	f.SetClock(func() time.Time { return t0 })
	p := mustProduct(t, f, "A1")
	if !p.UpdatedAt.Equal(t0) {
		t.Errorf("UpdatedAt = %v, want the database clock's %v", p.UpdatedAt, t0)
	}
	l, err := f.AcquireLease(as(alice), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
	if err != nil || !l.ExpiresAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("lease = %+v, %v", l, err)
	}
	f.Advance(time.Minute)
	_, err = f.UpdateRecord(as(alice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}, LeaseToken: l.Token})
	var le *store.LeaseError
	if !errors.As(err, &le) || !le.Lost || le.Reason != "expired" {
		t.Fatalf("save at expiry: %v, want lost (expired)", err)
	}
}

func TestDB_LoseNextReply(t *testing.T) {
	f := memory.New(store.Options{})
	p := mustProduct(t, f, "A1")
	f.LoseNextReply(store.Errorf(store.EUNAVAILABLE, "connection reset"))
	u := store.Update{Add: map[string]int64{"stock": -3}, IdempotencyKey: "save-1"}
	_, err := f.UpdateRecord(as(alice), store.KindProduct, p.ID, u)
	wantCode(t, err, store.EUNAVAILABLE)
	res, err := f.UpdateRecord(as(alice), store.KindProduct, p.ID, u)
	if err != nil || !res.Replayed || res.Record.Fields["stock"] != int64(7) {
		t.Fatalf("retry = %+v, %v; want a replay with stock 7 (applied once)", res, err)
	}
}

func TestDB_SubscribeClosedByClose(t *testing.T) {
	f := memory.New(store.Options{})
	ch, err := f.Subscribe(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-ch; ok {
		t.Fatal("channel still open after Close")
	}
	_, err = f.FindRecord(as(alice), store.KindProduct, 1)
	wantCode(t, err, store.EUNAVAILABLE)
}

// TestDB_SubscribersEnd shows that every subscription goroutine ends, whether its context
// ends or the store closes: Close waits for all of them, so a leak would hang the test.
func TestDB_SubscribersEnd(t *testing.T) {
	f := memory.New(store.Options{})
	p := mustProduct(t, f, "A1")
	var chans []<-chan store.Change
	var cancels []context.CancelFunc
	for range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		ch, err := f.Subscribe(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	mustUpdate(t, f, as(worker), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
	for i, ch := range chans {
		if c := <-ch; c.ID != 1 {
			t.Fatalf("subscriber %d got change %d first, want 1", i, c.ID)
		}
	}
	for _, cancel := range cancels[:5] {
		cancel() // these end by their context, with change 2 undelivered
	}
	for _, ch := range chans[:5] {
		for range ch {
		}
	}
	if err := f.Close(); err != nil { // the other five end by Close, blocked mid-send
		t.Fatal(err)
	}
	for _, ch := range chans[5:] {
		for range ch {
		}
	}
	for _, cancel := range cancels[5:] {
		cancel()
	}
}
