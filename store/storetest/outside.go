package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// OutsideOpener opens a fresh store with opts and returns it with exec, which runs SQL in
// another program (a real sqlite3 or psql process) on the store's database and returns
// what the program said when it failed, and actor, the name the store gives that program's
// writes.
type OutsideOpener func(t *testing.T, opts store.Options) (st store.Store, exec func(sql string) error, actor string)

// RunOutside checks that writes another program makes directly to a record table are seen
// as the store's own are (store/outside.go): each gets the next version, a history version
// and a change the feed delivers, a save based on the version before it conflicts, a search
// finds what it wrote, and a delete leaves a tombstone that a restore brings back. tandem's
// own writes are never taken for another program's.
func RunOutside(t *testing.T, open OutsideOpener) {
	t.Run("Update", func(t *testing.T) { testOutsideUpdate(t, open) })
	t.Run("Insert", func(t *testing.T) { testOutsideInsert(t, open) })
	t.Run("Delete", func(t *testing.T) { testOutsideDelete(t, open) })
	t.Run("OwnWrites", func(t *testing.T) { testOwnWritesNotOutside(t, open) })
	t.Run("Refs", func(t *testing.T) { testOutsideRefs(t, open) })
	t.Run("Types", func(t *testing.T) { testOutsideTypes(t, open) })
	t.Run("OffSchema", func(t *testing.T) { testOutsideOffSchema(t, open) })
	t.Run("VersionRaised", func(t *testing.T) { testOutsideVersionRaised(t, open) })
	t.Run("TreeCycle", func(t *testing.T) { testOutsideTreeCycle(t, open) })
	t.Run("LongName", func(t *testing.T) { testOutsideLongName(t, open) })
}

// testOutsideVersionRaised: another program that raises the version itself while it
// changes a field (a careless "SET name = …, version = version + 1") is still another
// program's write: the next version, with a history version and a change. Taken for
// tandem's own, it left a gap in history, and the next save's history version (which keeps
// only the fields that save wrote) rebuilt the record without the program's value.
func testOutsideVersionRaised(t *testing.T, open OutsideOpener) {
	st, exec, actor := openOutside(t, open)
	rec := mustCreateProduct(t, st, "RAISE-1")
	feed := subscribe(t, st)
	exec(fmt.Sprintf("UPDATE products SET name = 'Outside', version = version + 1 WHERE id = %d", rec.ID))
	got := mustFind(t, st, store.KindProduct, rec.ID)
	if got.Version != rec.Version+1 || got.Fields["name"] != "Outside" || got.UpdatedBy != actor {
		t.Fatalf("after the outside update: version %d by %s, name %v; want version %d by %s, Outside",
			got.Version, got.UpdatedBy, got.Fields["name"], rec.Version+1, actor)
	}
	requireOutsideChange(t, awaitChange(t, feed, store.KindProduct, rec.ID), store.EventSaved, rec.Version+1, actor)
	saved, err := st.UpdateRecord(actx(t, actBob), store.KindProduct, rec.ID, store.Update{BaseVersion: got.Version, Set: store.Values{"stock": int64(3)}})
	if err != nil {
		t.Fatal(err)
	}
	hs, err := st.FindHistory(t.Context(), store.KindProduct, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.Version == saved.Version && h.Snapshot["name"] != "Outside" {
			t.Fatalf("history version %d has name %v, want Outside (the record's name at that version)", h.Version, h.Snapshot["name"])
		}
	}
	if len(hs) != 3 {
		t.Fatalf("%d history versions, want 3 (create, the other program's, bob's)", len(hs))
	}
}

// openOutside opens a store with the sample schema for one subtest, closed when it ends;
// exec fails the test when the other program fails.
func openOutside(t *testing.T, open OutsideOpener) (store.Store, func(string), string) {
	t.Helper()
	st, try, actor := openOutsideWith(t, open, store.Options{})
	exec := func(sql string) {
		t.Helper()
		if err := try(sql); err != nil {
			t.Fatalf("the other program's %q: %v", sql, err)
		}
	}
	return st, exec, actor
}

// openOutsideWith opens a store with opts for one subtest, closed when it ends.
func openOutsideWith(t *testing.T, open OutsideOpener, opts store.Options) (store.Store, func(string) error, string) {
	t.Helper()
	st, exec, actor := open(t, opts)
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return st, exec, actor
}

