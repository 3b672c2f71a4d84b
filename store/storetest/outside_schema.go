package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// Outside writes on a schema of the store's own (parts.yaml): what the database refuses
// another program, and how tandem reads and saves what it lets through.

// outsideParts opens a store with the parts schema for one subtest.
func outsideParts(t *testing.T, open OutsideOpener) (store.Store, func(string) error) {
	t.Helper()
	st, exec, _ := openOutsideWith(t, open, store.Options{Registry: PartsRegistry(t)})
	return st, exec
}

// requireRefused fails unless the other program's sql failed, naming one of words.
func requireRefused(t *testing.T, exec func(string) error, sql string, words ...string) {
	t.Helper()
	err := exec(sql)
	if err == nil {
		t.Fatalf("the other program's %q went through; want it refused", sql)
	}
	for _, w := range words {
		if strings.Contains(err.Error(), w) {
			return
		}
	}
	t.Fatalf("the other program's %q failed with %v; want a message naming one of %q", sql, err, words)
}

// outsideRow is the columns an outside insert into a record table gives besides the
// fields: a time both stores read, and a writer.
const outsideRow = "'2026-01-01T00:00:00.000Z', 'script'"

// testOutsideRefs: another program is held to refs as tandem is, on both stores (foreign
// keys on PostgreSQL; triggers on SQLite, whose other programs leave foreign keys off): it
// cannot delete a record that others refer to, give it another id, or write a ref to a
// record that does not exist; nothing of a refused write reaches history or the feed.
func testOutsideRefs(t *testing.T, open OutsideOpener) {
	st, exec := outsideParts(t, open)
	acme := mustSupplier(t, st, "ACME", "Acme")
	zen := mustSupplier(t, st, "ZEN", "Zenith")
	bolt := mustCreate(t, st, actAlice, kindPart, store.Values{"label": "Bolt", "supplier": acme.ID})
	top := mustArea(t, st, "Top", nil)
	mustArea(t, st, "Below", &top.ID)
	start := mustLastChangeID(t, st)

	requireRefused(t, exec, fmt.Sprintf("DELETE FROM suppliers WHERE id = %d", acme.ID), "part")
	requireRefused(t, exec, fmt.Sprintf("UPDATE suppliers SET id = %d WHERE id = %d", zen.ID+100, acme.ID), "part", "referenced")
	requireRefused(t, exec, fmt.Sprintf("DELETE FROM areas WHERE id = %d", top.ID), "area")
	requireRefused(t, exec, fmt.Sprintf("UPDATE parts SET supplier = %d WHERE id = %d", zen.ID+100, bolt.ID), "supplier")
	requireRefused(t, exec, fmt.Sprintf("INSERT INTO parts (label, supplier, updated_at, updated_by) VALUES ('Nut', %d, %s)", zen.ID+100, outsideRow), "supplier")
	if got := mustFind(t, st, kindSupplier, acme.ID); got.Version != acme.Version {
		t.Fatalf("supplier after the refused writes: version %d, want %d", got.Version, acme.Version)
	}
	if got := mustFind(t, st, kindPart, bolt.ID); got.Version != bolt.Version || got.Fields["supplier"] != acme.ID {
		t.Fatalf("part after the refused writes: version %d, supplier %v; want %d, %d", got.Version, got.Fields["supplier"], bolt.Version, acme.ID)
	}
	if cs := mustChanges(t, st, start); len(cs) != 0 {
		t.Fatalf("refused outside writes logged changes: %+v", cs)
	}

	// Refs that name records that exist go through, and the referrers first, then the
	// record they referred to.
	if err := exec(fmt.Sprintf("UPDATE parts SET supplier = %d WHERE id = %d; INSERT INTO parts (label, supplier, updated_at, updated_by) VALUES ('Nut', %d, %s)",
		zen.ID, bolt.ID, zen.ID, outsideRow)); err != nil {
		t.Fatalf("outside writes of refs to a supplier that exists: %v", err)
	}
	if err := exec(fmt.Sprintf("DELETE FROM suppliers WHERE id = %d", acme.ID)); err != nil {
		t.Fatalf("outside delete of a supplier nobody refers to any more: %v", err)
	}
	requireGone(t, st, kindSupplier, acme.ID)
}

