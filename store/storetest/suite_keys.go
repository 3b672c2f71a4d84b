package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func mustClaim(t *testing.T, s store.Store, a store.Actor, scope, key, hash string, ttl time.Duration) *store.Claim {
	t.Helper()
	c, err := s.ClaimKey(actx(t, a), scope, key, hash, ttl)
	if err != nil {
		t.Fatalf("%s claims %s/%s: %v", a.Name, scope, key, err)
	}
	return c
}

var actWorkerB = store.Actor{Name: "worker-b", Role: store.RoleSystem}

func testKeys(t *testing.T, open Opener) {
	waitsBeside(t)
	t.Run("ClaimCompleteReplay", func(t *testing.T) {
		s := fresh(t, open)
		c := mustClaim(t, s, actWorker, store.ScopeJob, "job-1", "h1", time.Minute)
		if !c.Claimed || c.Record.Status != store.KeyPending {
			t.Fatalf("claim = %+v, want claimed PENDING", c)
		}
		_, err := s.ClaimKey(actx(t, actWorkerB), store.ScopeJob, "job-1", "h1", time.Minute)
		requireCode(t, err, store.EBUSY)
		if err := s.CompleteKey(actx(t, actWorker), store.ScopeJob, "job-1", []byte(`{"ok":true}`), time.Hour); err != nil {
			t.Fatalf("complete: %v", err)
		}
		again := mustClaim(t, s, actWorkerB, store.ScopeJob, "job-1", "h1", time.Minute)
		if again.Claimed || again.Record.Status != store.KeyCompleted || string(again.Record.Result) != `{"ok":true}` {
			t.Fatalf("second claim = %+v, want a COMPLETED replay with the result", again)
		}
		k, err := s.FindKey(t.Context(), store.ScopeJob, "job-1")
		if err != nil || k.Status != store.KeyCompleted || k.RequestHash != "h1" || !k.ExpiresAt.After(k.CreatedAt) {
			t.Fatalf("key = %+v, %v", k, err)
		}
	})
	t.Run("ErrDifferentRequest", func(t *testing.T) {
		s := fresh(t, open)
		mustClaim(t, s, actWorker, store.ScopeJob, "job-1", "h1", time.Minute)
		_, err := s.ClaimKey(actx(t, actWorker), store.ScopeJob, "job-1", "h2", time.Minute)
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "idempotency key job-1 was already used for a different request")
	})
	// The owner and the messages are decided once (store.DecideClaim, store.KeyOwner): every
	// store names a claim's owner actor@instance and says the same words, so a store that
	// drifts fails here.
	t.Run("OwnerAndMessages", func(t *testing.T) {
		s := fresh(t, open)
		c := mustClaim(t, s, actWorker, store.ScopeJob, "job-1", "h1", time.Minute)
		owner := c.Record.Owner
		if !strings.HasPrefix(owner, actWorker.Name+"@") || len(owner) == len(actWorker.Name)+1 {
			t.Fatalf("claim owner = %q, want %s@<instance>", owner, actWorker.Name)
		}
		if k, err := s.FindKey(t.Context(), store.ScopeJob, "job-1"); err != nil || k.Owner != owner {
			t.Fatalf("stored key = %+v, %v; want owner %q", k, err, owner)
		}
		_, err := s.ClaimKey(actx(t, actWorkerB), store.ScopeJob, "job-1", "h1", time.Minute)
		requireCode(t, err, store.EBUSY)
		requireMessage(t, err, "idempotency key job-1 is being worked on by "+owner+" since ", "; try again later")
		err = s.CompleteKey(actx(t, actWorkerB), store.ScopeJob, "job-1", nil, time.Hour)
		requireCode(t, err, store.ENOTFOUND)
		requireMessage(t, err, "idempotency key job/job-1 is not claimed by you")
		if c := mustClaim(t, s, actWorker, store.ScopeJob, "job-1", "h1", time.Minute); !c.Claimed || c.Record.Owner != owner {
			t.Fatalf("the owner's second claim = %+v, want claimed again by %q", c, owner)
		}
	})
	t.Run("ErrDifferentRequestOnStalePending", func(t *testing.T) {
		t.Parallel() // waits out a lifetime on its own store, beside the other such subtest
		s := fresh(t, open)
		mustClaim(t, s, actWorker, store.ScopeJob, "job-1", "h1", time.Second)
		waitPast(time.Second)
		// Its owner died, but the key still names a request that may be half done.
		_, err := s.ClaimKey(actx(t, actWorkerB), store.ScopeJob, "job-1", "h2", time.Minute)
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "idempotency key job-1 was already used for a different request")
	})
	t.Run("FailedKeyMayBeClaimedAgain", func(t *testing.T) {
		s := fresh(t, open)
		mustClaim(t, s, actWorker, store.ScopeJob, "job-1", "h1", time.Minute)
		if err := s.FailKey(actx(t, actWorker), store.ScopeJob, "job-1"); err != nil {
			t.Fatalf("fail: %v", err)
		}
		if k, err := s.FindKey(t.Context(), store.ScopeJob, "job-1"); err != nil || k.Status != store.KeyFailed {
			t.Fatalf("key = %+v, %v; want FAILED", k, err)
		}
		if c := mustClaim(t, s, actWorkerB, store.ScopeJob, "job-1", "h1", time.Minute); !c.Claimed {
			t.Fatalf("claim after failure = %+v, want claimed", c)
		}
	})
	t.Run("StalePendingTakenOverAndExpiry", func(t *testing.T) {
		t.Parallel() // waits out a lifetime on its own store, beside the other such subtest
		s := fresh(t, open)
		mustClaim(t, s, actWorker, store.ScopeJob, "stale", "h1", time.Second)
		mustClaim(t, s, actWorker, store.ScopeJob, "dead", "h1", time.Second)
		mustClaim(t, s, actWorker, store.ScopeJob, "short", "h1", time.Minute)
		if err := s.CompleteKey(actx(t, actWorker), store.ScopeJob, "short", []byte("r"), time.Second); err != nil {
			t.Fatalf("complete: %v", err)
		}
		mustClaim(t, s, actWorker, store.ScopeJob, "long", "h1", time.Minute)
		if err := s.CompleteKey(actx(t, actWorker), store.ScopeJob, "long", []byte("r"), time.Hour); err != nil {
			t.Fatalf("complete: %v", err)
		}
		waitPast(time.Second)

		// worker died holding "stale": worker-b takes it over; worker's late completion is refused.
		c := mustClaim(t, s, actWorkerB, store.ScopeJob, "stale", "h1", time.Minute)
		if !c.Claimed {
			t.Fatalf("claim of a stale PENDING key = %+v, want claimed", c)
		}
		err := s.CompleteKey(actx(t, actWorker), store.ScopeJob, "stale", []byte("late"), time.Hour)
		requireCode(t, err, store.ENOTFOUND)
		if err := s.CompleteKey(actx(t, actWorkerB), store.ScopeJob, "stale", []byte("b"), time.Hour); err != nil {
			t.Fatalf("new owner completes: %v", err)
		}

		// "dead" is a stale claim nobody took over: purged, then free for a new request.
		// "short" outlived its keep, but a COMPLETED key is kept for good.
		n, err := s.PurgeKeys(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("purge = %d, %v; want 1 (the dead claim)", n, err)
		}
		_, err = s.FindKey(t.Context(), store.ScopeJob, "dead")
		requireCode(t, err, store.ENOTFOUND)
		for _, key := range []string{"short", "long", "stale"} {
			if k, err := s.FindKey(t.Context(), store.ScopeJob, key); err != nil || k.Status != store.KeyCompleted {
				t.Errorf("%s after purge = %+v, %v; want COMPLETED", key, k, err)
			}
		}
		if c := mustClaim(t, s, actWorker, store.ScopeJob, "dead", "other-hash", time.Minute); !c.Claimed {
			t.Errorf("claim of a purged key = %+v, want claimed", c)
		}
	})
	// A COMPLETED key answers for good: past its keep, and after a purge, the same request
	// replays its result and another request is refused, on every store's clock.
	t.Run("CompletedOutlivesItsKeep", func(t *testing.T) {
		t.Parallel() // waits out a lifetime on its own store, beside the other such subtests
		s := fresh(t, open)
		for _, scope := range []string{store.ScopeJob, store.ScopeAPI} {
			mustClaim(t, s, actWorker, scope, "k", "h1", time.Minute)
			if err := s.CompleteKey(actx(t, actWorker), scope, "k", []byte("r1"), time.Millisecond); err != nil {
				t.Fatalf("complete %s/k: %v", scope, err)
			}
		}
		waitPast(time.Millisecond)
		if n, err := s.PurgeKeys(t.Context()); err != nil || n != 0 {
			t.Fatalf("purge = %d, %v; want 0: completed keys are kept", n, err)
		}
		for _, scope := range []string{store.ScopeJob, store.ScopeAPI} {
			c := mustClaim(t, s, actWorkerB, scope, "k", "h1", time.Minute)
			if c.Claimed || c.Record.Status != store.KeyCompleted || string(c.Record.Result) != "r1" {
				t.Errorf("%s/k claimed again past its keep = %+v; want the COMPLETED replay", scope, c)
			}
			_, err := s.ClaimKey(actx(t, actWorkerB), scope, "k", "h2", time.Minute)
			requireCode(t, err, store.EINVALID)
		}
	})
	t.Run("ScopesSeparate", func(t *testing.T) {
		s := fresh(t, open)
		mustClaim(t, s, actWorker, store.ScopeJob, "same", "job-hash", time.Minute)
		c := mustClaim(t, s, actWorker, store.ScopeAPI, "same", "api-hash", time.Minute)
		if !c.Claimed {
			t.Fatalf("api claim of a key used as a job key = %+v, want claimed", c)
		}
		k, err := s.FindKey(t.Context(), store.ScopeJob, "same")
		if err != nil || k.RequestHash != "job-hash" {
			t.Errorf("job key = %+v, %v; want hash job-hash", k, err)
		}
	})
	t.Run("ErrNotClaimed", func(t *testing.T) {
		s := fresh(t, open)
		requireCode(t, s.CompleteKey(actx(t, actWorker), store.ScopeJob, "nope", nil, time.Hour), store.ENOTFOUND)
		requireCode(t, s.FailKey(actx(t, actWorker), store.ScopeJob, "nope"), store.ENOTFOUND)
		_, err := s.FindKey(t.Context(), store.ScopeJob, "nope")
		requireCode(t, err, store.ENOTFOUND)
	})
}

