package resave

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// fakeSource is a record other writers keep changing: each save meets a newer version
// (another writer's change of availability) as long as conflicts is above zero.
type fakeSource struct {
	rec       *store.Record
	conflicts int
	saves     []store.Values
	collideAt int // the save (1-based) whose conflict brings a change of name by bob; 0: never
}

func (f *fakeSource) save(_ context.Context, theirs *store.Record, changes store.Values) (*store.Record, error) {
	f.saves = append(f.saves, changes)
	if theirs.Version != f.rec.Version {
		return nil, errors.New("saved on a version the merge was not made with")
	}
	if f.conflicts > 0 {
		f.conflicts--
		next := f.rec.Clone()
		next.Version++
		next.UpdatedBy = "bob"
		next.Fields["availability"] = []string{"in_stock", "backorder"}[next.Version%2]
		if len(f.saves) == f.collideAt {
			next.Fields["name"] = "Bob's name"
		}
		f.rec = next
		return nil, &store.ConflictError{Kind: next.Kind, ID: next.ID, BaseVersion: theirs.Version, Current: next.Clone()}
	}
	next := f.rec.Clone()
	next.Version++
	next.UpdatedBy = "alice"
	for k, v := range changes {
		next.Fields[k] = v
	}
	f.rec = next
	return next.Clone(), nil
}

// setup: alice edited name and price of version 1; bob has saved version 2 (availability).
func setup() (reg *store.Registry, base, mine store.Values, src *fakeSource) {
	reg = store.DefaultRegistry()
	v1 := store.Values{"sku": "P-1", "name": "One", "price": int64(100), "availability": "in_stock", "stock": int64(7)}
	base = store.Values{"name": "One", "price": int64(100)}
	mine = store.Values{"name": "Alice's name", "price": int64(250)}
	v2 := v1.Clone()
	v2["availability"] = "backorder"
	src = &fakeSource{rec: &store.Record{Kind: store.KindProduct, ID: 1, Version: 2, UpdatedBy: "bob", Fields: v2}}
	return reg, base, mine, src
}

// TestMerge_SavesAfterConflicts: every save that meets a newer version merges again with it,
// and the clean merge lands on the newest version with mine's fields and theirs.
func TestMerge_SavesAfterConflicts(t *testing.T) {
	for n := 0; n < MaxRounds; n++ {
		reg, base, mine, src := setup()
		src.conflicts = n
		out, err := Merge(t.Context(), reg, store.KindProduct, base, mine, src.rec.Clone(), src.save)
		if err != nil {
			t.Fatalf("%d conflicts: %v", n, err)
		}
		if len(src.saves) != n+1 || out.Rounds != n+1 || out.Saved == nil || out.Collisions != nil {
			t.Fatalf("%d conflicts: %d saves, outcome %+v; want %d saves and the record saved", n, len(src.saves), out, n+1)
		}
		got := src.rec.Fields
		if got["name"] != "Alice's name" || got["price"] != int64(250) || got["availability"] != out.Theirs.Fields["availability"] ||
			src.rec.Version != out.Theirs.Version+1 {
			t.Errorf("%d conflicts: saved %v at v%d, want mine's name and price on theirs v%d", n, got, src.rec.Version, out.Theirs.Version)
		}
		if _, ok := out.Changes["availability"]; ok {
			t.Errorf("%d conflicts: the merge rewrote theirs' field: %v", n, out.Changes)
		}
	}
}

// TestMerge_CollisionNotSaved: a field both sides changed apart comes back, and nothing is
// saved: not at once, nor after a round whose newer version brought the collision.
func TestMerge_CollisionNotSaved(t *testing.T) {
	reg, base, mine, src := setup()
	src.rec.Fields["name"] = "Bob's name"
	out, err := Merge(t.Context(), reg, store.KindProduct, base, mine, src.rec.Clone(), src.save)
	if err != nil || !slices.Equal(out.Collisions, []string{"name"}) || out.Saved != nil || len(src.saves) != 0 {
		t.Fatalf("outcome %+v, %v after %d saves; want name colliding and no save", out, err, len(src.saves))
	}

	reg, base, mine, src = setup()
	src.conflicts, src.collideAt = 2, 1
	out, err = Merge(t.Context(), reg, store.KindProduct, base, mine, src.rec.Clone(), src.save)
	if err != nil || !slices.Equal(out.Collisions, []string{"name"}) || out.Saved != nil || len(src.saves) != 1 || out.Rounds != 1 {
		t.Fatalf("outcome %+v, %v after %d saves; want name colliding after the first save, and no more saves", out, err, len(src.saves))
	}
	if src.rec.Fields["name"] != "Bob's name" || out.Theirs.Version != src.rec.Version {
		t.Errorf("the collision's theirs is v%d, the source at v%d with name %v", out.Theirs.Version, src.rec.Version, src.rec.Fields["name"])
	}
}

// TestMerge_GivesUpAtTheBound: a record that moves on at every save gets MaxRounds saves and
// then an error that names it, a conflict by its code.
func TestMerge_GivesUpAtTheBound(t *testing.T) {
	reg, base, mine, src := setup()
	src.conflicts = 1000
	out, err := Merge(t.Context(), reg, store.KindProduct, base, mine, src.rec.Clone(), src.save)
	var kc *KeptChangingError
	if !errors.As(err, &kc) || len(src.saves) != MaxRounds || out.Saved != nil {
		t.Fatalf("after %d saves: %v (outcome %+v); want a KeptChangingError after %d", len(src.saves), err, out, MaxRounds)
	}
	if msg := err.Error(); !strings.Contains(msg, "product 1 kept changing") || !strings.Contains(msg, "5 merged saves") || store.ErrorCode(err) != store.ECONFLICT {
		t.Errorf("error %q (code %s), want it to name product 1, the saves, and ECONFLICT", msg, store.ErrorCode(err))
	}
	if kc.Last.Current.Version != src.rec.Version {
		t.Errorf("the last conflict is at v%d, the source at v%d", kc.Last.Current.Version, src.rec.Version)
	}
}

// TestMerge_OtherErrorsAsTheyAre: a save's refusal that is not a newer version ends the
// loop with that error.
func TestMerge_OtherErrorsAsTheyAre(t *testing.T) {
	reg, base, mine, src := setup()
	refusal := store.Errorf(store.EINVALID, "price: too high")
	out, err := Merge(t.Context(), reg, store.KindProduct, base, mine, src.rec.Clone(),
		func(context.Context, *store.Record, store.Values) (*store.Record, error) { return nil, refusal })
	if err != refusal || out.Saved != nil {
		t.Fatalf("got %v, want the save's own error", err)
	}
}

// TestDecide: the bound comes first, then collisions.
func TestDecide(t *testing.T) {
	reg := store.DefaultRegistry()
	clean := merge.Records(reg, store.KindProduct, store.Values{"name": "a"}, store.Values{"name": "b"}, store.Values{"name": "a"})
	clash := merge.Records(reg, store.KindProduct, store.Values{"name": "a"}, store.Values{"name": "b"}, store.Values{"name": "c"})
	for _, c := range []struct {
		m      *merge.RecordResult
		rounds int
		want   Decision
	}{{clean, 0, SaveMerge}, {clean, MaxRounds - 1, SaveMerge}, {clash, 0, Ask}, {clean, MaxRounds, GiveUp}, {clash, MaxRounds, GiveUp}} {
		if got := Decide(c.m, c.rounds); got != c.want {
			t.Errorf("Decide(%d collisions, %d rounds) = %d, want %d", c.m.Conflicts(), c.rounds, got, c.want)
		}
	}
}