// testOutsideTypes: a value the column cannot hold as tandem reads it (text in a whole
// number, a NULL in a field that is never empty) is refused on both stores, so one row
// another program wrote never makes a listing of the kind fail.
func testOutsideTypes(t *testing.T, open OutsideOpener) {
	st, exec := outsideParts(t, open)
	acme := mustSupplier(t, st, "ACME", "Acme")
	bolt := mustCreate(t, st, actAlice, kindPart, store.Values{"label": "Bolt"})
	for _, sql := range []string{
		fmt.Sprintf("UPDATE suppliers SET rating = 'many' WHERE id = %d", acme.ID),
		fmt.Sprintf("UPDATE suppliers SET name = NULL WHERE id = %d", acme.ID),
		fmt.Sprintf("UPDATE parts SET status = NULL WHERE id = %d", bolt.ID),
		fmt.Sprintf("INSERT INTO suppliers (code, name, rating, updated_at, updated_by) VALUES ('X', 'X', 'many', %s)", outsideRow),
	} {
		requireRefused(t, exec, sql, "rating", "name", "status", "integer", "bigint")
	}
	rs, err := st.FindRecords(t.Context(), store.Filter{Kind: kindSupplier})
	if err != nil || len(rs) != 1 || rs[0].Version != acme.Version {
		t.Fatalf("suppliers after the refused writes: %v, %v; want acme at version %d", rs, err, acme.Version)
	}
	if got := mustFind(t, st, kindPart, bolt.ID); got.Version != bolt.Version {
		t.Fatalf("part after the refused writes: version %d, want %d", got.Version, bolt.Version)
	}
}

// testOutsideOffSchema: values of the right type that the schema refuses (an enum value not
// in its list, a text over max_chars, an empty required field, a unique value another record
// has) go through on both stores, as their columns do not check them. tandem reads and
// lists such a record, a save of its other fields goes through (fields nobody changed are
// not sent, so not checked), and a save that writes such a value is refused with the field
// named. A unique key column written directly cannot make two records share a key.
func testOutsideOffSchema(t *testing.T, open OutsideOpener) {
	st, exec := outsideParts(t, open)
	ctx := actx(t, actAlice)
	acme := mustSupplier(t, st, "ACME", "Acme")
	zen := mustSupplier(t, st, "ZEN", "Zenith")
	bolt := mustCreate(t, st, actAlice, kindPart, store.Values{"label": "Bolt", "supplier": acme.ID})
	long := strings.Repeat("L", 40)
	for _, sql := range []string{
		fmt.Sprintf("UPDATE parts SET status = 'bogus' WHERE id = %d", bolt.ID),
		fmt.Sprintf("UPDATE suppliers SET code = '%s', name = '' WHERE id = %d", long, zen.ID),
		fmt.Sprintf("INSERT INTO suppliers (code, name, updated_at, updated_by) VALUES ('acme', 'Twin', %s)", outsideRow),
	} {
		if err := exec(sql); err != nil {
			t.Fatalf("the other program's %q: %v", sql, err)
		}
	}
	requireRefused(t, exec, fmt.Sprintf("UPDATE suppliers SET code_key = (SELECT code_key FROM suppliers WHERE id = %d) WHERE id = %d", acme.ID, zen.ID), "code_key", "unique", "UNIQUE")

	// A unique value another program wrote is taken for tandem's next write at once, not
	// only after a search has written its key.
	moved := mustSupplier(t, st, "MOVED", "Moved")
	if err := exec(fmt.Sprintf("UPDATE suppliers SET code = 'Renamed' WHERE id = %d", moved.ID)); err != nil {
		t.Fatal(err)
	}
	_, err := st.CreateRecord(ctx, kindSupplier, store.Values{"code": "renamed", "name": "Copycat"})
	requireCode(t, err, store.EINVALID)
	requireMessage(t, err, "code")
	_, err = st.UpdateRecord(ctx, kindSupplier, acme.ID, store.Update{BaseVersion: acme.Version, Set: store.Values{"code": "RENAMED"}})
	requireCode(t, err, store.EINVALID)
	mustCreate(t, st, actAlice, kindSupplier, store.Values{"code": "moved", "name": "Takes the old code"})

	rs, err := st.FindRecords(t.Context(), store.Filter{Kind: kindSupplier, Search: "twin"})
	if err != nil || len(rs) != 1 {
		t.Fatalf("search for the supplier another program inserted: %v, %v", rs, err)
	}
	twin := rs[0]
	if twin.Fields["code"] != "acme" {
		t.Fatalf("inserted supplier = %v, want code acme", twin.Fields)
	}
	part := mustFind(t, st, kindPart, bolt.ID)
	if part.Fields["status"] != "bogus" {
		t.Fatalf("part = %v, want the status the other program wrote", part.Fields)
	}
	z := mustFind(t, st, kindSupplier, zen.ID)
	if z.Fields["code"] != long || z.Fields["name"] != "" {
		t.Fatalf("supplier = %v, want the code and name the other program wrote", z.Fields)
	}

	// Saves of the other fields go through.
	part = mustSave(t, st, ctx, kindPart, bolt.ID, store.Update{BaseVersion: part.Version, Set: store.Values{"label": "Bolt M4"}}).Record
	z = mustSave(t, st, ctx, kindSupplier, zen.ID, store.Update{BaseVersion: z.Version, Add: map[string]int64{"rating": 1}}).Record
	twin = mustSave(t, st, ctx, kindSupplier, twin.ID, store.Update{BaseVersion: twin.Version, Set: store.Values{"name": "Twin Ltd"}}).Record

	// Saves that write such a value are refused, naming the field.
	for _, c := range []struct {
		kind store.Kind
		rec  *store.Record
		set  store.Values
		want string
	}{
		{kindPart, part, store.Values{"status": "bogus"}, "status"},
		{kindSupplier, z, store.Values{"code": long}, "code"},
		{kindSupplier, z, store.Values{"name": ""}, "name"},
		{kindSupplier, twin, store.Values{"code": "ACME"}, "code"},
	} {
		_, err := st.UpdateRecord(ctx, c.kind, c.rec.ID, store.Update{BaseVersion: c.rec.Version, Set: c.set})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, c.want)
	}
	// And saves that bring them within the schema go through.
	mustSave(t, st, ctx, kindPart, bolt.ID, store.Update{BaseVersion: part.Version, Set: store.Values{"status": "active"}})
	mustSave(t, st, ctx, kindSupplier, zen.ID, store.Update{BaseVersion: z.Version, Set: store.Values{"code": "ZEN", "name": "Zenith"}})
	mustSave(t, st, ctx, kindSupplier, twin.ID, store.Update{BaseVersion: twin.Version, Set: store.Values{"code": "TWIN"}})
}