// subscribe starts a feed subscription at the end of the change log.
func subscribe(t *testing.T, st store.Store) <-chan store.Change {
	t.Helper()
	ch, err := st.Subscribe(t.Context(), mustLastChangeID(t, st))
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	return ch
}

// awaitChange returns the first change the feed delivers for record id of kind, failing
// after a generous wait (the feed polls at least once a second).
func awaitChange(t *testing.T, ch <-chan store.Change, kind store.Kind, id int64) store.Change {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatal("feed closed before the outside write arrived")
			}
			if c.Kind == kind && c.RecordID == id {
				return c
			}
		case <-timeout:
			t.Fatalf("the feed delivered no change of %s %d", kind, id)
		}
	}
}

func requireOutsideChange(t *testing.T, c store.Change, ev store.Event, version int64, actor string) {
	t.Helper()
	if c.Event != ev || c.Version != version || c.Actor != actor || c.Role != store.RoleOutside || !c.History {
		t.Fatalf("change = %+v, want event %s version %d by %s, role %s, with history", c, ev, version, actor, store.RoleOutside)
	}
}

// mustSearch returns the ids of the products a search for q finds.
func mustSearch(t *testing.T, st store.Store, q string) []int64 {
	t.Helper()
	rs, err := st.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct, Search: q})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var ids []int64
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

func testOutsideUpdate(t *testing.T, open OutsideOpener) {
	st, exec, actor := openOutside(t, open)
	rec := mustCreateProduct(t, st, "LAMP-1")
	feed := subscribe(t, st)

	// An update that changes no field (it names none, or sets one to the value it has) is
	// not a write of the record: the version stays.
	exec(fmt.Sprintf("UPDATE products SET updated_by = updated_by WHERE id = %d; UPDATE products SET stock = stock WHERE id = %[1]d; "+
		"UPDATE products SET price = 1, name = 'Straße lamp' WHERE id = %[1]d", rec.ID))

	got := mustFind(t, st, store.KindProduct, rec.ID)
	if got.Version != rec.Version+1 || got.Fields["price"] != int64(1) || got.Fields["name"] != "Straße lamp" {
		t.Fatalf("after the outside update: version %d, price %v, name %v; want version %d, 1, Straße lamp",
			got.Version, got.Fields["price"], got.Fields["name"], rec.Version+1)
	}
	requireOutsideChange(t, awaitChange(t, feed, store.KindProduct, rec.ID), store.EventSaved, rec.Version+1, actor)

	hs, err := st.FindHistory(t.Context(), store.KindProduct, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := hs[0]; h.Version != rec.Version+1 || h.Actor != actor || !slices.Equal(h.Fields, []string{"name", "price"}) ||
		h.Snapshot["price"] != int64(1) || h.Snapshot["name"] != "Straße lamp" || !slices.Equal(h.Snapshot["categories"].([]string), []string{"tools"}) {
		t.Fatalf("newest history version = %+v, want version %d by %s writing name and price", h, rec.Version+1, actor)
	}

	// A save based on the version before the outside write is told of it.
	_, err = st.UpdateRecord(actx(t, actBob), store.KindProduct, rec.ID, store.Update{BaseVersion: rec.Version, Set: store.Values{"price": int64(500)}})
	ce := asConflict(t, err)
	if ce.Current == nil || ce.Current.Version != rec.Version+1 {
		t.Fatalf("conflict = %+v, want the record at version %d", ce, rec.Version+1)
	}

	// tandem refolds what the other program wrote: a search finds the new name.
	if ids := mustSearch(t, st, "STRASSE"); !slices.Equal(ids, []int64{rec.ID}) {
		t.Fatalf("search for the outside name found %v, want [%d]", ids, rec.ID)
	}

	// A save on the new version works, and history reads back on top of the outside one.
	mustSave(t, st, actx(t, actBob), store.KindProduct, rec.ID, store.Update{BaseVersion: rec.Version + 1, Set: store.Values{"stock": int64(7)}})
	v, err := st.FindVersion(t.Context(), store.KindProduct, rec.ID, rec.Version+2)
	if err != nil {
		t.Fatal(err)
	}
	if v.Snapshot["name"] != "Straße lamp" || v.Snapshot["stock"] != int64(7) {
		t.Fatalf("version %d = %v, want the outside name and stock 7", rec.Version+2, v.Snapshot)
	}
}

func testOutsideInsert(t *testing.T, open OutsideOpener) {
	st, exec, actor := openOutside(t, open)
	feed := subscribe(t, st)

	exec(`INSERT INTO products (sku, name, updated_at, updated_by) VALUES ('OUT-1', 'Outsider Ölkanne', '2026-01-01T00:00:00.000Z', 'script')`)

	ids := mustSearch(t, st, "ÖLKANNE")
	if len(ids) != 1 {
		t.Fatalf("search for the inserted name found %v, want one product", ids)
	}
	rec := mustFind(t, st, store.KindProduct, ids[0])
	if rec.Version != 1 {
		t.Fatalf("inserted product has version %d, want 1", rec.Version)
	}
	requireOutsideChange(t, awaitChange(t, feed, store.KindProduct, rec.ID), store.EventCreated, 1, actor)
	hs, err := st.FindHistory(t.Context(), store.KindProduct, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].Actor != actor || hs[0].Snapshot["sku"] != "OUT-1" {
		t.Fatalf("history = %+v, want one version by %s with sku OUT-1", hs, actor)
	}
	// Its sku key was written by tandem: another product cannot take the sku.
	_, err = st.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": "out-1", "name": "Twin"})
	requireCode(t, err, store.EINVALID)
	mustSave(t, st, actx(t, actBob), store.KindProduct, rec.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(250)}})
}

