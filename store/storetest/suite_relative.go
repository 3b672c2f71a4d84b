package storetest

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// testRelativeSystemSave drives a system writer's relative save with a key (the save the SQL
// stores run in one statement, see their relativeSave) through each condition that form
// checks in SQL (a live lease on a written group, a counter's range, a taken key) and checks
// that each answer, and the change log, are those of the full save.
func testRelativeSystemSave(t *testing.T, open Opener) {
	st := fresh(t, open)
	ed, sys := actx(t, actAlice), actx(t, actWorker)
	p, err := st.CreateRecord(ed, store.KindProduct, store.Values{"sku": "S-1", "name": "n"})
	if err != nil {
		t.Fatal(err)
	}
	add := func(key string, d int64) (*store.UpdateResult, error) {
		return st.UpdateRecord(sys, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": d}, IdempotencyKey: key})
	}

	l, err := st.AcquireLease(ed, store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := add("a", 1); store.ErrorCode(err) != store.ELEASE {
		t.Fatalf("relative save under another's live lease = %v, want ELEASE", err)
	}
	if _, err := st.ReleaseLease(ed, l.Token); err != nil {
		t.Fatal(err)
	}
	res, err := add("a", 1) // the released lease's row is still there; it blocks nothing
	if err != nil {
		t.Fatalf("relative save after the release: %v", err)
	}
	if res.Version != 2 || res.Record.Version != 2 || res.Record.Fields["stock"] != int64(1) || res.Replayed {
		t.Fatalf("first save = version %d, record %+v, replayed %v; want version 2 with stock 1", res.Version, res.Record, res.Replayed)
	}
	again, err := add("a", 1)
	if err != nil || !again.Replayed || again.Version != 2 || again.Record.Fields["stock"] != int64(1) {
		t.Fatalf("same key again = %+v, %v; want a replay of version 2, stock still 1", again, err)
	}
	if _, err := add("a", 2); store.ErrorCode(err) == "" {
		t.Fatal("the same key with another request was accepted")
	}

	if _, err := st.UpdateRecord(sys, store.KindProduct, p.ID, store.Update{BaseVersion: 2, Set: store.Values{"stock": int64(math.MaxInt64)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := add("b", 1); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("a sum past int64 = %v, want EINVALID", err)
	}
	res, err = add("c", -5)
	if err != nil || res.Version != 4 || res.Record.Fields["stock"] != int64(math.MaxInt64-5) {
		t.Fatalf("a save back in range = %+v, %v; want version 4", res, err)
	}

	cs, err := st.Changes(sys, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var saves []string
	for _, c := range cs {
		if c.Event == store.EventSaved {
			saves = append(saves, c.Actor)
			if c.Kind != store.KindProduct || c.RecordID != p.ID || !slices.Equal(c.Fields, []string{"stock"}) || c.History {
				t.Errorf("change %+v: want a save of the product's stock without history", c)
			}
			if c.Version == 2 && c.Deltas["stock"] != 1 || c.Version == 4 && c.Deltas["stock"] != -5 {
				t.Errorf("change of version %d has deltas %v", c.Version, c.Deltas)
			}
		}
	}
	if len(saves) != 3 {
		t.Errorf("saved changes by %v, want three (versions 2, 3, 4): nothing logged for refused saves or a replay", saves)
	}
}
