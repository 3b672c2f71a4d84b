package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// testDeleteRace: writers that delete and restore one product at once, each deleting at the
// version it read. Every delete and restore either wins or is refused with the right code
// (a stale version, a record already gone, one already back), never twice for one version;
// the versions the winners wrote are exactly 2..n+1 with no gap, and the history holds a
// tombstone or a restore for each of them.
func testDeleteRace(t *testing.T, open Opener) {
	s := fresh(t, open)
	p := mustCreateProduct(t, s, "RACE-1")
	const goroutines, each = 6, 15
	var deletes, restores atomic.Int64
	hammer(t, goroutines, each, func(g, i int) error {
		ctx := actx(t, actAlice)
		r, err := s.FindRecord(ctx, store.KindProduct, p.ID)
		switch store.ErrorCode(err) {
		case "":
			_, err := s.DeleteRecord(ctx, store.KindProduct, p.ID, store.Delete{ExpectVersion: r.Version})
			switch store.ErrorCode(err) {
			case "":
				deletes.Add(1)
			case store.ECONFLICT, store.ENOTFOUND:
			default:
				return fmt.Errorf("delete at v%d: %w", r.Version, err)
			}
		case store.ENOTFOUND:
			_, err := s.RestoreRecord(ctx, store.KindProduct, p.ID, store.Restore{})
			switch store.ErrorCode(err) {
			case "":
				restores.Add(1)
			case store.EINVALID: // someone restored it first
			default:
				return fmt.Errorf("restore: %w", err)
			}
		default:
			return err
		}
		return nil
	})
	d, r := deletes.Load(), restores.Load()
	if d == 0 || r > d || d > r+1 {
		t.Fatalf("%d deletes and %d restores won; want deletes = restores or restores + 1", d, r)
	}
	hs := mustHistory(t, s, store.KindProduct, p.ID)
	if int64(len(hs)) != 1+d+r {
		t.Fatalf("history holds %d versions, want %d (create + %d deletes + %d restores)", len(hs), 1+d+r, d, r)
	}
	for i, v := range hs {
		want := int64(len(hs) - i)
		if v.Version != want {
			t.Fatalf("history version %d is v%d, want v%d: versions must be contiguous", i, v.Version, want)
		}
		wantEv := store.EventRestored
		if (want-1)%2 == 1 {
			wantEv = store.EventDeleted
		}
		if want > 1 && v.Event != wantEv {
			t.Fatalf("v%d is %q, want %q (deletes and restores alternate)", want, v.Event, wantEv)
		}
	}
	_, err := s.FindRecord(t.Context(), store.KindProduct, p.ID)
	if gone := store.ErrorCode(err) == store.ENOTFOUND; gone != (d > r) {
		t.Errorf("product gone = %v after %d deletes and %d restores", gone, d, r)
	}
}
