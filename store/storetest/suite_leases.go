package storetest

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func eventsOf(cs []store.Change) []store.Event {
	var out []store.Event
	for _, c := range cs {
		out = append(out, c.Event)
	}
	return out
}

func testLeases(t *testing.T, open Opener) {
	waitsBeside(t)
	t.Run("Grant", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		from := mustLastChangeID(t, s)
		l := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		if b, err := hex.DecodeString(l.Token); err != nil || len(b) != 32 {
			t.Errorf("token = %q, want 32 random bytes in hex", l.Token)
		}
		if l.Holder != "alice" || l.Fence != 1 || l.Released || !l.ExpiresAt.After(l.AcquiredAt) {
			t.Errorf("lease = %+v, want alice's, fence 1, expiring after acquired", l)
		}
		ls, now, err := s.FindLeases(t.Context(), store.LeaseFilter{Kind: store.KindProduct, RecordID: p.ID})
		if err != nil || len(ls) != 1 {
			t.Fatalf("find leases = %+v, %v; want one", ls, err)
		}
		if got := ls[0]; got.Token != "" || got.Holder != "alice" || got.Group != store.GroupEditor || !got.Live(now) {
			t.Errorf("listed lease = %+v at %v, want alice's live editor lease without its token", got, now)
		}
		cs := mustChanges(t, s, from)
		if len(cs) != 1 || cs[0].Event != store.EventLeaseGranted || cs[0].Group != store.GroupEditor || cs[0].Fence != 1 || cs[0].Actor != "alice" {
			t.Errorf("changes = %+v, want one lease_granted for alice, editor, fence 1", cs)
		}
	})
	t.Run("ErrHeld", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		for _, a := range []store.Actor{actBob, actAlice} { // the same user in another terminal too
			_, err := s.AcquireLease(actx(t, a), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
			requireCode(t, err, store.ELEASE)
			le := asLeaseError(t, err)
			if le.Lost || le.Lease.Holder != "alice" || le.Lease.Token != "" {
				t.Errorf("%s: lease error = %+v, want held by alice, no token", a.Name, le)
			}
			requireMessage(t, err, "held by alice since", "expires")
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		// One rule and one message in every store (store.CheckLeaseRequest): a drift fails here.
		for name, tc := range map[string]struct {
			req store.LeaseRequest
			msg string
		}{
			"unknown group": {store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: "pricing", TTL: time.Minute},
				`unknown lease group "pricing" for product (groups: editor, `},
			"ttl too short": {store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Millisecond},
				"lease TTL 1ms is outside 1s..24h0m0s"},
			"ttl too long": {store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: 48 * time.Hour},
				"lease TTL 48h0m0s is outside 1s..24h0m0s"},
		} {
			_, err := s.AcquireLease(actx(t, actAlice), tc.req)
			if store.ErrorCode(err) != store.EINVALID || err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: error = %v, want %s containing %q", name, err, store.EINVALID, tc.msg)
			}
		}
		l, err := s.AcquireLease(actx(t, actAlice), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
		if err != nil {
			t.Fatalf("acquire: %v", err)
		}
		_, err = s.ExtendLease(actx(t, actAlice), l.Token, 0)
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "lease TTL 0s is outside 1s..24h0m0s")
		_, err = s.AcquireLease(actx(t, actAlice), store.LeaseRequest{Kind: store.KindProduct, RecordID: 4242, Group: store.GroupEditor, TTL: time.Minute})
		requireCode(t, err, store.ENOTFOUND)
	})
	t.Run("TakeoverAfterExpiry", func(t *testing.T) {
		t.Parallel() // waits out a lifetime on its own store, beside the other such subtest
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		old := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Second)
		_, err := s.AcquireLease(actx(t, actBob), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
		requireCode(t, err, store.ELEASE) // not before the TTL has passed
		waitPast(time.Second)
		from := mustLastChangeID(t, s)
		l := mustAcquire(t, s, actBob, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		if l.Fence <= old.Fence || l.Holder != "bob" || l.Token == old.Token {
			t.Fatalf("takeover = %+v, want bob's with a fence above %d", l, old.Fence)
		}
		if got, want := eventsOf(mustChanges(t, s, from)), []store.Event{store.EventLeaseExpired, store.EventLeaseGranted}; !slices.Equal(got, want) {
			t.Errorf("events = %v, want %v", got, want)
		}
		// alice's token is dead: extend and save are refused as lost.
		_, err = s.ExtendLease(t.Context(), old.Token, time.Minute)
		requireCode(t, err, store.ELEASE)
		if le := asLeaseError(t, err); !le.Lost {
			t.Errorf("extend lease error = %+v, want Lost", le)
		}
		requireMessage(t, err, "taken over by bob")
		// Fencing: alice's save with her old token, at the current version, is refused.
		_, err = s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "alice"}, LeaseToken: old.Token})
		requireCode(t, err, store.ELEASE)
		if le := asLeaseError(t, err); !le.Lost {
			t.Errorf("save lease error = %+v, want Lost", le)
		}
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "bob"}, LeaseToken: l.Token})
		if got := mustFind(t, s, store.KindProduct, p.ID); got.Fields["name"] != "bob" || got.Version != 2 {
			t.Errorf("record = %v v%d, want bob's save only", got.Fields["name"], got.Version)
		}
	})
	t.Run("ExpiredTokenAtSave", func(t *testing.T) {
		t.Parallel() // waits out a lifetime on its own store, beside the other such subtest
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		l := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Second)
		waitPast(time.Second)
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "late"}, LeaseToken: l.Token})
		requireCode(t, err, store.ELEASE)
		if le := asLeaseError(t, err); !le.Lost || le.Reason != "expired" {
			t.Errorf("lease error = %+v, want Lost, expired", le)
		}
		ls, _, err := s.FindLeases(t.Context(), store.LeaseFilter{})
		if err != nil || len(ls) != 0 {
			t.Errorf("live leases = %+v, %v; want none", ls, err)
		}
		ls, _, err = s.FindLeases(t.Context(), store.LeaseFilter{Expired: time.Hour})
		if err != nil || len(ls) != 1 {
			t.Errorf("live and recently ended leases = %+v, %v; want the expired one", ls, err)
		}
	})
	t.Run("TokenOnlyExtendRelease", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		l := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		_, err := s.ExtendLease(t.Context(), "not-a-token", time.Minute)
		requireCode(t, err, store.ENOTFOUND)
		_, err = s.ReleaseLease(t.Context(), "not-a-token")
		requireCode(t, err, store.ENOTFOUND)

		ext, err := s.ExtendLease(t.Context(), l.Token, time.Hour)
		if err != nil || !ext.ExpiresAt.After(l.ExpiresAt) || ext.Fence != l.Fence {
			t.Fatalf("extend = %+v, %v; want a later expiry, same fence", ext, err)
		}
		from := mustLastChangeID(t, s)
		if rel, err := s.ReleaseLease(t.Context(), l.Token); err != nil || rel.Ended != "" {
			t.Fatalf("release = %+v, %v; want ended by this call", rel, err)
		}
		if rel, err := s.ReleaseLease(t.Context(), l.Token); err != nil || rel.Ended != "released" {
			t.Errorf("second release = %+v, %v; want nil error, ended before: released", rel, err)
		}
		if got, want := eventsOf(mustChanges(t, s, from)), []store.Event{store.EventLeaseReleased}; !slices.Equal(got, want) {
			t.Errorf("events = %v, want %v", got, want)
		}
		_, err = s.ExtendLease(t.Context(), l.Token, time.Minute)
		requireCode(t, err, store.ELEASE)
		if le := asLeaseError(t, err); !le.Lost || le.Reason != "released" {
			t.Errorf("extend after release = %+v, want Lost, released", le)
		}
		ls, _, err := s.FindLeases(t.Context(), store.LeaseFilter{})
		if err != nil || len(ls) != 0 {
			t.Errorf("live leases = %+v, %v; want none", ls, err)
		}
		// Released leases are taken over at once, with a higher fence.
		b := mustAcquire(t, s, actBob, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		if b.Fence != l.Fence+1 {
			t.Errorf("fence after release = %d, want %d", b.Fence, l.Fence+1)
		}
	})
	t.Run("TakeoverAfterRelease", func(t *testing.T) {
		// alice released her lease and bob acquired the scope: her token meets bob's lease,
		// and every store says so, for a save, an extend and a release alike.
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		old := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		if _, err := s.ReleaseLease(t.Context(), old.Token); err != nil {
			t.Fatalf("release: %v", err)
		}
		mustAcquire(t, s, actBob, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "alice"}, LeaseToken: old.Token})
		requireCode(t, err, store.ELEASE)
		if le := asLeaseError(t, err); !le.Lost || le.Reason != "taken over by bob" {
			t.Errorf("save with the released token = %+v, want Lost, taken over by bob", le)
		}
		_, err = s.ExtendLease(t.Context(), old.Token, time.Minute)
		requireCode(t, err, store.ELEASE)
		if le := asLeaseError(t, err); !le.Lost || le.Reason != "taken over by bob" {
			t.Errorf("extend of the released token = %+v, want Lost, taken over by bob", le)
		}
		rel, err := s.ReleaseLease(t.Context(), old.Token)
		if err != nil || rel.Ended != "taken over by bob" || rel.Lease.Fence != old.Fence || rel.Lease.Token != "" {
			t.Errorf("release of the released token = %+v, %v; want ended: taken over by bob, at fence %d, without a token", rel, err, old.Fence)
		}
	})
	t.Run("GroupsIndependent", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		sys := mustAcquire(t, s, actWorker, store.KindProduct, p.ID, store.GroupSystem, time.Minute)
		if sys.Fence != 1 {
			t.Errorf("system fence = %d, want 1 (groups count separately)", sys.Fence)
		}
		other := mustCreateProduct(t, s, "Q")
		mustAcquire(t, s, actBob, store.KindProduct, other.ID, store.GroupEditor, time.Minute)
		ls, _, err := s.FindLeases(t.Context(), store.LeaseFilter{Kind: store.KindProduct, RecordID: p.ID})
		if err != nil || len(ls) != 2 {
			t.Errorf("leases on P = %+v, %v; want 2", ls, err)
		}
	})
}