// testOutsideTreeCycle: another program may not move a tree kind's record under itself or
// under one of its own descendants, which no move of tandem's makes: a cycle is a tree no
// list, export or move of the kind can walk (an export wrote none of its records).
func testOutsideTreeCycle(t *testing.T, open OutsideOpener) {
	st, exec := outsideParts(t, open)
	top := mustArea(t, st, "Top", nil)
	mid := mustArea(t, st, "Mid", &top.ID)
	low := mustArea(t, st, "Low", &mid.ID)
	other := mustArea(t, st, "Other", nil)
	start := mustLastChangeID(t, st)
	requireRefused(t, exec, fmt.Sprintf("UPDATE areas SET parent_id = %d WHERE id = %d", low.ID, top.ID), "cycle")
	requireRefused(t, exec, fmt.Sprintf("UPDATE areas SET parent_id = %d WHERE id = %d", mid.ID, mid.ID), "")
	requireRefused(t, exec, fmt.Sprintf("INSERT INTO areas (id, name, parent_id, updated_at, updated_by) VALUES (%d, 'Self', %[1]d, %s)", other.ID+10, outsideRow), "")
	if got := mustFind(t, st, kindArea, top.ID); got.Version != top.Version || got.Fields[store.ParentField] != nil {
		t.Fatalf("area after the refused writes: version %d, parent %v; want %d, none", got.Version, got.Fields[store.ParentField], top.Version)
	}
	if cs := mustChanges(t, st, start); len(cs) != 0 {
		t.Fatalf("refused outside writes logged changes: %+v", cs)
	}
	// A move that makes no cycle goes through.
	if err := exec(fmt.Sprintf("UPDATE areas SET parent_id = %d WHERE id = %d", other.ID, mid.ID)); err != nil {
		t.Fatalf("outside move under an unrelated area: %v", err)
	}
}

// testOutsideLongName: a kind whose table name is as long as a schema allows has every
// outside-write trigger. PostgreSQL cuts a name at 63 bytes, and the triggers' names (the
// table's and a suffix) became one another: each replaced the one before, and an outside
// insert failed while an update went unlogged.
func testOutsideLongName(t *testing.T, open OutsideOpener) {
	kind := store.Kind("k" + strings.Repeat("x", 46))
	reg, err := store.ParseRegistry("long.yaml", []byte("kinds:\n  "+string(kind)+":\n    fields:\n      - {name: n, type: string, owner: editor, rule: scalar}\n"))
	if err != nil {
		t.Fatal(err)
	}
	st, exec, actor := openOutsideWith(t, open, store.Options{Registry: reg})
	table := string(kind) + "s"
	if err := exec("INSERT INTO " + table + " (n, updated_at, updated_by) VALUES ('outside', " + outsideRow + ")"); err != nil {
		t.Fatalf("outside insert: %v", err)
	}
	recs, err := st.FindRecords(t.Context(), store.Filter{Kind: kind})
	if err != nil || len(recs) != 1 {
		t.Fatalf("records after the outside insert: %v, %v", recs, err)
	}
	id := recs[0].ID
	if err := exec(fmt.Sprintf("UPDATE %s SET n = 'changed' WHERE id = %d", table, id)); err != nil {
		t.Fatalf("outside update: %v", err)
	}
	hs, err := st.FindHistory(t.Context(), kind, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 || hs[0].Actor != actor || hs[0].Snapshot["n"] != "changed" {
		t.Fatalf("history after an outside insert and update: %+v, want 2 versions by %s", hs, actor)
	}
}
