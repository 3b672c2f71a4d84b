package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

var (
	alice  = store.Actor{Name: "alice", Role: store.RoleEditor}
	bob    = store.Actor{Name: "bob", Role: store.RoleEditor}
	worker = store.Actor{Name: "thumbnailer", Role: store.RoleSystem}
)

func as(a store.Actor) context.Context { return store.WithActor(context.Background(), a) }

func mustProduct(t *testing.T, f *Fake, sku string) *store.Record {
	t.Helper()
	r, err := f.CreateRecord(as(alice), store.KindProduct, store.Values{"sku": sku, "name": "Lamp " + sku, "price": int64(2999), "stock": int64(10)})
	if err != nil {
		t.Fatalf("create product: %v", err)
	}
	return r
}

func mustDoc(t *testing.T, f *Fake, title string, parent *int64) *store.Record {
	t.Helper()
	vals := store.Values{"title": title}
	if parent != nil {
		vals["parent_id"] = *parent
	}
	r, err := f.CreateRecord(as(alice), store.KindDocument, vals)
	if err != nil {
		t.Fatalf("create document %q: %v", title, err)
	}
	return r
}

func mustUpdate(t *testing.T, f *Fake, ctx context.Context, kind store.Kind, id int64, u store.Update) *store.Record {
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

func TestFake_UpdateRecord(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := NewFake(store.Options{})
		p := mustProduct(t, f, "A1")
		if p.Version != 1 || p.ID != 1 || p.UpdatedBy != "alice" {
			t.Fatalf("created = %+v, want id 1 version 1 by alice", p)
		}
		got := mustUpdate(t, f, as(bob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(3100)}})
		if got.Version != 2 || got.Fields["price"] != int64(3100) || got.Fields["name"] != "Lamp A1" || got.UpdatedBy != "bob" {
			t.Fatalf("updated = %+v", got)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		f := NewFake(store.Options{})
		p := mustProduct(t, f, "A1")
		mustUpdate(t, f, as(bob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(3100)}})
		_, err := f.UpdateRecord(as(alice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}})
		var ce *store.ConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want *ConflictError", err)
		}
		if ce.Current.Version != 2 || ce.Current.Fields["price"] != int64(3100) {
			t.Errorf("Current = %+v, want version 2 with bob's price", ce.Current)
		}
		if got := ce.Actors(); len(got) != 1 || got[0] != "bob" {
			t.Errorf("Actors = %v, want [bob]", got)
		}
		if got := ce.ChangedFields(); len(got) != 1 || got[0] != "price" {
			t.Errorf("ChangedFields = %v, want [price]", got)
		}
		if r, _ := f.FindRecord(as(alice), store.KindProduct, p.ID); r.Fields["name"] != "Lamp A1" || r.Version != 2 {
			t.Errorf("after conflict: %+v, want nothing written", r)
		}
	})
	t.Run("RelativeNeverLost", func(t *testing.T) {
		f := NewFake(store.Options{})
		p := mustProduct(t, f, "A1")
		mustUpdate(t, f, as(bob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1)}})
		got := mustUpdate(t, f, as(worker), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -3}})
		if got.Fields["stock"] != int64(7) || got.Version != 3 {
			t.Fatalf("after stock -3: %+v", got)
		}
		ops, err := f.FindOps(as(alice), store.KindProduct, p.ID)
		if err != nil || len(ops) != 1 || ops[0].Deltas["stock"] != -3 {
			t.Fatalf("ops = %+v, %v; want one op with stock -3", ops, err)
		}
	})
	t.Run("ErrOwnership", func(t *testing.T) {
		f := NewFake(store.Options{})
		p := mustProduct(t, f, "A1")
		_, err := f.UpdateRecord(as(alice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"thumbnail": "x.png"}})
		wantCode(t, err, store.EFORBIDDEN)
		_, err = f.UpdateRecord(as(worker), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}})
		wantCode(t, err, store.EFORBIDDEN)
		mustUpdate(t, f, as(worker), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"thumbnail": "x.png"}})
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		f := NewFake(store.Options{})
		p := mustProduct(t, f, "A1")
		mustProduct(t, f, "B2")
		for name, u := range map[string]store.Update{
			"no base":       {Set: store.Values{"name": "x"}},
			"unknown":       {BaseVersion: 1, Set: store.Values{"colour": "red"}},
			"wrong type":    {BaseVersion: 1, Set: store.Values{"stock": "abc"}},
			"not counter":   {Add: map[string]int64{"price": 1}},
			"duplicate sku": {BaseVersion: 1, Set: store.Values{"sku": "B2"}},
		} {
			_, err := f.UpdateRecord(as(alice), store.KindProduct, p.ID, u)
			if store.ErrorCode(err) != store.EINVALID {
				t.Errorf("%s: err = %v, want EINVALID", name, err)
			}
		}
		_, err := f.UpdateRecord(context.Background(), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
		wantCode(t, err, store.EINVALID)
		_, err = f.UpdateRecord(as(alice), store.KindProduct, 99, store.Update{Add: map[string]int64{"stock": 1}})
		wantCode(t, err, store.ENOTFOUND)
	})
	t.Run("Idempotent", func(t *testing.T) {
		f := NewFake(store.Options{})
		p := mustProduct(t, f, "A1")
		u := store.Update{Add: map[string]int64{"stock": -1}, IdempotencyKey: "k1"}
		mustUpdate(t, f, as(alice), store.KindProduct, p.ID, u)
		res, err := f.UpdateRecord(as(alice), store.KindProduct, p.ID, u)
		if err != nil || !res.Replayed || res.Record.Fields["stock"] != int64(9) {
			t.Fatalf("replay = %+v, %v; want replayed with stock 9", res, err)
		}
		u.Add["stock"] = -2
		_, err = f.UpdateRecord(as(alice), store.KindProduct, p.ID, u)
		wantCode(t, err, store.EINVALID)
		k, err := f.FindKey(as(alice), store.ScopeAPI, "k1")
		if err != nil || k.Status != store.KeyCompleted {
			t.Fatalf("key = %+v, %v; want COMPLETED", k, err)
		}
	})
	t.Run("DeepCopies", func(t *testing.T) {
		f := NewFake(store.Options{})
		p := mustProduct(t, f, "A1")
		cats := []string{"a", "b"}
		got := mustUpdate(t, f, as(alice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"categories": cats}})
		cats[0] = "z"
		got.Fields["categories"].([]string)[1] = "y"
		got.Fields["name"] = "changed"
		r, _ := f.FindRecord(as(alice), store.KindProduct, p.ID)
		if c := r.Fields["categories"].([]string); c[0] != "a" || c[1] != "b" || r.Fields["name"] != "Lamp A1" {
			t.Fatalf("stored record changed through a caller's copy: %+v", r.Fields)
		}
	})
}

