package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// TestRemapLocal_DeferPragmaPreparedBefore: the acknowledgement of a local document with
// children gives its row the source's id (or drops it for the pulled source row) while the
// children still point at the local id, so it relies on PRAGMA defer_foreign_keys. SQLite
// applies that pragma when the statement is prepared, not when it runs; a PRAGMA statement
// from the store's statement cache, prepared on the write connection outside the
// transaction (the cache prepares in the background on an idle connection of the pool)
// and not run since, leaves the foreign keys immediate. The sync of a local parent then
// stopped with "FOREIGN KEY constraint failed" about one run in three. This forces that
// order: the pragma prepared on the write connection and cached, a commit in between
// (which clears the flag, as every commit does), then the acknowledgement.
func TestRemapLocal_DeferPragmaPreparedBefore(t *testing.T) {
	for _, pulled := range []bool{false, true} {
		name := "source row not pulled"
		if pulled {
			name = "source row pulled first"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			db, err := Open(ctx, filepath.Join(t.TempDir(), "wc.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.StartCopy(ctx, store.CopyState{SourceID: "src", Source: "somewhere", Kinds: []store.Kind{store.KindProduct, store.KindDocument}, Position: 1}); err != nil {
				t.Fatal(err)
			}
			ed := store.WithActor(ctx, store.Actor{Name: "alice", Role: store.RoleEditor})
			parent, err := db.CreateRecord(ed, store.KindDocument, store.Values{"title": "B"})
			if err != nil {
				t.Fatal(err)
			}
			var leaves []int64
			for _, title := range []string{"l1", "l2"} {
				l, err := db.CreateRecord(ed, store.KindDocument, store.Values{"title": title, "parent_id": parent.ID})
				if err != nil {
					t.Fatal(err)
				}
				leaves = append(leaves, l.ID)
			}
			out, err := db.Outbox(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != 3 || out[0].ID != parent.ID || out[0].Op != store.CopyCreate {
				t.Fatalf("outbox: %+v, want the create of %d first", out, parent.ID)
			}
			now := time.Now().UTC().Truncate(time.Millisecond)
			srcRec := &store.Record{Kind: store.KindDocument, ID: 17, Version: 1, UpdatedBy: "alice", UpdatedAt: now,
				Fields: store.Values{"title": "B"}}
			if pulled {
				// The pull of the source's echo brought the row before the acknowledgement.
				if err := db.ApplySource(ctx, []*store.Record{srcRec}, store.FeedPoint{}); err != nil {
					t.Fatal(err)
				}
			}

			// The pragma prepared on the write connection, outside any transaction, and cached.
			const pragma = `PRAGMA defer_foreign_keys = ON`
			w := db.writer
			wc := w.wc
			if wc == nil || wc.conn == nil {
				t.Fatal("no write connection after the writes")
			}
			// Back to the pool as a connection the writer has not set up yet: whichever of
			// the pool's connections is kept below, the writer attaches its mark anew.
			if _, err := wc.conn.ExecContext(ctx, "DETACH DATABASE "+writerMark); err != nil {
				t.Fatal(err)
			}
			if err := wc.conn.Close(); err != nil {
				t.Fatal(err)
			}
			wc.conn, wc.raw = nil, nil
			wc.pool.SetMaxOpenConns(1) // the connection the statement is prepared on is the write one
			s, err := wc.pool.PrepareContext(ctx, pragma)
			if err != nil {
				t.Fatal(err)
			}
			wc.stmts.mu.Lock()
			if old := wc.stmts.m[pragma]; old != nil {
				_ = old.Close()
			}
			wc.stmts.m[pragma] = s
			wc.stmts.mu.Unlock()
			// A commit on the connection: SQLite turns defer_foreign_keys off at each.
			if _, err := db.CreateRecord(ed, store.KindProduct, store.Values{"sku": "X-1", "name": "x"}); err != nil {
				t.Fatal(err)
			}

			if err := db.AckEntry(ctx, out[0].Seq, srcRec, false); err != nil {
				t.Fatalf("acknowledge the create of document %d as 17: %v", parent.ID, err)
			}
			if _, err := db.FindRecord(ctx, store.KindDocument, parent.ID); store.ErrorCode(err) != store.ENOTFOUND {
				t.Errorf("the local id %d is still there: %v", parent.ID, err)
			}
			for _, id := range leaves {
				r, err := db.FindRecord(ctx, store.KindDocument, id)
				if err != nil {
					t.Fatal(err)
				}
				if p := r.Fields[store.ParentField]; p != int64(17) {
					t.Errorf("document %d under %v, want 17", id, p)
				}
			}
			out, err = db.Outbox(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range out {
				if e.Kind == store.KindDocument && e.After[store.ParentField] != int64(17) {
					t.Errorf("queued create of %d under %v, want 17", e.ID, e.After[store.ParentField])
				}
			}
		})
	}
}
