package storetest

import (
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// testKeyAppliedBy: an idempotency key is shared by everyone writing to the store, so a
// replay says who applied it and when. Bob retrying a save (plain and relative) or a delete
// with the keys alice used gets a replay naming alice and the key's time, and nothing is
// applied twice; alice's own retry names her too.
func testKeyAppliedBy(t *testing.T, open Opener) {
	s := fresh(t, open)
	p := mustCreateProduct(t, s, "KEY-1")
	q := mustCreateProduct(t, s, "KEY-2")
	before := time.Now().Add(-time.Minute)

	check := func(what, by string, at time.Time, replayed bool) {
		t.Helper()
		if !replayed || by != "alice" || at.Before(before) || at.After(time.Now().Add(time.Minute)) {
			t.Errorf("%s: replayed %v, applied by %q at %v; want a replay applied by alice just now", what, replayed, by, at)
		}
	}
	set := store.Update{BaseVersion: 1, Set: store.Values{"name": "Alice's"}, IdempotencyKey: "k-set"}
	mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, set)
	res := mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, set)
	check("bob's set with alice's key", res.AppliedBy, res.AppliedAt, res.Replayed)
	res = mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, set)
	check("alice's own retry", res.AppliedBy, res.AppliedAt, res.Replayed)

	add := store.Update{Add: map[string]int64{"stock": -2}, IdempotencyKey: "k-adjust"}
	first := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, add)
	if first.Replayed || first.AppliedBy != "" || !first.AppliedAt.IsZero() {
		t.Errorf("a first application says replayed %v, applied by %q at %v", first.Replayed, first.AppliedBy, first.AppliedAt)
	}
	res = mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, add)
	check("bob's adjust with alice's key", res.AppliedBy, res.AppliedAt, res.Replayed)
	if got := mustFind(t, s, store.KindProduct, p.ID); got.Fields["stock"] != first.Record.Fields["stock"] {
		t.Errorf("stock %v after bob's replay, want %v (applied once)", got.Fields["stock"], first.Record.Fields["stock"])
	}

	del := store.Delete{ExpectVersion: 1, IdempotencyKey: "k-delete"}
	mustDelete(t, s, actAlice, store.KindProduct, q.ID, del)
	dres := mustDelete(t, s, actBob, store.KindProduct, q.ID, del)
	check("bob's delete with alice's key", dres.AppliedBy, dres.AppliedAt, dres.Replayed)
}
