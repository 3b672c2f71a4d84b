package postgres_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_Outside runs the outside-write checks with a real psql process writing the schema,
// as the server's role (session_user, which history names).
func TestDB_Outside(t *testing.T) {
	server := pgtest.ServerDSN(t)
	cli, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("no psql command to write the store as another program")
	}
	storetest.RunOutside(t, func(t *testing.T) (store.Store, func(string), string) {
		db, err := postgres.Open(t.Context(), pgtest.DSN(t), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(cli, server, "-Atc", "SELECT session_user").Output()
		if err != nil {
			t.Fatalf("psql: %v", err)
		}
		role := strings.TrimSpace(string(out))
		run := func(sql string) {
			t.Helper()
			script := "SET search_path TO \"" + db.Schema() + "\"" + ";\n" + sql
			if out, err := exec.Command(cli, server, "-v", "ON_ERROR_STOP=1", "-c", script).CombinedOutput(); err != nil {
				t.Fatalf("psql %q: %v\n%s", sql, err, out)
			}
		}
		return db, run, role
	})
}

// TestOpen_OutsideTriggersOnUpgrade: a schema made before outside writes were seen (no
// triggers, no refold queue, schema version 11) gets them when a tandem opens it.
func TestOpen_OutsideTriggersOnUpgrade(t *testing.T) {
	server := pgtest.ServerDSN(t)
	cli, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("no psql command to write the store as another program")
	}
	dsn := pgtest.DSN(t)
	db, err := postgres.Open(t.Context(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema := db.Schema()
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	rec, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "OLD-1", "name": "Old"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	psql := func(sql string) {
		t.Helper()
		script := `SET search_path TO "` + schema + `";` + "\n" + sql
		if out, err := exec.Command(cli, server, "-v", "ON_ERROR_STOP=1", "-c", script).CombinedOutput(); err != nil {
			t.Fatalf("psql %q: %v\n%s", sql, err, out)
		}
	}
	psql(`DO $$ DECLARE r record; BEGIN
		FOR r IN SELECT tgname, tgrelid::regclass AS tbl FROM pg_trigger WHERE tgname LIKE '%\_outside\_%' AND tgrelid::regclass::text IN ('products', 'documents') LOOP
			EXECUTE format('DROP TRIGGER %I ON %s', r.tgname, r.tbl);
		END LOOP; END $$;
		DROP TABLE outside_refold; DELETE FROM schema_migrations WHERE version >= 12`)

	db, err = postgres.Open(t.Context(), dsn, store.Options{})
	if err != nil {
		t.Fatalf("open the version-11 schema: %v", err)
	}
	defer db.Close()
	psql(fmt.Sprintf("UPDATE products SET name = 'Renamed' WHERE id = %d", rec.ID))
	got, err := db.FindRecord(t.Context(), store.KindProduct, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != rec.Version+1 {
		t.Fatalf("after an outside update of the upgraded schema: version %d, want %d", got.Version, rec.Version+1)
	}
}