func testLeaseSave(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		l := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "mine"}, LeaseToken: l.Token})
	})
	t.Run("ErrHeldBySomeoneElse", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		for name, tc := range map[string]struct {
			a store.Actor
			u store.Update
		}{
			"bob, absolute":         {actBob, store.Update{BaseVersion: 1, Set: store.Values{"name": "bob"}}},
			"bob, relative":         {actBob, store.Update{Add: map[string]int64{"stock": 1}}},
			"bob, idempotent":       {actBob, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1)}, IdempotencyKey: "k"}},
			"alice without a token": {actAlice, store.Update{BaseVersion: 1, Set: store.Values{"name": "alice"}}},
		} {
			_, err := s.UpdateRecord(actx(t, tc.a), store.KindProduct, p.ID, tc.u)
			requireCode(t, err, store.ELEASE)
			if le := asLeaseError(t, err); le.Lost || le.Lease.Holder != "alice" {
				t.Errorf("%s: lease error = %+v, want held by alice", name, le)
			}
		}
		if got := mustFind(t, s, store.KindProduct, p.ID); got.Version != 1 {
			t.Errorf("version = %d after refused saves, want 1", got.Version)
		}
	})
	t.Run("OtherGroupNotBlocked", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		// The worker writes only system fields: alice's editor lease does not cover them.
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"checksum": "c"}})
		sys := mustAcquire(t, s, actWorker, store.KindProduct, p.ID, store.GroupSystem, time.Minute)
		res, err := s.LockedUpdate(actx(t, actWorker), store.KindProduct, p.ID, func(r *store.Record) (store.Update, error) {
			return store.Update{Set: store.Values{"thumbnail": "t.png"}, LeaseToken: sys.Token}, nil
		})
		if err != nil || res.Record.Version != 3 {
			t.Fatalf("locked update under the system lease = %+v, %v", res, err)
		}
		// bob cannot write system fields under the worker's lease even as a system writer.
		_, err = s.UpdateRecord(actx(t, store.Actor{Name: "bob", Role: store.RoleSystem}), store.KindProduct, p.ID,
			store.Update{BaseVersion: 3, Set: store.Values{"checksum": "x"}})
		requireCode(t, err, store.ELEASE)
	})
	t.Run("ErrMoveUnderLease", func(t *testing.T) {
		s := fresh(t, open)
		d := mustCreateDoc(t, s, "d", nil)
		mustAcquire(t, s, actAlice, store.KindDocument, d.ID, store.GroupEditor, time.Minute)
		_, err := s.MoveRecord(actx(t, actBob), store.KindDocument, d.ID, store.Move{})
		requireCode(t, err, store.ELEASE)
	})
	t.Run("ErrTokenOfAnotherRecord", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		q := mustCreateProduct(t, s, "Q")
		l := mustAcquire(t, s, actAlice, store.KindProduct, q.ID, store.GroupEditor, time.Minute)
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}, LeaseToken: l.Token})
		if err == nil {
			t.Fatal("save with another record's token succeeded")
		}
	})
}
