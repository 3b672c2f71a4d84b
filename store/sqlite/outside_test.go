package sqlite_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_Outside runs the outside-write checks with a real sqlite3 process writing the file.
func TestDB_Outside(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to write the store as another program")
	}
	storetest.RunOutside(t, func(t *testing.T, opts store.Options) (store.Store, func(string) error, string) {
		path := filepath.Join(t.TempDir(), "tandem.db")
		db, err := sqlite.Open(t.Context(), path, opts)
		if err != nil {
			t.Fatal(err)
		}
		run := func(sql string) error {
			if out, err := exec.Command(cli, "-bail", "-cmd", ".timeout 10000", path, sql).CombinedOutput(); err != nil {
				return fmt.Errorf("sqlite3: %v: %s", err, out)
			}
			return nil
		}
		return db, run, store.OutsideActor
	})
}

// TestOpen_OutsideTriggersOnUpgrade: a store made before outside writes were seen (no
// triggers, no refold queue, schema version 13) gets them when a tandem opens it.
func TestOpen_OutsideTriggersOnUpgrade(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to write the store as another program")
	}
	path := filepath.Join(t.TempDir(), "tandem.db")
	db, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	rec, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "OLD-1", "name": "Old"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	sqlite3 := func(sql string) string {
		t.Helper()
		out, err := exec.Command(cli, "-bail", "-cmd", ".timeout 10000", path, sql).CombinedOutput()
		if err != nil {
			t.Fatalf("sqlite3 %q: %v\n%s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, name := range strings.Fields(sqlite3(`SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\_outside\_%' ESCAPE '\'`)) {
		sqlite3("DROP TRIGGER " + name)
	}
	sqlite3("DROP TABLE outside_refold; PRAGMA user_version = 14")

	db, err = sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatalf("open the version-14 store: %v", err)
	}
	defer db.Close()
	sqlite3(fmt.Sprintf("UPDATE products SET name = 'Renamed' WHERE id = %d", rec.ID))
	got, err := db.FindRecord(t.Context(), store.KindProduct, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != rec.Version+1 || got.UpdatedBy != store.OutsideActor {
		t.Fatalf("after an outside update of the upgraded store: version %d by %s, want %d by %s",
			got.Version, got.UpdatedBy, rec.Version+1, store.OutsideActor)
	}
}

// TestDB_OutsideVersionNeverFalls: another program that sets a record's version lower is
// refused. A lower version would let a save that read the record before the program's
// write (and expects that old version) pass, overwriting the write silently.
func TestDB_OutsideVersionNeverFalls(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to write the store as another program")
	}
	path := filepath.Join(t.TempDir(), "tandem.db")
	db, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	rec, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "V-1", "name": "One"})
	if err != nil {
		t.Fatal(err)
	}
	sqlite3 := func(sql string) error {
		out, err := exec.Command(cli, "-bail", "-cmd", ".timeout 10000", path, sql).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	if err := sqlite3(fmt.Sprintf("UPDATE products SET name = 'Outside' WHERE id = %d", rec.ID)); err != nil {
		t.Fatal(err)
	}
	err = sqlite3(fmt.Sprintf("UPDATE products SET version = %d WHERE id = %d", rec.Version, rec.ID))
	if err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("an outside update lowering the version: err %v, want a refusal naming the version", err)
	}
	got, err := db.FindRecord(t.Context(), store.KindProduct, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != rec.Version+1 {
		t.Fatalf("version %d after the outside write, want %d", got.Version, rec.Version+1)
	}
	// The stale save of alice, who read version 1, must conflict.
	_, err = db.UpdateRecord(ctx, store.KindProduct, rec.ID, store.Update{BaseVersion: rec.Version, Set: store.Values{"name": "Alice"}})
	if store.ErrorCode(err) != store.ECONFLICT {
		t.Errorf("stale save after the outside write: %v, want a conflict", err)
	}
}

