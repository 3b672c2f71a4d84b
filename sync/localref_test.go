package sync_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestSync_CreateReferredToLocally pushes a document created in the copy that other local
// changes refer to by its local id: a child created under it, a move of an existing document
// under it, and a later edit of it. The source gets the whole tree, the copy ends with the
// source's ids only, and a second sync has nothing to do.
func TestSync_CreateReferredToLocally(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := open(t)
			f := seed(t, src)
			a := mustClone(t, src, "a")
			parent, err := a.CreateRecord(as("alice"), store.KindDocument, store.Values{"title": "LP", "parent_id": f.root})
			if err != nil {
				t.Fatal(err)
			}
			child, err := a.CreateRecord(as("alice"), store.KindDocument, store.Values{"title": "LC", "parent_id": parent.ID})
			if err != nil {
				t.Fatal(err)
			}
			mustMove(t, a, "alice", f.text, parent.ID)
			mustSet(t, a, "alice", store.KindDocument, parent.ID, store.Values{"body": "edited after create\n"})
			// A grandchild under the local child: references two levels deep follow too.
			grand, err := a.CreateRecord(as("alice"), store.KindDocument, store.Values{"title": "LG", "parent_id": child.ID})
			if err != nil {
				t.Fatal(err)
			}
			mustSet(t, a, "alice", store.KindDocument, grand.ID, store.Values{"body": "grand\n"})

			rep := mustSync(t, src, a)
			if len(rep.Conflicts) != 0 || rep.Pending != 0 {
				t.Fatalf("sync: conflicts %v, pending %d", describe(rep.Conflicts), rep.Pending)
			}
			find := func(st store.Store, title string) *store.Record {
				t.Helper()
				recs, err := st.FindRecords(ctx, store.Filter{Kind: store.KindDocument, Search: title})
				if err != nil {
					t.Fatal(err)
				}
				var out []*store.Record
				for _, r := range recs {
					if r.Fields["title"] == title {
						out = append(out, r)
					}
				}
				if len(out) != 1 {
					t.Fatalf("%T has %d documents titled %q, want 1", st, len(out), title)
				}
				return out[0]
			}
			lp, lc, lg := find(src, "LP"), find(src, "LC"), find(src, "LG")
			if lp.Fields["parent_id"] != f.root || lp.Fields["body"] != "edited after create\n" {
				t.Errorf("source's LP: %v", lp.Fields)
			}
			if lc.Fields["parent_id"] != lp.ID {
				t.Errorf("source's LC under %v, want LP %d", lc.Fields["parent_id"], lp.ID)
			}
			if lg.Fields["parent_id"] != lc.ID || lg.Fields["body"] != "grand\n" {
				t.Errorf("source's LG: %v, want under LC %d", lg.Fields, lc.ID)
			}
			if p := mustGet(t, src, store.KindDocument, f.text).Fields["parent_id"]; p != lp.ID {
				t.Errorf("source's moved document under %v, want LP %d", p, lp.ID)
			}
			for _, title := range []string{"LP", "LC", "LG"} {
				if r := find(a, title); r.ID >= 1<<40 {
					t.Errorf("copy still holds %s under its local id %d", title, r.ID)
				}
			}
			docs, err := a.FindRecords(ctx, store.Filter{Kind: store.KindDocument})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range docs {
				if p, ok := d.Fields["parent_id"].(int64); ok && p >= 1<<40 {
					t.Errorf("copy's document %d still under local id %d", d.ID, p)
				}
			}
			assertConverged(t, src, a, nil)
			assertAcyclic(t, src)

			rep = mustSync(t, src, a)
			if rep.Pushed != 0 || rep.Pending != 0 || len(rep.Conflicts) != 0 {
				t.Errorf("second sync: pushed %d, pending %d, conflicts %v", rep.Pushed, rep.Pending, describe(rep.Conflicts))
			}
			assertConverged(t, src, a, nil)
		})
	}
}

// lostAck is a working copy whose first acknowledgement of a create fails, as if the
// process died right after the source made the record.
type lostAck struct {
	*sqlite.DB
	lost bool
}

func (w *lostAck) AckEntry(ctx context.Context, seq int64, rec *store.Record, rebase bool) error {
	if !w.lost {
		w.lost = true
		return errors.New("killed before the acknowledgement")
	}
	return w.DB.AckEntry(ctx, seq, rec, rebase)
}

// TestSync_CreateAckLost: the source made a local parent document, but the copy never
// heard (the sync died before the acknowledgement), and the next sync pulls the source's
// record before it pushes again. The copy then holds the source's row and the local one
// with a child under it; the re-sent create finds its record on the source, the local row
// goes, the child follows to the source's id and reaches the source under it.
func TestSync_CreateAckLost(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := open(t)
			f := seed(t, src)
			db := mustClone(t, src, "a")
			parent, err := db.CreateRecord(as("alice"), store.KindDocument, store.Values{"title": "LP", "parent_id": f.root})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.CreateRecord(as("alice"), store.KindDocument, store.Values{"title": "LC", "parent_id": parent.ID}); err != nil {
				t.Fatal(err)
			}
			w := &lostAck{DB: db}
			if _, err := tsync.Sync(ctx, src, w); err == nil {
				t.Fatal("sync with a lost acknowledgement: no error")
			}
			rep := mustSync(t, src, w)
			if rep.Pending != 0 || len(rep.Conflicts) != 0 {
				t.Fatalf("second sync: pending %d, conflicts %v", rep.Pending, describe(rep.Conflicts))
			}
			lps, err := src.FindRecords(ctx, store.Filter{Kind: store.KindDocument, Search: "LP"})
			if err != nil {
				t.Fatal(err)
			}
			if len(lps) != 1 {
				t.Fatalf("source has %d LP documents, want 1", len(lps))
			}
			lcs, err := src.FindRecords(ctx, store.Filter{Kind: store.KindDocument, Search: "LC"})
			if err != nil {
				t.Fatal(err)
			}
			if len(lcs) != 1 || lcs[0].Fields["parent_id"] != lps[0].ID {
				t.Fatalf("source's LC: %+v, want one under LP %d", lcs, lps[0].ID)
			}
			if _, err := db.FindRecord(ctx, store.KindDocument, parent.ID); store.ErrorCode(err) != store.ENOTFOUND {
				t.Errorf("copy still has the local LP %d: %v", parent.ID, err)
			}
			assertConverged(t, src, db, nil)
		})
	}
}