func TestFake_History(t *testing.T) {
	f := NewFake(store.Options{})
	p := mustProduct(t, f, "A1")
	mustUpdate(t, f, as(alice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1)}})
	mustUpdate(t, f, as(worker), store.KindProduct, p.ID, store.Update{BaseVersion: 2, Set: store.Values{"checksum": "c"}})
	quiet := store.WithoutHistory(as(alice))
	mustUpdate(t, f, quiet, store.KindProduct, p.ID, store.Update{BaseVersion: 3, Set: store.Values{"price": int64(2)}})
	mustUpdate(t, f, store.WithHistory(quiet), store.KindProduct, p.ID, store.Update{BaseVersion: 4, Set: store.Values{"price": int64(3)}})

	hist, err := f.FindHistory(as(alice), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, v := range hist {
		got = append(got, v.Version)
	}
	if fmt.Sprint(got) != "[5 2 1]" {
		t.Fatalf("history versions = %v, want [5 2 1]", got)
	}
	if hist[0].Snapshot["price"] != int64(3) || hist[0].Snapshot["checksum"] != "c" || hist[0].Fields[0] != "price" {
		t.Errorf("newest version = %+v", hist[0])
	}
	ops, _ := f.FindOps(as(alice), store.KindProduct, p.ID)
	got = nil
	for _, c := range ops {
		got = append(got, c.Version)
	}
	if fmt.Sprint(got) != "[4 3]" {
		t.Fatalf("op versions = %v, want [4 3]", got)
	}
}