// TestDB_OutsideTimeReadable: an outside insert with a time tandem cannot read (sqlite3's
// datetime('now')) gets the time of the write, and an outside update to such a time is
// refused, so that listing the kind keeps working.
func TestDB_OutsideTimeReadable(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to write the store as another program")
	}
	path := filepath.Join(t.TempDir(), "tandem.db")
	db, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sqlite3 := func(sql string) error {
		out, err := exec.Command(cli, "-bail", "-cmd", ".timeout 10000", path, sql).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	if err := sqlite3("INSERT INTO products (sku, name, version, updated_at, updated_by) VALUES ('DT-1', 'Dt', 1, datetime('now'), 'bob')"); err != nil {
		t.Fatal(err)
	}
	recs, err := db.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct})
	if err != nil || len(recs) != 1 || recs[0].UpdatedAt.IsZero() {
		t.Fatalf("list after an outside insert with datetime('now'): %v, %v", recs, err)
	}
	err = sqlite3(fmt.Sprintf("UPDATE products SET updated_at = 'soon' WHERE id = %d", recs[0].ID))
	if err == nil || !strings.Contains(err.Error(), "updated_at") {
		t.Errorf("an outside update of updated_at to 'soon': %v, want a refusal naming updated_at", err)
	}
	if _, err := db.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct}); err != nil {
		t.Errorf("list after the refused update: %v", err)
	}
}