func testOutsideDelete(t *testing.T, open OutsideOpener) {
	st, exec, actor := openOutside(t, open)
	rec := mustCreateProduct(t, st, "GONE-1")
	feed := subscribe(t, st)

	exec(fmt.Sprintf("DELETE FROM products WHERE id = %d", rec.ID))

	_, err := st.FindRecord(t.Context(), store.KindProduct, rec.ID)
	requireCode(t, err, store.ENOTFOUND)
	requireOutsideChange(t, awaitChange(t, feed, store.KindProduct, rec.ID), store.EventDeleted, rec.Version+1, actor)
	hs, err := st.FindHistory(t.Context(), store.KindProduct, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := hs[0]; h.Event != store.EventDeleted || h.Version != rec.Version+1 || h.Actor != actor || h.Snapshot["sku"] != "GONE-1" {
		t.Fatalf("newest history version = %+v, want the tombstone, version %d by %s", h, rec.Version+1, actor)
	}
	if ids := mustSearch(t, st, "gone-1"); len(ids) != 0 {
		t.Fatalf("search found the deleted product: %v", ids)
	}
	res, err := st.RestoreRecord(actx(t, actAlice), store.KindProduct, rec.ID, store.Restore{})
	if err != nil {
		t.Fatalf("restore after an outside delete: %v", err)
	}
	if res.Record.Version != rec.Version+2 || res.Record.Fields["sku"] != "GONE-1" {
		t.Fatalf("restored %+v, want version %d with sku GONE-1", res.Record, rec.Version+2)
	}
	if ids := mustSearch(t, st, "gone-1"); !slices.Equal(ids, []int64{rec.ID}) {
		t.Fatalf("search after the restore found %v, want [%d]", ids, rec.ID)
	}
}

func testOwnWritesNotOutside(t *testing.T, open OutsideOpener) {
	st, _, _ := openOutside(t, open)
	start := mustLastChangeID(t, st)
	rec := mustCreateProduct(t, st, "OWN-1")
	ctx := actx(t, actBob)
	mustSave(t, st, ctx, store.KindProduct, rec.ID, store.Update{BaseVersion: rec.Version, Set: store.Values{"name": "Own"}})
	mustSave(t, st, actx(t, actWorker), store.KindProduct, rec.ID, store.Update{Add: map[string]int64{"stock": 1}})
	if _, err := st.DeleteRecord(ctx, store.KindProduct, rec.ID, store.Delete{ExpectVersion: rec.Version + 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RestoreRecord(ctx, store.KindProduct, rec.ID, store.Restore{}); err != nil {
		t.Fatal(err)
	}
	cs := mustChanges(t, st, start)
	if len(cs) != 5 {
		t.Fatalf("tandem's own five writes logged %d changes: %+v", len(cs), cs)
	}
	for _, c := range cs {
		if c.Role == store.RoleOutside {
			t.Fatalf("tandem's own write logged as another program's: %+v", c)
		}
	}
	if got := mustFind(t, st, store.KindProduct, rec.ID); got.Version != rec.Version+4 {
		t.Fatalf("version after four writes = %d, want %d", got.Version, rec.Version+4)
	}
}