// KeyReplayAfterExpiry is the contract that a keyed write is never applied twice, however
// late the replay: it makes a keyed relative save, absolute save, create and delete on s,
// calls expire, which must end the lifetime every stored key has (moving the stored expiry
// into the past, or the store's clock past it), and sends each request again, before and
// after PurgeKeys: each must be answered as a replay that writes nothing, and a different
// request with one of the keys must be refused (EINVALID). The SQL stores' tests call it with an expire that
// rewrites expires_at, the memory store's with its clock moved on.
func KeyReplayAfterExpiry(t *testing.T, s store.Store, expire func(t *testing.T)) {
	t.Helper()
	ctx := actx(t, actAlice)
	p := mustCreateProduct(t, s, "KEEP-1")
	gone := mustCreateProduct(t, s, "KEEP-2")
	adjust := store.Update{Add: map[string]int64{"stock": -5}, IdempotencyKey: "adjust-1"}
	set := store.Update{BaseVersion: 1, Set: store.Values{"name": "kept"}, IdempotencyKey: "set-1"}
	del := store.Delete{ExpectVersion: gone.Version, IdempotencyKey: "delete-1"}
	create := store.Values{"sku": "KEEP-3", "name": "made once"}
	createOpts := store.CreateOptions{IdempotencyKey: "create-1"}
	mustSave(t, s, ctx, store.KindProduct, p.ID, set)
	first := mustSave(t, s, ctx, store.KindProduct, p.ID, adjust)
	if _, err := s.DeleteRecord(ctx, store.KindProduct, gone.ID, del); err != nil {
		t.Fatalf("keyed delete: %v", err)
	}
	made, err := s.CreateRecord(ctx, store.KindProduct, create, createOpts)
	if err != nil {
		t.Fatalf("keyed create: %v", err)
	}

	// Replays past the keys' lifetime, by someone else and in another order, before and
	// after a purge: nothing is applied again.
	expire(t)
	bob := actx(t, actBob)
	if again := mustSave(t, s, bob, store.KindProduct, p.ID, adjust); !again.Replayed {
		t.Errorf("adjust replayed after its key's lifetime = %+v; want a replay", again)
	}
	if _, err := s.PurgeKeys(t.Context()); err != nil {
		t.Fatalf("purge keys: %v", err)
	}
	for _, key := range []string{"adjust-1", "set-1", "delete-1", "create-1"} {
		if k, err := s.FindKey(t.Context(), store.ScopeAPI, key); err != nil || k.Status != store.KeyCompleted {
			t.Fatalf("key %s after its lifetime and a purge = %+v, %v; want kept COMPLETED", key, k, err)
		}
	}
	again := mustSave(t, s, bob, store.KindProduct, p.ID, adjust)
	if !again.Replayed || again.Version != first.Version || again.AppliedBy != actAlice.Name {
		t.Errorf("adjust replayed late = %+v; want a replay of v%d applied by alice", again, first.Version)
	}
	if again := mustSave(t, s, bob, store.KindProduct, p.ID, set); !again.Replayed {
		t.Errorf("set replayed late = %+v; want a replay", again)
	}
	if res, err := s.DeleteRecord(bob, store.KindProduct, gone.ID, del); err != nil || !res.Replayed {
		t.Errorf("delete replayed late = %+v, %v; want a replay", res, err)
	}
	if r, err := s.CreateRecord(bob, store.KindProduct, create, createOpts); err != nil || r.ID != made.ID {
		t.Errorf("create replayed late = %+v, %v; want product %d again", r, err, made.ID)
	}
	cur, err := s.FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Fields["stock"] != int64(5) || cur.Version != first.Version {
		t.Errorf("product after the late replays: stock %v at v%d; want 5 at v%d (the adjust once)", cur.Fields["stock"], cur.Version, first.Version)
	}
	if recs, err := s.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct, Search: "KEEP-3"}); err != nil || len(recs) != 1 {
		t.Errorf("products KEEP-3 after the late create = %d, %v; want 1", len(recs), err)
	}

	// A key that ended is not free for another request either.
	_, err = s.UpdateRecord(bob, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -1}, IdempotencyKey: "adjust-1"})
	requireCode(t, err, store.EINVALID)
}