// TestOpen_OutsideTriggersFrom15: a store of schema version 15, whose triggers saw an
// outside update field by field (a trigger per field, a staging table per record table),
// gets the three triggers per table of version 16 when a tandem opens it: the old ones and
// their staging tables are gone, and outside writes are seen as before.
func TestOpen_OutsideTriggersFrom15(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to write the store as another program")
	}
	path := filepath.Join(t.TempDir(), "tandem.db")
	db, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	rec, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "OLD-15", "name": "Old"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	sqlite3 := func(sql string) string {
		t.Helper()
		out, err := exec.Command(cli, "-bail", "-cmd", ".timeout 10000", path, sql).CombinedOutput()
		if err != nil {
			t.Fatalf("sqlite3 %q: %v\n%s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// Version 15's shape: per table a staging table, and per field a trigger that writes it
	// (the staging table's own trigger did the logging; without it the rows stay there).
	for _, name := range strings.Fields(sqlite3(`SELECT name FROM sqlite_master WHERE type IN ('trigger', 'view') AND name LIKE '%\_outside\_%' ESCAPE '\'`)) {
		sqlite3("DROP TRIGGER IF EXISTS " + name + "; DROP VIEW IF EXISTS " + name)
	}
	for _, tbl := range []string{"products", "documents"} {
		sqlite3("CREATE TABLE " + tbl + "_outside_written (record_id INTEGER NOT NULL, version INTEGER NOT NULL, field TEXT NOT NULL, writer TEXT NOT NULL)")
	}
	for _, f := range []string{"name", "price"} {
		sqlite3(`CREATE TRIGGER products_outside_field_` + f + ` AFTER UPDATE OF ` + f + ` ON products
	WHEN NEW.version IS OLD.version AND NOT EXISTS (SELECT 1 FROM pragma_database_list WHERE name = 'tandem_writer') BEGIN
	INSERT INTO products_outside_written (record_id, version, field, writer) VALUES (NEW.id, OLD.version, '` + f + `', 'outside');
END`)
	}
	sqlite3("PRAGMA user_version = 15")

	db, err = sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatalf("open the version-15 store: %v", err)
	}
	defer db.Close()
	if v := db.SchemaVersion(); v < 16 {
		t.Fatalf("schema version %d after the open, want at least 16", v)
	}
	got := sqlite3(`SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE name LIKE 'products\_outside\_%' ESCAPE '\' ORDER BY name)`)
	if got != "products_outside_delete products_outside_insert products_outside_update" {
		t.Fatalf("outside-write objects of products after the upgrade: %q, want the three triggers", got)
	}
	sqlite3(fmt.Sprintf("UPDATE products SET name = 'Renamed', price = 5 WHERE id = %d", rec.ID))
	rec2, err := db.FindRecord(t.Context(), store.KindProduct, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec2.Version != rec.Version+1 || rec2.UpdatedBy != store.OutsideActor || rec2.Fields["name"] != "Renamed" {
		t.Fatalf("after an outside update of the upgraded store: version %d by %s, name %v; want %d by %s, Renamed",
			rec2.Version, rec2.UpdatedBy, rec2.Fields["name"], rec.Version+1, store.OutsideActor)
	}
	hs, err := db.FindHistory(t.Context(), store.KindProduct, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := hs[0]; h.Version != rec.Version+1 || h.Actor != store.OutsideActor || strings.Join(h.Fields, ",") != "name,price" {
		t.Fatalf("newest history version = %+v, want version %d by %s writing name and price", h, rec.Version+1, store.OutsideActor)
	}
	// tandem's own save after it: no outside write logged, the version one higher.
	res, err := db.UpdateRecord(ctx, store.KindProduct, rec.ID, store.Update{BaseVersion: rec2.Version, Set: store.Values{"name": "Mine"}})
	if err != nil || res.Record.Version != rec2.Version+1 || res.Record.UpdatedBy != "alice" {
		t.Fatalf("tandem's save after the upgrade: %+v, %v; want version %d by alice", res, err, rec2.Version+1)
	}
}

// TestDB_OutsideWideKind: on a kind of more fields than one json_array of the triggers takes
// (120: fieldValues puts their values together from pieces), another program's insert is
// logged with every field, its update with the fields it changed (a NULL time given a
// value, a ref set back to NULL among them, a field past the hundredth), and a value of the
// wrong type in a field past the fiftieth, or the hundredth, is refused naming that field
// (issue 24: the checks are shared, outside_values).
func TestDB_OutsideWideKind(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to write the store as another program")
	}
	reg, err := store.ParseRegistry("wide.yaml", []byte(wideSchema(1, 120)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tandem.db")
	db, err := sqlite.Open(t.Context(), path, store.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sqlite3 := func(sql string) (string, error) {
		out, err := exec.Command(cli, "-bail", "-cmd", ".timeout 10000", path, sql).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	must := func(sql string) string {
		t.Helper()
		out, err := sqlite3(sql)
		if err != nil {
			t.Fatalf("sqlite3 %q: %v\n%s", sql, err, out)
		}
		return out
	}
	must(`INSERT INTO kind00s (field00, field55, updated_at, updated_by) VALUES ('a', NULL, '2026-01-01T00:00:00.000Z', 'script')`)
	id := must(`SELECT id FROM kind00s`)
	must(`UPDATE kind00s SET field55 = ` + id + ` WHERE id = ` + id)
	must(`UPDATE kind00s SET field54 = '2026-01-02T00:00:00Z', field55 = NULL, field58 = 9, field114 = 3 WHERE id = ` + id)
	out := must(`SELECT json_array_length(fields) FROM history WHERE kind = 'kind00' AND version = 1; ` +
		`SELECT fields FROM history WHERE kind = 'kind00' ORDER BY version DESC LIMIT 1; SELECT count(*) FROM outside_values`)
	if want := "120\n[\"field114\",\"field54\",\"field55\",\"field58\"]\n0"; out != want {
		t.Fatalf("history of the outside writes (fields created, fields of the last update, rows left):\n%s\nwant\n%s", out, want)
	}
	out, err = sqlite3(`UPDATE kind00s SET field58 = 'many' WHERE id = ` + id)
	if err == nil || !strings.Contains(out, "kind00.field58 must be a whole number") {
		t.Fatalf("an outside update of a whole-number field to text: %v %s; want it refused naming kind00.field58", err, out)
	}
	out, err = sqlite3(`UPDATE kind00s SET field106 = 'many' WHERE id = ` + id)
	if err == nil || !strings.Contains(out, "kind00.field106 must be a whole number") {
		t.Fatalf("an outside update of a whole-number field past the hundredth to text: %v %s; want it refused naming kind00.field106", err, out)
	}
	rec, err := db.FindRecord(t.Context(), "kind00", 1)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != 3 || rec.Fields["field58"] != int64(9) || rec.Fields["field114"] != int64(3) {
		t.Fatalf("the record after the outside writes: version %d, field58 %v, field114 %v; want 3, 9, 3", rec.Version, rec.Fields["field58"], rec.Fields["field114"])
	}
}