func TestFake_MoveDocument(t *testing.T) {
	f := NewFake(store.Options{})
	a := mustDoc(t, f, "a", nil)
	b := mustDoc(t, f, "b", &a.ID)
	c := mustDoc(t, f, "c", &b.ID)
	d := mustDoc(t, f, "d", nil)

	t.Run("OK", func(t *testing.T) {
		got, err := f.MoveDocument(as(bob), d.ID, store.Move{Parent: &c.ID})
		if err != nil || got.Record.Fields["parent_id"] != c.ID || got.Record.Version != 2 {
			t.Fatalf("move = %+v, %v", got, err)
		}
		got, err = f.MoveDocument(as(bob), d.ID, store.Move{})
		if err != nil || got.Record.Fields["parent_id"] != nil {
			t.Fatalf("move to root = %+v, %v", got, err)
		}
	})
	t.Run("ErrCycle", func(t *testing.T) {
		_, err := f.MoveDocument(as(bob), a.ID, store.Move{Parent: &c.ID})
		wantCode(t, err, store.EINVALID)
		if !strings.Contains(err.Error(), "3 → 2 → 1") {
			t.Errorf("message %q does not name the path 3 → 2 → 1", err)
		}
		_, err = f.MoveDocument(as(bob), a.ID, store.Move{Parent: &a.ID})
		wantCode(t, err, store.EINVALID)
	})
	t.Run("ErrDepth", func(t *testing.T) {
		last := c
		for i := 4; i <= store.MaxDepth; i++ {
			last = mustDoc(t, f, fmt.Sprint("deep", i), &last.ID)
		}
		_, err := f.CreateRecord(as(alice), store.KindDocument, store.Values{"title": "too deep", "parent_id": last.ID})
		wantCode(t, err, store.EINVALID)
		_, err = f.MoveDocument(as(bob), d.ID, store.Move{Parent: &last.ID})
		wantCode(t, err, store.EINVALID)
		if !strings.Contains(err.Error(), "1 → 2 → 3") {
			t.Errorf("message %q does not name the path", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		missing := int64(404)
		_, err := f.MoveDocument(as(bob), d.ID, store.Move{Parent: &missing})
		wantCode(t, err, store.ENOTFOUND)
		_, err = f.MoveDocument(as(bob), missing, store.Move{})
		wantCode(t, err, store.ENOTFOUND)
	})
}

func TestFake_Leases(t *testing.T) {
	f := NewFake(store.Options{})
	p := mustProduct(t, f, "A1")
	req := store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute}
	la, err := f.AcquireLease(as(alice), req)
	if err != nil || la.Token == "" || la.Fence != 1 {
		t.Fatalf("acquire = %+v, %v", la, err)
	}

	_, err = f.AcquireLease(as(bob), req)
	var le *store.LeaseError
	if !errors.As(err, &le) || le.Lost || le.Lease.Holder != "alice" || le.Lease.Token != "" {
		t.Fatalf("second acquire: %v, want held by alice without token", err)
	}
	_, err = f.UpdateRecord(as(bob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}})
	if !errors.As(err, &le) || le.Lost {
		t.Fatalf("save without lease: %v, want held", err)
	}
	// Another group of the same record is free.
	mustUpdate(t, f, as(worker), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"checksum": "c"}})
	mustUpdate(t, f, as(alice), store.KindProduct, p.ID, store.Update{BaseVersion: 2, Set: store.Values{"name": "mine"}, LeaseToken: la.Token})

	leases, now, err := f.FindLeases(as(bob), store.LeaseFilter{Kind: store.KindProduct})
	if err != nil || len(leases) != 1 || leases[0].Token != "" || !leases[0].Live(now) {
		t.Fatalf("FindLeases = %+v, %v", leases, err)
	}

	f.Advance(2 * time.Minute)
	lb, err := f.AcquireLease(as(bob), req)
	if err != nil || lb.Fence != 2 {
		t.Fatalf("takeover = %+v, %v; want fence 2", lb, err)
	}
	_, err = f.UpdateRecord(as(alice), store.KindProduct, p.ID, store.Update{BaseVersion: 3, Set: store.Values{"name": "late"}, LeaseToken: la.Token})
	if !errors.As(err, &le) || !le.Lost || !strings.Contains(le.Reason, "bob") {
		t.Fatalf("save with lost lease: %v, want lost, taken over by bob", err)
	}
	_, err = f.ExtendLease(as(alice), la.Token, time.Minute)
	if !errors.As(err, &le) || !le.Lost {
		t.Fatalf("extend lost lease: %v, want lost", err)
	}
	if _, err := f.ExtendLease(as(bob), lb.Token, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReleaseLease(as(bob), lb.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReleaseLease(as(bob), lb.Token); err != nil {
		t.Fatalf("second release: %v, want nil", err)
	}
	_, err = f.ReleaseLease(as(bob), "nope")
	wantCode(t, err, store.ENOTFOUND)
	_, err = f.ExtendLease(as(bob), "nope", time.Minute)
	wantCode(t, err, store.ENOTFOUND)
	_, err = f.AcquireLease(as(bob), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: "nope", TTL: time.Minute})
	wantCode(t, err, store.EINVALID)
	_, err = f.AcquireLease(as(bob), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Millisecond})
	wantCode(t, err, store.EINVALID)
	_, err = f.AcquireLease(as(bob), store.LeaseRequest{Kind: store.KindProduct, RecordID: 99, Group: store.GroupEditor, TTL: time.Minute})
	wantCode(t, err, store.ENOTFOUND)

	leases, _, _ = f.FindLeases(as(bob), store.LeaseFilter{})
	if len(leases) != 0 {
		t.Errorf("live leases after release = %+v, want none", leases)
	}
	leases, _, _ = f.FindLeases(as(bob), store.LeaseFilter{Expired: time.Hour})
	if len(leases) != 1 || !leases[0].Released {
		t.Errorf("recently ended leases = %+v, want bob's released one", leases)
	}

	var events []store.Event
	cs, _ := f.Changes(as(bob), 0, 0)
	for _, c := range cs {
		if c.Group != "" {
			events = append(events, c.Event)
		}
	}
	if fmt.Sprint(events) != "[lease_granted lease_expired lease_granted lease_renewed lease_released]" {
		t.Errorf("lease events = %v", events)
	}
}

