package store_test

import (
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// TestDecideClaim walks every state a stored key can be in against the decision every store
// takes from DecideClaim.
func TestDecideClaim(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	const me, other = "alice@1", "bob@2"
	key := func(status store.KeyStatus, hash, owner string, ttl time.Duration) *store.KeyRecord {
		return &store.KeyRecord{Scope: store.ScopeJob, Key: "k", Status: status, RequestHash: hash, Owner: owner,
			CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(ttl)}
	}
	tests := []struct {
		name string
		k    *store.KeyRecord
		want store.ClaimDecision
		code string
	}{
		{"NoRow", nil, store.ClaimNew, ""},
		{"CompletedReplays", key(store.KeyCompleted, "h", other, time.Hour), store.ClaimReplay, ""},
		{"CompletedOtherRequest", key(store.KeyCompleted, "x", other, time.Hour), 0, store.EINVALID},
		// A COMPLETED key is final, however long ago it ended: no clock makes it free.
		{"CompletedEndedReplays", key(store.KeyCompleted, "h", other, -400*24*time.Hour), store.ClaimReplay, ""},
		{"CompletedEndedOtherRequest", key(store.KeyCompleted, "x", other, 0), 0, store.EINVALID},
		{"FailedTakenOver", key(store.KeyFailed, "h", other, time.Hour), store.ClaimTakeOver, ""},
		{"FailedOtherRequest", key(store.KeyFailed, "x", other, time.Hour), 0, store.EINVALID},
		{"FailedEnded", key(store.KeyFailed, "x", other, -time.Second), store.ClaimNew, ""},
		{"PendingOthersBusy", key(store.KeyPending, "h", other, time.Second), 0, store.EBUSY},
		{"PendingMineAgain", key(store.KeyPending, "h", me, time.Second), store.ClaimTakeOver, ""},
		{"PendingStaleTakenOver", key(store.KeyPending, "h", other, 0), store.ClaimTakeOver, ""},
		{"PendingStaleOtherRequest", key(store.KeyPending, "x", other, -time.Hour), 0, store.EINVALID},
		{"PendingOtherRequest", key(store.KeyPending, "x", other, time.Hour), 0, store.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := store.DecideClaim(tc.k, "h", me, now)
			if code := store.ErrorCode(err); code != tc.code || got != tc.want {
				t.Fatalf("DecideClaim = %v, %v; want %v, code %q", got, err, tc.want, tc.code)
			}
		})
	}
}

// TestCheckSaveKey holds a save's key check to the claim's words: a save that meets a claim
// in progress names its owner, as ClaimKey does.
func TestCheckSaveKey(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	k := store.KeyRecord{Scope: store.ScopeAPI, Key: "k", Status: store.KeyPending, RequestHash: "h", Owner: "bob@2",
		CreatedAt: now, ExpiresAt: now.Add(time.Minute)}
	_, saveErr := store.CheckSaveKey(k, true, "h")
	_, claimErr := store.DecideClaim(&k, "h", "alice@1", now)
	if saveErr == nil || claimErr == nil || saveErr.Error() != claimErr.Error() {
		t.Fatalf("save: %v; claim: %v; want the same EBUSY", saveErr, claimErr)
	}
	_, saveErr = store.CheckSaveKey(k, true, "x")
	_, claimErr = store.DecideClaim(&k, "x", "alice@1", now)
	if saveErr == nil || claimErr == nil || saveErr.Error() != claimErr.Error() {
		t.Fatalf("save: %v; claim: %v; want the same EINVALID", saveErr, claimErr)
	}
}

// TestCheckSaveKey_CompletedIsFinal holds a save to the same rule as a claim: a COMPLETED
// key replays (or refuses another request) after its lifetime ended too, while ended
// PENDING and FAILED keys are free.
func TestCheckSaveKey_CompletedIsFinal(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	key := func(status store.KeyStatus) store.KeyRecord {
		return store.KeyRecord{Scope: store.ScopeAPI, Key: "k", Status: status, RequestHash: "h", Owner: "bob",
			CreatedAt: now.Add(-30 * 24 * time.Hour), ExpiresAt: now.Add(-23 * 24 * time.Hour)}
	}
	if replay, err := store.CheckSaveKey(key(store.KeyCompleted), false, "h"); !replay || err != nil {
		t.Errorf("ended COMPLETED key, same request: replay %v, %v; want a replay", replay, err)
	}
	if _, err := store.CheckSaveKey(key(store.KeyCompleted), false, "x"); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("ended COMPLETED key, another request: %v; want EINVALID", err)
	}
	for _, st := range []store.KeyStatus{store.KeyPending, store.KeyFailed} {
		if replay, err := store.CheckSaveKey(key(st), false, "x"); replay || err != nil {
			t.Errorf("ended %s key: replay %v, %v; want free", st, replay, err)
		}
	}
	for _, tc := range []struct {
		status store.KeyStatus
		want   bool
	}{{store.KeyCompleted, false}, {store.KeyPending, true}, {store.KeyFailed, true}} {
		if got := store.Purgeable(key(tc.status), now); got != tc.want {
			t.Errorf("Purgeable(ended %s) = %v, want %v", tc.status, got, tc.want)
		}
	}
}

// TestKeyMismatch_SaysWhenAndWhatToDo: a key refused for another request names who used it
// and when, and that this request needs a key of its own.
func TestKeyMismatch_SaysWhenAndWhatToDo(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	k := &store.KeyRecord{Scope: store.ScopeAPI, Key: "k-9", Status: store.KeyCompleted, RequestHash: "h", Owner: "bob@2",
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	_, err := store.DecideClaim(k, "other", "alice@1", at.Add(400*24*time.Hour))
	want := "idempotency key k-9 was already used for a different request (by bob@2 at 2026-03-01T10:00:00Z); " +
		"a key stands for one request, so this one needs a key of its own"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}
