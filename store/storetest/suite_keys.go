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

		// "short" has expired: purged, then free for a new request.
		n, err := s.PurgeKeys(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("purge = %d, %v; want 1", n, err)
		}
		_, err = s.FindKey(t.Context(), store.ScopeJob, "short")
		requireCode(t, err, store.ENOTFOUND)
		for _, key := range []string{"long", "stale"} {
			if k, err := s.FindKey(t.Context(), store.ScopeJob, key); err != nil || k.Status != store.KeyCompleted {
				t.Errorf("%s after purge = %+v, %v; want COMPLETED", key, k, err)
			}
		}
		if c := mustClaim(t, s, actWorker, store.ScopeJob, "short", "other-hash", time.Minute); !c.Claimed {
			t.Errorf("claim of a purged key = %+v, want claimed", c)
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
