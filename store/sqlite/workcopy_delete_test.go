package sqlite_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// TestDB_WorkingCopyDelete: a local delete on a working copy is a tombstone and an outbox
// entry (base version, the values it removed, a key), written together; a record created
// here leaves no entry and takes its queued create with it, a subtree queues its documents
// children first; a record with an open conflict is refused with nothing changed; a restore
// cancels a pending delete without queueing a create, and one of a record the copy has no
// pending delete for is refused.
func TestDB_WorkingCopyDelete(t *testing.T) {
	ctx := context.Background()
	db, _ := newCopy(t, "wc.db", 7, store.KindProduct, store.KindDocument)
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := func(id int64, sku string) *store.Record {
		return &store.Record{Kind: store.KindProduct, ID: id, Version: 5, UpdatedBy: "bob", UpdatedAt: now, Fields: store.Values{"sku": sku, "name": sku}}
	}
	root := &store.Record{Kind: store.KindDocument, ID: 3, Version: 2, UpdatedBy: "bob", UpdatedAt: now, Fields: store.Values{"title": "root"}}
	child := &store.Record{Kind: store.KindDocument, ID: 4, Version: 1, UpdatedBy: "bob", UpdatedAt: now, Fields: store.Values{"title": "child", "parent_id": int64(3)}}
	if err := db.ApplySource(ctx, []*store.Record{p(42, "A-1"), p(43, "A-2"), root, child}, store.FeedPoint{ID: 9}); err != nil {
		t.Fatal(err)
	}
	alice := wcEditor("alice")

	if _, err := db.UpdateRecord(alice, store.KindProduct, 42, store.Update{BaseVersion: 5, Set: store.Values{"name": "renamed"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRecord(alice, store.KindProduct, 42, store.Delete{ExpectVersion: 6}); err != nil {
		t.Fatal(err)
	}
	es := mustOutbox(t, db)
	if len(es) != 2 || es[0].Op != store.CopySave || es[1].Op != store.CopyDelete {
		t.Fatalf("outbox after a save and a delete: %+v", es)
	}
	if d := es[1]; d.ID != 42 || d.BaseVersion != 5 || d.Before["name"] != "renamed" || !strings.HasPrefix(d.Key, store.OriginKey) || d.Actor != "alice" {
		t.Errorf("delete entry %+v: want product 42 on base 5, the values it removed, a wc: key, by alice", d)
	}

	// A local create deleted before any sync: its create goes, nothing else is queued.
	local, err := db.CreateRecord(alice, store.KindDocument, store.Values{"title": "local", "parent_id": int64(4)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRecord(alice, store.KindDocument, 3, store.Delete{ExpectVersion: 2, Subtree: true}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range mustOutbox(t, db)[2:] {
		got = append(got, string(e.Op)+" "+string(e.Kind)+" "+strconv.FormatInt(e.ID, 10))
	}
	if want := "delete document 4,delete document 3"; strings.Join(got, ",") != want {
		t.Errorf("outbox of a subtree delete with a local child %d: %v, want %s", local.ID, got, want)
	}
	st, err := db.CopyState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 4 || st.Deletes != 3 {
		t.Errorf("copy state: %d pending, %d deletes; want 4 and 3", st.Pending, st.Deletes)
	}

	// An open conflict: the delete is refused, the record and the outbox stay as they were.
	if _, err := db.UpdateRecord(alice, store.KindProduct, 43, store.Update{BaseVersion: 5, Set: store.Values{"name": "mine"}}); err != nil {
		t.Fatal(err)
	}
	es = mustOutbox(t, db)
	last := es[len(es)-1]
	if err := db.QueueConflict(ctx, last.Seq, store.CopyConflict{Op: store.CopySave, Kind: store.KindProduct, ID: 43, Reason: "changed on both sides",
		Fields: []string{"name"}, Base: last.Before, Mine: last.After, Theirs: store.Values{"name": "theirs"}, BaseVersion: 5, TheirsVersion: 6, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	before := len(mustOutbox(t, db))
	if _, err := db.DeleteRecord(alice, store.KindProduct, 43, store.Delete{ExpectVersion: 6}); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "resolve it first") {
		t.Fatalf("delete of a record in conflict: %v, want a refusal", err)
	}
	if _, err := db.FindRecord(ctx, store.KindProduct, 43); err != nil || len(mustOutbox(t, db)) != before {
		t.Fatalf("the refused delete changed something: %v, outbox %d→%d", err, before, len(mustOutbox(t, db)))
	}

	// Restore cancels the pending delete; the save before it stays, and no create is queued.
	res, err := db.RestoreRecord(alice, store.KindProduct, 42, store.Restore{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Fields["name"] != "renamed" {
		t.Errorf("restored with %v, want the local edit", res.Record.Fields["name"])
	}
	for _, e := range mustOutbox(t, db) {
		if e.ID == 42 && e.Op != store.CopySave {
			t.Errorf("after the restore product 42 has a %s entry", e.Op)
		}
	}
	// A child restored while its parent's delete is pending would sit at the root here.
	if _, err := db.RestoreRecord(alice, store.KindDocument, 4, store.Restore{}); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "restore document 3 first") {
		t.Fatalf("restore of a child before its parent: %v, want a refusal", err)
	}
	// The local create comes back as a create to push.
	if _, err := db.RestoreRecord(alice, store.KindDocument, 3, store.Restore{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RestoreRecord(alice, store.KindDocument, 4, store.Restore{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RestoreRecord(alice, store.KindDocument, local.ID, store.Restore{}); err != nil {
		t.Fatal(err)
	}
	es = mustOutbox(t, db)
	if e := es[len(es)-1]; e.Op != store.CopyCreate || e.ID != local.ID {
		t.Errorf("restore of a local create queued %+v, want its create again", e)
	}
	st, _ = db.CopyState(ctx)
	if st.Deletes != 0 {
		t.Errorf("%d deletes pending after every one was restored", st.Deletes)
	}
}
