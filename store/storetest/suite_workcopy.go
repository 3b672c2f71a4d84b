package storetest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// CopyOpener returns a fresh, migrated, empty store that StartCopy can make a working copy,
// for one subtest; it closes the store when the subtest ends. A subtest that needs a store
// that is no working copy opens one too.
type CopyOpener func(t *testing.T) store.WorkingCopy

// RunWorkingCopy runs the working-copy half of the contract (store.WorkingCopy) against the
// stores open returns: what a local write queues in the outbox, what a copy refuses (creates
// out of scope, system writes, leases, deletes in conflict, restores of the source's
// deletes), what a pull writes, finds and logs. Each subtest starts a copy of its own. The
// decisions of a sync are package sync's, tested there.
func RunWorkingCopy(t *testing.T, open CopyOpener) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, open CopyOpener)
	}{
		{"Outbox", testCopyOutbox},
		{"CreateScope", testCopyCreateScope},
		{"Search", testCopySearch},
		{"SystemWrite", testCopySystemWrite},
		{"Delete", testCopyDelete},
		{"PulledEvents", testCopyPulledEvents},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// newCopy opens a store and makes it a working copy of kinds, at feed position pos of a
// source "src" found "somewhere".
func newCopy(t *testing.T, open CopyOpener, pos int64, kinds ...store.Kind) store.WorkingCopy {
	t.Helper()
	db := open(t)
	if err := db.StartCopy(context.Background(), store.CopyState{SourceID: "src", Source: "somewhere", Kinds: kinds, Position: pos}); err != nil {
		t.Fatal(err)
	}
	return db
}

func copyEditor(name string) context.Context {
	return store.WithActor(context.Background(), store.Actor{Name: name, Role: store.RoleEditor})
}

func mustOutbox(t *testing.T, db store.WorkingCopy) []store.OutboxEntry {
	t.Helper()
	es, err := db.Outbox(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// pulled returns the "pulled" rows of the copy's change log after cursor, as "kind id vN by".
func pulled(t *testing.T, db store.WorkingCopy, after int64) ([]string, int64) {
	t.Helper()
	chs, err := db.Changes(context.Background(), after, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range chs {
		after = c.ID
		if c.Event == store.EventPulled {
			out = append(out, string(c.Kind)+" "+strconv.FormatInt(c.RecordID, 10)+" v"+strconv.FormatInt(c.Version, 10)+" "+c.Actor)
		}
	}
	return out, after
}

func equalUnordered(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// testCopyOutbox: every local save of editor and shared fields lands in the
// outbox with what it changed and the base it was made on; source writes and refused saves
// (a stale one, a system write: TestDB_WorkingCopySystemWrite) do not.
func testCopyOutbox(t *testing.T, open CopyOpener) {
	ctx := context.Background()
	db := newCopy(t, open, 7, store.KindProduct, store.KindDocument)
	now := time.Now().UTC().Truncate(time.Millisecond)
	prod := &store.Record{Kind: store.KindProduct, ID: 42, Version: 5, UpdatedBy: "bob", UpdatedAt: now,
		Fields: store.Values{"sku": "A-1", "name": "lamp", "price": int64(100), "stock": int64(10), "categories": []string{"x"}}}
	doc := &store.Record{Kind: store.KindDocument, ID: 3, Version: 2, UpdatedBy: "bob", UpdatedAt: now, Fields: store.Values{"title": "t"}}
	doc2 := &store.Record{Kind: store.KindDocument, ID: 4, Version: 1, UpdatedBy: "bob", UpdatedAt: now, Fields: store.Values{"title": "u"}}
	if err := db.ApplySource(ctx, []*store.Record{prod, doc, doc2}, store.FeedPoint{ID: 9}); err != nil {
		t.Fatal(err)
	}
	if got := mustOutbox(t, db); len(got) != 0 {
		t.Fatalf("records from the source went to the outbox: %+v", got)
	}
	if r, _ := db.FindRecord(ctx, store.KindProduct, 42); r.Version != 5 || r.UpdatedBy != "bob" {
		t.Fatalf("source record written as v%d by %s, want v5 by bob", r.Version, r.UpdatedBy)
	}

	if _, err := db.UpdateRecord(copyEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: 5, Set: store.Values{"name": "lamp 2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(copyEditor("alice"), store.KindProduct, 42, store.Update{Add: map[string]int64{"stock": -3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(copyEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: 5, Set: store.Values{"name": "stale"}}); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("stale local save: %v", err)
	}
	sys := store.WithActor(ctx, store.Actor{Name: "worker", Role: store.RoleSystem})
	if _, err := db.UpdateRecord(sys, store.KindProduct, 42, store.Update{BaseVersion: 7, Set: store.Values{"checksum": "abc"}}); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Fatalf("system save on a working copy: %v, want EFORBIDDEN", err)
	}
	parent := int64(3)
	if _, err := db.MoveRecord(copyEditor("alice"), store.KindDocument, 4, store.Move{Parent: &parent}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRecord(copyEditor("alice"), store.KindProduct, store.Values{"sku": "NEW-1", "name": "new"}); err != nil {
		t.Fatal(err)
	}

	es := mustOutbox(t, db)
	if len(es) != 4 {
		t.Fatalf("outbox has %d entries, want 4 (two saves, a move, a create): %+v", len(es), es)
	}
	want := []struct {
		op      store.CopyOp
		id      int64
		base    int64
		changed string
	}{{store.CopySave, 42, 5, "name"}, {store.CopySave, 42, 5, "stock"}, {store.CopyMove, 4, 1, "parent_id"}, {store.CopyCreate, 0, 0, ""}}
	keys := map[string]bool{}
	for i, w := range want {
		e := es[i]
		if e.Op != w.op || (w.id != 0 && e.ID != w.id) || e.BaseVersion != w.base || e.Actor != "alice" {
			t.Errorf("entry %d: %s %s %d base %d by %s, want %s %d base %d by alice", i, e.Op, e.Kind, e.ID, e.BaseVersion, e.Actor, w.op, w.id, w.base)
		}
		if w.changed != "" {
			if got := e.Changed(); len(got) != 1 || got[0] != w.changed {
				t.Errorf("entry %d changed %v, want [%s]", i, got, w.changed)
			}
		}
		if e.Key == "" || keys[e.Key] {
			t.Errorf("entry %d: key %q empty or reused", i, e.Key)
		}
		keys[e.Key] = true
	}
	if es[1].Before["stock"] != int64(10) || es[1].After["stock"] != int64(7) {
		t.Errorf("stock entry: before %v after %v, want 10 → 7", es[1].Before["stock"], es[1].After["stock"])
	}
	if es[3].ID < store.LocalIDBase {
		t.Errorf("a local create got id %d, which a source record may have", es[3].ID)
	}

	// The source's newer version of a record with local changes does not overwrite them.
	newer := prod.Clone()
	newer.Version, newer.Fields["name"] = 6, "theirs"
	if err := db.ApplySource(ctx, []*store.Record{newer}, store.FeedPoint{ID: 12}); err != nil {
		t.Fatal(err)
	}
	if r, _ := db.FindRecord(ctx, store.KindProduct, 42); r.Fields["name"] != "lamp 2" {
		t.Errorf("a pull overwrote a local change: name %q", r.Fields["name"])
	}
	st, err := db.CopyState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Position != 12 || st.Pending != 4 || st.Source != "somewhere" || st.SourceID != "src" {
		t.Errorf("state %+v", st)
	}
	if _, err := db.AcquireLease(copyEditor("alice"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 42, Group: store.GroupEditor, TTL: time.Minute}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("lease on a working copy: %v, want EINVALID", err)
	}
}

// testCopyCreateScope: a copy refuses, in its own create, what
// store.CheckCopyCreate refuses (a kind it did not clone, an explicit id) with the same error,
// writing nothing, whichever caller asks (the CLI, an import, the TUI).
func testCopyCreateScope(t *testing.T, open CopyOpener) {
	ctx := copyEditor("alice")
	db := newCopy(t, open, 3, store.KindDocument)
	st, err := db.CopyState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("OtherKind", func(t *testing.T) {
		_, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "NEW-1", "name": "lamp"})
		want := store.CheckCopyCreate(st, store.KindProduct, 0)
		if store.ErrorCode(err) != store.EINVALID || err == nil || err.Error() != want.Error() {
			t.Fatalf("create of a product in a documents-only copy: %v, want %v", err, want)
		}
		if n, err := db.CountRecords(ctx, store.KindProduct); err != nil || n != 0 {
			t.Fatalf("%d products after the refusal (%v), want 0", n, err)
		}
	})
	t.Run("ExplicitID", func(t *testing.T) {
		_, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "t"}, store.CreateOptions{ID: 7})
		if want := store.CheckCopyCreate(st, store.KindDocument, 7); store.ErrorCode(err) != store.EINVALID || err == nil || err.Error() != want.Error() {
			t.Fatalf("create of document 7 in a copy: %v, want CheckCopyCreate's refusal", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		r, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "t"})
		if err != nil {
			t.Fatal(err)
		}
		es := mustOutbox(t, db)
		if len(es) != 1 || es[0].Op != store.CopyCreate || es[0].ID != r.ID {
			t.Fatalf("outbox %+v, want the one create of document %d", es, r.ID)
		}
	})
}

// testCopySearch: records a working copy takes from the source are found by a
// search, whichever way they are written (a clone's bulk write, a pull's bulk write over
// existing records, a record written alone next to local changes, a resolved conflict), and
// no longer by what they held before.
func testCopySearch(t *testing.T, open CopyOpener) {
	ctx := context.Background()
	db := newCopy(t, open, 1, store.KindProduct, store.KindDocument)
	now := time.Now().UTC().Truncate(time.Millisecond)
	rec := func(kind store.Kind, id, version int64, vals store.Values) *store.Record {
		return &store.Record{Kind: kind, ID: id, Version: version, UpdatedBy: "bob", UpdatedAt: now, Fields: vals}
	}
	find := func(kind store.Kind, q string) []int64 {
		t.Helper()
		rs, err := db.FindRecords(ctx, store.Filter{Kind: kind, Search: q})
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	expect := func(kind store.Kind, q string, want ...int64) {
		t.Helper()
		if want == nil {
			want = []int64{}
		}
		if got := find(kind, q); !slices.Equal(got, want) {
			t.Errorf("search %s %q = %v, want %v", kind, q, got, want)
		}
	}

	// The clone: the copy has nothing local, so the records are written in bulk.
	if err := db.ApplySource(ctx, []*store.Record{
		rec(store.KindProduct, 42, 5, store.Values{"sku": "A-1", "name": "Ёлка", "description": "Aus der Straße"}),
		rec(store.KindProduct, 43, 1, store.Values{"sku": "A-2", "name": "Tisch", "categories": []string{"Küche"}}),
		rec(store.KindDocument, 3, 2, store.Values{"title": "İzmir", "body": "ΣΟΦΊΑ"}),
	}, store.FeedPoint{ID: 2}); err != nil {
		t.Fatal(err)
	}
	expect(store.KindProduct, "ЁЛКА", 42)
	expect(store.KindProduct, "strasse", 42)
	expect(store.KindProduct, "küche", 43)
	expect(store.KindProduct, "ёл", 42) // shorter than a trigram: the side tables' scan
	expect(store.KindDocument, "izmir", 3)
	expect(store.KindDocument, "σοφία", 3)

	// A pull, still with nothing local: bulk again, over the records the copy has.
	if err := db.ApplySource(ctx, []*store.Record{
		rec(store.KindProduct, 42, 6, store.Values{"sku": "A-1", "name": "Ёлка", "description": "Im Garten"}),
	}, store.FeedPoint{ID: 3}); err != nil {
		t.Fatal(err)
	}
	expect(store.KindProduct, "strasse")
	expect(store.KindProduct, "garten", 42)

	// A local save of 42; then the source's records are written one by one, and 42 keeps
	// its local values.
	if _, err := db.UpdateRecord(copyEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: 6, Set: store.Values{"name": "Lampe"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.ApplySource(ctx, []*store.Record{
		rec(store.KindProduct, 42, 7, store.Values{"sku": "A-1", "name": "Leuchte", "description": "Im Garten"}),
		rec(store.KindProduct, 43, 2, store.Values{"sku": "A-2", "name": "Stuhl", "categories": []string{"Büro"}}),
	}, store.FeedPoint{ID: 4}); err != nil {
		t.Fatal(err)
	}
	expect(store.KindProduct, "lampe", 42)
	expect(store.KindProduct, "leuchte")
	expect(store.KindProduct, "tisch")
	expect(store.KindProduct, "küche")
	expect(store.KindProduct, "STUHL", 43)
	expect(store.KindProduct, "büro", 43)

	// The local save meets the source's: a conflict, resolved with a third name.
	es := mustOutbox(t, db)
	if len(es) != 1 {
		t.Fatalf("outbox = %+v, want the one local save", es)
	}
	if err := db.QueueConflict(ctx, es[0].Seq, store.CopyConflict{Op: store.CopySave, Kind: store.KindProduct, ID: 42,
		Reason: "both changed the name", Fields: []string{"name"}, Base: store.Values{"name": "Ёлка"},
		Mine: store.Values{"name": "Lampe"}, Theirs: store.Values{"name": "Leuchte"}, BaseVersion: 6, TheirsVersion: 7,
		Actor: "alice", At: now}); err != nil {
		t.Fatal(err)
	}
	if err := db.ResolveConflict(copyEditor("alice"), store.KindProduct, 42, store.Values{"name": "Stehlampe"}); err != nil {
		t.Fatal(err)
	}
	expect(store.KindProduct, "stehlampe", 42)
	expect(store.KindProduct, "lampe", 42)
	expect(store.KindProduct, "leuchte")
	expect(store.KindProduct, "garten", 42)
}

// testCopySystemWrite: a working copy refuses every save by the system role, on
// each save path (a version-checked set, a relative change, a keyed one, a save under the
// short database lock), with EFORBIDDEN, a message that names the fields and the source,
// and nothing written: no version, no outbox entry, no change-log entry, no key. The same
// saves land on a store that is not a working copy, and an editor's land on the copy.
func testCopySystemWrite(t *testing.T, open CopyOpener) {
	ctx := context.Background()
	db := newCopy(t, open, 7, store.KindProduct)
	rec := &store.Record{Kind: store.KindProduct, ID: 10, Version: 2, UpdatedBy: "bob", UpdatedAt: time.Now().UTC().Truncate(time.Millisecond),
		Fields: store.Values{"sku": "A-10", "name": "lamp", "price": int64(100), "stock": int64(10), "checksum": "src"}}
	if err := db.ApplySource(ctx, []*store.Record{rec}, store.FeedPoint{ID: 9}); err != nil {
		t.Fatal(err)
	}
	changes, err := db.Changes(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	sys := store.WithActor(ctx, store.Actor{Name: "script", Role: store.RoleSystem})
	saves := []struct {
		name string
		save func() error
		want []string // in the message, besides the source
	}{
		{"set system field", func() error {
			_, err := db.UpdateRecord(sys, store.KindProduct, 10, store.Update{BaseVersion: 2, Set: store.Values{"checksum": "abc"}})
			return err
		}, []string{"product.checksum", "system fields come from the source"}},
		{"set system and shared field", func() error {
			_, err := db.UpdateRecord(sys, store.KindProduct, 10, store.Update{BaseVersion: 2, Set: store.Values{"thumbnail": "t.png", "availability": "backorder"}})
			return err
		}, []string{"product.thumbnail", "system fields come from the source"}},
		{"adjust shared counter", func() error {
			_, err := db.UpdateRecord(sys, store.KindProduct, 10, store.Update{Add: map[string]int64{"stock": -3}})
			return err
		}, []string{"product.stock written as system", "operation-log entry", "as an editor"}},
		{"keyed adjust", func() error {
			_, err := db.UpdateRecord(sys, store.KindProduct, 10, store.Update{Add: map[string]int64{"stock": 5}, IdempotencyKey: "k-1"})
			return err
		}, []string{"product.stock written as system"}},
		{"locked update", func() error {
			_, err := db.LockedUpdate(sys, store.KindProduct, 10, func(cur *store.Record) (store.Update, error) {
				return store.Update{Set: store.Values{"checksum": "from " + cur.Fields["sku"].(string)}}, nil
			})
			return err
		}, []string{"product.checksum"}},
	}
	for _, s := range saves {
		t.Run(s.name, func(t *testing.T) {
			err := s.save()
			if got := store.ErrorCode(err); got != store.EFORBIDDEN {
				t.Fatalf("got %v (%s), want EFORBIDDEN", err, got)
			}
			for _, w := range append(s.want, "the source, somewhere", "nothing was written") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("message %q names a flag: the CLI adds those", err)
			}
		})
	}
	got, err := db.FindRecord(ctx, store.KindProduct, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.Fields["checksum"] != "src" || got.Fields["stock"] != int64(10) || got.Fields["availability"] != "in_stock" {
		t.Errorf("refused saves wrote: v%d checksum %q stock %v availability %v", got.Version, got.Fields["checksum"], got.Fields["stock"], got.Fields["availability"])
	}
	if es := mustOutbox(t, db); len(es) != 0 {
		t.Errorf("refused saves queued %d outbox entries: %+v", len(es), es)
	}
	if after, err := db.Changes(ctx, 0, 0); err != nil || len(after) != len(changes) {
		t.Errorf("refused saves logged changes: %d before, %d after (%v)", len(changes), len(after), err)
	}
	if _, err := db.FindKey(ctx, store.ScopeAPI, "k-1"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("a refused keyed save kept its key: %v", err)
	}

	// An editor's save of the shared field lands, and is queued.
	if _, err := db.UpdateRecord(copyEditor("alice"), store.KindProduct, 10, store.Update{Add: map[string]int64{"stock": -3}}); err != nil {
		t.Fatal(err)
	}
	if es := mustOutbox(t, db); len(es) != 1 || es[0].Actor != "alice" {
		t.Errorf("editor's adjust: outbox %+v, want one entry by alice", es)
	}

	// A store that is not a working copy takes the same system saves.
	plain := open(t)
	r, err := plain.CreateRecord(copyEditor("bob"), store.KindProduct, store.Values{"sku": "A-10", "name": "lamp"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.UpdateRecord(sys, store.KindProduct, r.ID, store.Update{BaseVersion: r.Version, Set: store.Values{"checksum": "abc"}}); err != nil {
		t.Errorf("system save on a store that is no working copy: %v", err)
	}
	if _, err := plain.UpdateRecord(sys, store.KindProduct, r.ID, store.Update{Add: map[string]int64{"stock": 2}}); err != nil {
		t.Errorf("system adjust on a store that is no working copy: %v", err)
	}

	// A store the DB has seen as no copy, which StartCopy then makes one, refuses too.
	late := open(t)
	if _, err := late.UpdateRecord(sys, store.KindProduct, 10, store.Update{Add: map[string]int64{"stock": 1}}); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("system adjust on an empty store: %v, want ENOTFOUND", err)
	}
	if err := late.StartCopy(ctx, store.CopyState{SourceID: "src", Source: "elsewhere", Kinds: []store.Kind{store.KindProduct}, Position: 1}); err != nil {
		t.Fatal(err)
	}
	if err := late.ApplySource(ctx, []*store.Record{rec}, store.FeedPoint{ID: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := late.UpdateRecord(sys, store.KindProduct, 10, store.Update{Add: map[string]int64{"stock": 1}}); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("system adjust after StartCopy on the same DB: %v, want EFORBIDDEN", err)
	}
}

// testCopyDelete: a local delete on a working copy is a tombstone and an outbox
// entry (base version, the values it removed, a key), written together; a record created
// here leaves no entry and takes its queued create with it, a subtree queues its documents
// children first; a record with an open conflict is refused with nothing changed; a restore
// cancels a pending delete without queueing a create, and one of a record the copy has no
// pending delete for is refused.
func testCopyDelete(t *testing.T, open CopyOpener) {
	ctx := context.Background()
	db := newCopy(t, open, 7, store.KindProduct, store.KindDocument)
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := func(id int64, sku string) *store.Record {
		return &store.Record{Kind: store.KindProduct, ID: id, Version: 5, UpdatedBy: "bob", UpdatedAt: now, Fields: store.Values{"sku": sku, "name": sku}}
	}
	root := &store.Record{Kind: store.KindDocument, ID: 3, Version: 2, UpdatedBy: "bob", UpdatedAt: now, Fields: store.Values{"title": "root"}}
	child := &store.Record{Kind: store.KindDocument, ID: 4, Version: 1, UpdatedBy: "bob", UpdatedAt: now, Fields: store.Values{"title": "child", "parent_id": int64(3)}}
	if err := db.ApplySource(ctx, []*store.Record{p(42, "A-1"), p(43, "A-2"), root, child}, store.FeedPoint{ID: 9}); err != nil {
		t.Fatal(err)
	}
	alice := copyEditor("alice")

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

// testCopyPulledEvents: a sync's pull leaves one "pulled" row in the copy's change
// log per record it took from the source, with the source's writer and version, so that a
// TUI or a watch on the copy hears of it as of a save; records it held back (local changes)
// or already had at that version get none, and history leaves the rows out.
func testCopyPulledEvents(t *testing.T, open CopyOpener) {
	ctx := context.Background()
	db := newCopy(t, open, 7, store.KindProduct, store.KindDocument)
	now := time.Now().UTC().Truncate(time.Millisecond)
	prod := func(v int64, name string) *store.Record {
		return &store.Record{Kind: store.KindProduct, ID: 42, Version: v, UpdatedBy: "bob", UpdatedAt: now,
			Fields: store.Values{"sku": "A-1", "name": name, "stock": int64(10)}}
	}
	doc := func(v int64, title string) *store.Record {
		return &store.Record{Kind: store.KindDocument, ID: 3, Version: v, UpdatedBy: "carol", UpdatedAt: now, Fields: store.Values{"title": title}}
	}

	// A copy with nothing local takes records in bulk.
	if err := db.ApplySource(ctx, []*store.Record{prod(5, "lamp"), doc(2, "t")}, store.FeedPoint{ID: 9}); err != nil {
		t.Fatal(err)
	}
	got, cur := pulled(t, db, 0)
	if want := []string{"product 42 v5 bob", "document 3 v2 carol"}; !equalUnordered(got, want) {
		t.Fatalf("first pull logged %q, want %q", got, want)
	}
	// The same versions again: nothing new to hear.
	if err := db.ApplySource(ctx, []*store.Record{prod(5, "lamp"), doc(2, "t")}, store.FeedPoint{ID: 9}); err != nil {
		t.Fatal(err)
	}
	if got, _ := pulled(t, db, cur); len(got) != 0 {
		t.Fatalf("a pull of versions the copy had logged %q", got)
	}
	// A local save holds product 42 back; the document still comes, one by one.
	if _, err := db.UpdateRecord(copyEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: 5, Set: store.Values{"name": "lamp 2"}}); err != nil {
		t.Fatal(err)
	}
	_, cur = pulled(t, db, cur)
	if err := db.ApplySource(ctx, []*store.Record{prod(6, "lamp by bob"), doc(3, "t 2")}, store.FeedPoint{ID: 11}); err != nil {
		t.Fatal(err)
	}
	got, _ = pulled(t, db, cur)
	if want := []string{"document 3 v3 carol"}; !equalUnordered(got, want) {
		t.Fatalf("pull beside a local change logged %q, want %q", got, want)
	}
	// History and the operation log are the copy's own writes only.
	ops, err := db.FindOps(ctx, store.KindDocument, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ops {
		if c.Event == store.EventPulled {
			t.Fatalf("operation log of document 3 holds a pulled row: %+v", c)
		}
	}
}
