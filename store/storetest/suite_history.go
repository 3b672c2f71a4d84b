package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

func mustHistory(t *testing.T, s store.Store, kind store.Kind, id int64) []store.Version {
	t.Helper()
	vs, err := s.FindHistory(t.Context(), kind, id)
	if err != nil {
		t.Fatalf("history of %s %d: %v", kind, id, err)
	}
	return vs
}

func mustOps(t *testing.T, s store.Store, kind store.Kind, id int64) []store.Change {
	t.Helper()
	cs, err := s.FindOps(t.Context(), kind, id)
	if err != nil {
		t.Fatalf("ops of %s %d: %v", kind, id, err)
	}
	return cs
}

func versionsOf(vs []store.Version) []int64 {
	var out []int64
	for _, v := range vs {
		out = append(out, v.Version)
	}
	return out
}

func opVersions(cs []store.Change) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.Version)
	}
	return out
}

func testHistory(t *testing.T, open Opener) {
	t.Run("EditorSaveAddsVersion", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1), "name": "n"}})
		vs := mustHistory(t, s, store.KindProduct, p.ID)
		if got, want := versionsOf(vs), []int64{2, 1}; !slices.Equal(got, want) {
			t.Fatalf("history versions = %v, want %v (newest first)", got, want)
		}
		v := vs[0]
		if v.Actor != "bob" || v.At.IsZero() || !slices.Equal(v.Fields, []string{"name", "price"}) {
			t.Errorf("version 2 = actor %q at %v fields %v, want bob, a time, [name price]", v.Actor, v.At, v.Fields)
		}
		want := mustFind(t, s, store.KindProduct, p.ID).Fields
		for name, w := range want {
			if !store.Equal(v.Snapshot[name], w) {
				t.Errorf("snapshot %s = %#v, want %#v", name, v.Snapshot[name], w)
			}
		}
		if vs[1].Actor != "alice" || vs[1].Snapshot["name"] != p.Fields["name"] {
			t.Errorf("version 1 = %+v, want alice's create", vs[1])
		}
		if ops := mustOps(t, s, store.KindProduct, p.ID); len(ops) != 0 {
			t.Errorf("ops = %+v, want none for editor saves", ops)
		}
	})
	t.Run("SystemWriteAddsOpOnly", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"checksum": "abc"}})
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
		if got, want := versionsOf(mustHistory(t, s, store.KindProduct, p.ID)), []int64{1}; !slices.Equal(got, want) {
			t.Errorf("history versions = %v, want %v", got, want)
		}
		ops := mustOps(t, s, store.KindProduct, p.ID)
		if got, want := opVersions(ops), []int64{3, 2}; !slices.Equal(got, want) {
			t.Fatalf("op versions = %v, want %v (newest first)", got, want)
		}
		if op := ops[1]; op.Actor != "worker" || op.Role != store.RoleSystem || op.History || !slices.Equal(op.Fields, []string{"checksum"}) {
			t.Errorf("op = %+v, want worker/system checksum without history", op)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		s := fresh(t, open)
		if vs := mustHistory(t, s, store.KindDocument, 99); len(vs) != 0 {
			t.Errorf("history of a missing record = %v, want none", vs)
		}
	})
}

func testSuppression(t *testing.T, open Opener) {
	t.Run("Scopes", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		base := actx(t, actAlice)
		off := store.WithoutHistory(base)
		steps := []struct {
			name    string
			ctx     context.Context
			history bool
		}{
			{"plain", base, true},
			{"WithoutHistory", off, false},
			{"WithoutHistory inside WithoutHistory", store.WithoutHistory(off), false},
			{"WithHistory inside WithoutHistory", store.WithHistory(off), true},
			{"WithoutHistory inside WithHistory inside WithoutHistory", store.WithoutHistory(store.WithHistory(off)), false},
			{"outer scope again", off, false},
			{"base again", base, true},
		}
		for i, st := range steps {
			v := int64(i + 1)
			mustSave(t, s, st.ctx, store.KindProduct, p.ID, store.Update{BaseVersion: v, Set: store.Values{"name": st.name}})
			hist := slices.Contains(versionsOf(mustHistory(t, s, store.KindProduct, p.ID)), v+1)
			ops := slices.Contains(opVersions(mustOps(t, s, store.KindProduct, p.ID)), v+1)
			if hist != st.history || ops == st.history {
				t.Errorf("%s: history version %v, op log %v; want history %v", st.name, hist, ops, st.history)
			}
		}
	})
	t.Run("ConcurrentEditorDuringSuppressedWrite", func(t *testing.T) {
		s := fresh(t, open)
		quiet := mustCreateProduct(t, s, "QUIET")
		loud := mustCreateProduct(t, s, "LOUD")
		quietCtx := store.WithoutHistory(actx(t, actAlice))
		loudCtx := actx(t, actBob)
		const n = 20
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range n {
				if _, err := s.UpdateRecord(quietCtx, store.KindProduct, quiet.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range n {
				if _, err := s.UpdateRecord(loudCtx, store.KindProduct, loud.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
					errs <- err
				}
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("concurrent save: %v", err)
		}
		if got := len(mustHistory(t, s, store.KindProduct, quiet.ID)); got != 1 {
			t.Errorf("suppressed record has %d history versions, want 1 (its create)", got)
		}
		if got := len(mustOps(t, s, store.KindProduct, quiet.ID)); got != n {
			t.Errorf("suppressed record has %d ops, want %d", got, n)
		}
		if got := len(mustHistory(t, s, store.KindProduct, loud.ID)); got != n+1 {
			t.Errorf("concurrent editor's record has %d history versions, want %d", got, n+1)
		}
		if got := len(mustOps(t, s, store.KindProduct, loud.ID)); got != 0 {
			t.Errorf("concurrent editor's record has %d ops, want 0", got)
		}
	})
	t.Run("SystemNeverKeepsHistory", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, store.WithHistory(actx(t, actWorker)), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"checksum": "x"}})
		if got := len(mustHistory(t, s, store.KindProduct, p.ID)); got != 1 {
			t.Errorf("history versions = %d, want 1: a system write inside WithHistory adds none", got)
		}
	})
}
