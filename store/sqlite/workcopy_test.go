package sqlite_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

func wcEditor(name string) context.Context {
	return store.WithActor(context.Background(), store.Actor{Name: name, Role: store.RoleEditor})
}

// TestDB_WorkingCopyOutbox: every local save of editor and shared fields lands in the
// outbox with what it changed and the base it was made on; source writes and refused saves
// (a stale one, a system write: TestDB_WorkingCopySystemWrite) do not.
func TestDB_WorkingCopyOutbox(t *testing.T) {
	ctx := context.Background()
	db, _ := newCopy(t, "wc.db", 7, store.KindProduct, store.KindDocument)
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

	if _, err := db.UpdateRecord(wcEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: 5, Set: store.Values{"name": "lamp 2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(wcEditor("alice"), store.KindProduct, 42, store.Update{Add: map[string]int64{"stock": -3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(wcEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: 5, Set: store.Values{"name": "stale"}}); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("stale local save: %v", err)
	}
	sys := store.WithActor(ctx, store.Actor{Name: "worker", Role: store.RoleSystem})
	if _, err := db.UpdateRecord(sys, store.KindProduct, 42, store.Update{BaseVersion: 7, Set: store.Values{"checksum": "abc"}}); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Fatalf("system save on a working copy: %v, want EFORBIDDEN", err)
	}
	parent := int64(3)
	if _, err := db.MoveRecord(wcEditor("alice"), store.KindDocument, 4, store.Move{Parent: &parent}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRecord(wcEditor("alice"), store.KindProduct, store.Values{"sku": "NEW-1", "name": "new"}); err != nil {
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
	if es[3].ID < 1<<40 {
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
	if _, err := db.AcquireLease(wcEditor("alice"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 42, Group: store.GroupEditor, TTL: time.Minute}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("lease on a working copy: %v, want EINVALID", err)
	}
}

// TestDB_WorkingCopyCreateScope: a copy refuses, in its own create, what
// store.CheckCopyCreate refuses (a kind it did not clone, an explicit id) with the same error,
// writing nothing, whichever caller asks (the CLI, an import, the TUI).
func TestDB_WorkingCopyCreateScope(t *testing.T) {
	ctx := wcEditor("alice")
	db, _ := newCopy(t, "wc.db", 3, store.KindDocument)
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

func mustOutbox(t *testing.T, db *sqlite.DB) []store.OutboxEntry {
	t.Helper()
	es, err := db.Outbox(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestDB_WorkingCopySearch: records a working copy takes from the source are found by a
// search, whichever way they are written (a clone's bulk write, a pull's bulk write over
// existing records, a record written alone next to local changes, a resolved conflict), and
// no longer by what they held before.
func TestDB_WorkingCopySearch(t *testing.T) {
	ctx := context.Background()
	db, _ := newCopy(t, "wc.db", 1, store.KindProduct, store.KindDocument)
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
	if _, err := db.UpdateRecord(wcEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: 6, Set: store.Values{"name": "Lampe"}}); err != nil {
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
	if err := db.ResolveConflict(wcEditor("alice"), store.KindProduct, 42, store.Values{"name": "Stehlampe"}); err != nil {
		t.Fatal(err)
	}
	expect(store.KindProduct, "stehlampe", 42)
	expect(store.KindProduct, "lampe", 42)
	expect(store.KindProduct, "leuchte")
	expect(store.KindProduct, "garten", 42)
}

// TestDB_WorkingCopySystemWrite: a working copy refuses every save by the system role, on
// each save path (a version-checked set, a relative change, a keyed one, a save under the
// short database lock), with EFORBIDDEN, a message that names the fields and the source,
// and nothing written: no version, no outbox entry, no change-log entry, no key. The same
// saves land on a store that is not a working copy, and an editor's land on the copy.
func TestDB_WorkingCopySystemWrite(t *testing.T) {
	ctx := context.Background()
	db, _ := newCopy(t, "wc.db", 7, store.KindProduct)
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
		}, []string{"product.stock written as system", "operation-log entry", "--as editor"}},
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
			for _, w := range append(s.want, "--db somewhere", "nothing was written") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q does not say %q", err, w)
				}
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
	if _, err := db.UpdateRecord(wcEditor("alice"), store.KindProduct, 10, store.Update{Add: map[string]int64{"stock": -3}}); err != nil {
		t.Fatal(err)
	}
	if es := mustOutbox(t, db); len(es) != 1 || es[0].Actor != "alice" {
		t.Errorf("editor's adjust: outbox %+v, want one entry by alice", es)
	}

	// A store that is not a working copy takes the same system saves.
	plain := mustOpen(t, filepath.Join(t.TempDir(), "plain.db"))
	r, err := plain.CreateRecord(wcEditor("bob"), store.KindProduct, store.Values{"sku": "A-10", "name": "lamp"})
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
	late := mustOpen(t, filepath.Join(t.TempDir(), "late.db"))
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
