package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// mustChain creates n documents, each under the previous one (the first under parent).
func mustChain(t *testing.T, s store.Store, n int, parent *int64) []int64 {
	t.Helper()
	var ids []int64
	for i := range n {
		d := mustCreateDoc(t, s, fmt.Sprintf("level %d", i+1), parent)
		ids = append(ids, d.ID)
		parent = &d.ID
	}
	return ids
}

func testMoveDocument(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		a := mustCreateDoc(t, s, "a", nil)
		b := mustCreateDoc(t, s, "b", nil)
		from := mustLastChangeID(t, s)
		res, err := s.MoveRecord(actx(t, actBob), store.KindDocument, b.ID, store.Move{Parent: &a.ID})
		if err != nil {
			t.Fatalf("move: %v", err)
		}
		got := res.Record
		if res.Unchanged || res.Version != 2 {
			t.Errorf("move result = unchanged %v version %d, want a change to v2", res.Unchanged, res.Version)
		}
		if got.Fields["parent_id"] != a.ID || got.Version != 2 || got.UpdatedBy != "bob" {
			t.Errorf("moved = parent %v v%d by %s, want parent %d v2 by bob", got.Fields["parent_id"], got.Version, got.UpdatedBy, a.ID)
		}
		cs := mustChanges(t, s, from)
		if len(cs) != 1 || cs[0].Event != store.EventMoved || cs[0].RecordID != b.ID || cs[0].Version != 2 {
			t.Errorf("changes = %+v, want one moved entry for %d v2", cs, b.ID)
		}
		back, err := s.MoveRecord(actx(t, actBob), store.KindDocument, b.ID, store.Move{})
		if err != nil || back.Record.Fields["parent_id"] != nil || back.Record.Version != 3 {
			t.Fatalf("move to root = %+v, %v; want parent nil v3", back, err)
		}
	})
	t.Run("ErrCycle", func(t *testing.T) {
		s := fresh(t, open)
		ids := mustChain(t, s, 3, nil) // a ← b ← c
		a, b, c := ids[0], ids[1], ids[2]
		_, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, a, store.Move{Parent: &c})
		requireCode(t, err, store.EINVALID)
		if got, want := err.Error(), fmt.Sprintf("moving %d under %d would create a cycle: %d → %d → %d", a, c, c, b, a); got != want {
			t.Errorf("error = %q, want %q", got, want)
		}
		_, err = s.MoveRecord(actx(t, actAlice), store.KindDocument, b, store.Move{Parent: &b})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "cycle")
		if got := mustFind(t, s, store.KindDocument, a); got.Fields["parent_id"] != nil || got.Version != 1 {
			t.Errorf("after refused moves: a = parent %v v%d", got.Fields["parent_id"], got.Version)
		}
	})
	t.Run("ErrTooDeep", func(t *testing.T) {
		s := fresh(t, open)
		chain := mustChain(t, s, store.MaxDepth, nil) // depth 1..8
		loose := mustCreateDoc(t, s, "loose", nil)
		_, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, loose.ID, store.Move{Parent: &chain[7]})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, fmt.Sprintf("moving %d under %d would be 9 levels deep (max 8)", loose.ID, chain[7]))
		requireMessage(t, err, fmt.Sprintf("%d → %d", chain[7], loose.ID))

		// A subtree of height 2 fits under depth 6, not under depth 7.
		sub := mustChain(t, s, 2, nil)
		if _, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, sub[0], store.Move{Parent: &chain[5]}); err != nil {
			t.Fatalf("move a 2-level subtree to depth 7..8: %v", err)
		}
		_, err = s.MoveRecord(actx(t, actAlice), store.KindDocument, sub[0], store.Move{Parent: &chain[6]})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "would be 9 levels deep (max 8)")

		_, err = s.CreateRecord(actx(t, actAlice), store.KindDocument, store.Values{"title": "too deep", "parent_id": chain[7]})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "9 levels deep (max 8)")
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := fresh(t, open)
		a := mustCreateDoc(t, s, "a", nil)
		_, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, a.ID, store.Move{Parent: ptr(int64(999))})
		requireCode(t, err, store.ENOTFOUND)
		_, err = s.MoveRecord(actx(t, actAlice), store.KindDocument, 998, store.Move{Parent: &a.ID})
		requireCode(t, err, store.ENOTFOUND)
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		s := fresh(t, open)
		ids := mustChain(t, s, 2, nil)
		_, err := s.MoveRecord(actx(t, actWorker), store.KindDocument, ids[1], store.Move{})
		requireCode(t, err, store.EFORBIDDEN)
	})
	t.Run("History", func(t *testing.T) {
		s := fresh(t, open)
		ids := mustChain(t, s, 2, nil)
		if _, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, ids[1], store.Move{}); err != nil {
			t.Fatalf("move: %v", err)
		}
		vs := mustHistory(t, s, store.KindDocument, ids[1])
		if len(vs) != 2 || !slices.Equal(vs[0].Fields, []string{"parent_id"}) || vs[0].Snapshot["parent_id"] != nil {
			t.Errorf("history = %+v, want the move as version 2 changing parent_id", vs)
		}
	})
}

func testSchemaVersion(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		v, ok := s.(interface{ SchemaVersion() int })
		if !ok {
			t.Fatalf("%T has no SchemaVersion method", s)
		}
		if got := v.SchemaVersion(); got < 1 {
			t.Errorf("schema version = %d, want >= 1 after migration", got)
		}
	})
}