func TestFake_Keys(t *testing.T) {
	f := NewFake(store.Options{})
	ctx := as(worker)
	c, err := f.ClaimKey(ctx, store.ScopeJob, "thumb:1", "h1", time.Minute)
	if err != nil || !c.Claimed {
		t.Fatalf("claim = %+v, %v", c, err)
	}
	_, err = f.ClaimKey(as(bob), store.ScopeJob, "thumb:1", "h1", time.Minute)
	wantCode(t, err, store.EBUSY)
	_, err = f.ClaimKey(as(bob), store.ScopeJob, "thumb:1", "h2", time.Minute)
	wantCode(t, err, store.EINVALID)

	f.Advance(2 * time.Minute) // the worker died: its claim is stale
	c, err = f.ClaimKey(as(bob), store.ScopeJob, "thumb:1", "h1", time.Minute)
	if err != nil || !c.Claimed || c.Record.Owner != "bob" {
		t.Fatalf("takeover = %+v, %v", c, err)
	}
	wantCode(t, f.CompleteKey(ctx, store.ScopeJob, "thumb:1", []byte("x"), 0), store.ENOTFOUND)
	if err := f.CompleteKey(as(bob), store.ScopeJob, "thumb:1", []byte("done"), time.Hour); err != nil {
		t.Fatal(err)
	}
	c, err = f.ClaimKey(ctx, store.ScopeJob, "thumb:1", "h1", time.Minute)
	if err != nil || c.Claimed || string(c.Record.Result) != "done" {
		t.Fatalf("replay = %+v, %v", c, err)
	}

	if _, err := f.ClaimKey(ctx, store.ScopeJob, "k2", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := f.FailKey(ctx, store.ScopeJob, "k2"); err != nil {
		t.Fatal(err)
	}
	if c, err := f.ClaimKey(as(bob), store.ScopeJob, "k2", "h", time.Minute); err != nil || !c.Claimed {
		t.Fatalf("claim after FAILED = %+v, %v", c, err)
	}

	f.Advance(2 * time.Hour)
	n, err := f.PurgeKeys(ctx)
	if err != nil || n != 2 {
		t.Fatalf("purged %d, %v; want 2", n, err)
	}
	_, err = f.FindKey(ctx, store.ScopeJob, "thumb:1")
	wantCode(t, err, store.ENOTFOUND)
}

func TestFake_Subscribe(t *testing.T) {
	f := NewFake(store.Options{})
	defer f.Close()
	p := mustProduct(t, f, "A1") // change 1
	ctx, cancel := context.WithCancel(as(alice))
	ch, err := f.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	go func() {
		for range n {
			if _, err := f.UpdateRecord(as(worker), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
				t.Error(err)
			}
		}
	}()
	for want := int64(1); want <= n+1; want++ {
		c, ok := <-ch
		if !ok || c.ID != want {
			t.Fatalf("got change %d (open %v), want %d", c.ID, ok, want)
		}
	}
	cancel()
	for range ch {
		// drain until the goroutine sees the cancellation and closes the channel
	}
	last, _ := f.LastChangeID(as(alice))
	if last != n+1 {
		t.Fatalf("LastChangeID = %d, want %d", last, n+1)
	}
	if cs, _ := f.Changes(as(alice), 10, 5); len(cs) != 5 || cs[0].ID != 11 {
		t.Fatalf("Changes(10, 5) = %+v", cs)
	}
}

func TestFake_SubscribeClosedByClose(t *testing.T) {
	f := NewFake(store.Options{})
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

func TestFake_Failures(t *testing.T) {
	f := NewFake(store.Options{})
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

func TestFake_SetClock(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f := NewFake(store.Options{})
	f.SetClock(func() time.Time { return t0 })
	p := mustProduct(t, f, "A1")
	if !p.UpdatedAt.Equal(t0) {
		t.Errorf("UpdatedAt = %v, want the fake clock's %v", p.UpdatedAt, t0)
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

// TestFake_Concurrent hammers the fake from many goroutines: counters end exact, exactly one
// versioned save wins per version, and locked updates never lose a read-modify-write.
func TestFake_Concurrent(t *testing.T) {
	f := NewFake(store.Options{})
	p := mustProduct(t, f, "A1")
	const workers, each = 8, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := map[int64]int{}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := as(store.Actor{Name: fmt.Sprint("w", w), Role: store.RoleSystem})
			for range each {
				if _, err := f.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -1}}); err != nil {
					t.Error(err)
					return
				}
				if _, err := f.LockedUpdate(ctx, store.KindProduct, p.ID, func(r *store.Record) (store.Update, error) {
					n, _ := atoi(r.Fields["checksum"])
					return store.Update{Set: store.Values{"checksum": fmt.Sprint(n + 1)}}, nil
				}); err != nil {
					t.Error(err)
					return
				}
				r, err := f.FindRecord(ctx, store.KindProduct, p.ID)
				if err != nil {
					t.Error(err)
					return
				}
				res, err := f.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{BaseVersion: r.Version, Set: store.Values{"thumbnail": fmt.Sprint(w)}})
				switch store.ErrorCode(err) {
				case "":
					if res.Unchanged {
						break // the thumbnail was this worker's already: nothing written, nothing won
					}
					mu.Lock()
					wins[r.Version]++
					mu.Unlock()
				case store.ECONFLICT:
				default:
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	r, _ := f.FindRecord(as(alice), store.KindProduct, p.ID)
	if got, want := r.Fields["stock"], int64(10-workers*each); got != want {
		t.Errorf("stock = %v, want %d", got, want)
	}
	if got, want := r.Fields["checksum"], fmt.Sprint(workers*each); got != want {
		t.Errorf("locked counter = %v, want %s", got, want)
	}
	for v, n := range wins {
		if n != 1 {
			t.Errorf("version %d: %d saves won, want 1", v, n)
		}
	}
}

func atoi(v any) (int, error) {
	s, _ := v.(string)
	if s == "" {
		return 0, nil
	}
	var n int
	_, err := fmt.Sscan(s, &n)
	return n, err
}

func TestFake_LockedUpdate(t *testing.T) {
	f := NewFake(store.Options{})
	p := mustProduct(t, f, "A1")
	ctx := as(worker)
	res, err := f.LockedUpdate(ctx, store.KindProduct, p.ID, func(*store.Record) (store.Update, error) { return store.Update{}, nil })
	if res != nil || err != nil {
		t.Fatalf("zero update = %+v, %v; want nil, nil", res, err)
	}
	boom := errors.New("boom")
	if _, err := f.LockedUpdate(ctx, store.KindProduct, p.ID, func(*store.Record) (store.Update, error) { return store.Update{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("fn error = %v, want boom", err)
	}
	_, err = f.LockedUpdate(ctx, store.KindProduct, p.ID, func(r *store.Record) (store.Update, error) {
		return store.Update{Set: store.Values{"name": "x"}}, nil
	})
	wantCode(t, err, store.EFORBIDDEN)
	_, err = f.LockedUpdate(ctx, store.KindProduct, 42, func(r *store.Record) (store.Update, error) { return store.Update{}, nil })
	wantCode(t, err, store.ENOTFOUND)
	if r, _ := f.FindRecord(ctx, store.KindProduct, p.ID); r.Version != 1 {
		t.Fatalf("version = %d after writes that failed, want 1", r.Version)
	}
}

func TestFake_LeaseTokenOfAnotherRecord(t *testing.T) {
	f := NewFake(store.Options{})
	p, q := mustProduct(t, f, "A1"), mustProduct(t, f, "B2")
	l, err := f.AcquireLease(as(alice), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.UpdateRecord(as(alice), store.KindProduct, q.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}, LeaseToken: l.Token})
	wantCode(t, err, store.EINVALID)
	_, err = f.UpdateRecord(as(alice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}, LeaseToken: "forged"})
	var le *store.LeaseError
	if !errors.As(err, &le) || !le.Lost {
		t.Fatalf("forged token: %v, want a lost lease", err)
	}
}

func TestFake_Contract(t *testing.T) {
	Run(t, func(t *testing.T, opts store.Options) store.Store { return NewFake(opts) })
}

func TestFake_ContractConcurrency(t *testing.T) {
	RunConcurrency(t, func(t *testing.T, opts store.Options) store.Store { return NewFake(opts) })
}

func TestFake_LoseNextReply(t *testing.T) {
	f := NewFake(store.Options{})
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

// TestFake_SubscribersEnd shows that every subscription goroutine ends, whether its context
// ends or the store closes: Close waits for all of them, so a leak would hang the test.
func TestFake_SubscribersEnd(t *testing.T) {
	f := NewFake(store.Options{})
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

func TestFake_HistoryRebuild(t *testing.T) {
	testHistoryRebuild(t, func(_ *testing.T, opts store.Options) store.Store { return NewFake(opts) })
}
