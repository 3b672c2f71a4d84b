package postgres_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
	storetest.RunOutside(t, func(t *testing.T, opts store.Options) (store.Store, func(string) error, string) {
		db, err := postgres.Open(t.Context(), pgtest.DSN(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(cli, server, "-Atc", "SELECT session_user").Output()
		if err != nil {
			t.Fatalf("psql: %v", err)
		}
		role := strings.TrimSpace(string(out))
		run := func(sql string) error {
			script := "SET search_path TO \"" + db.Schema() + "\"" + ";\n" + sql
			if out, err := exec.Command(cli, server, "-v", "ON_ERROR_STOP=1", "-c", script).CombinedOutput(); err != nil {
				return fmt.Errorf("psql: %v: %s", err, out)
			}
			return nil
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
		DROP TABLE outside_refold; DELETE FROM schema_migrations WHERE version >= 13`)

	db, err = postgres.Open(t.Context(), dsn, store.Options{})
	if err != nil {
		t.Fatalf("open the version-12 schema: %v", err)
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

// TestDB_OutsideFeedOrder: an outside write takes its change id inside its own transaction
// and holds the change log's writer lock until it ends, as tandem's writes do, so a tandem
// save that commits while the outside transaction is still open is not delivered before the
// outside change: the feed waits, then delivers both in id order.
func TestDB_OutsideFeedOrder(t *testing.T) {
	server := pgtest.ServerDSN(t)
	db, err := postgres.Open(t.Context(), pgtest.DSN(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	a, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "A", "name": "A"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "B", "name": "B"})
	if err != nil {
		t.Fatal(err)
	}
	last, err := db.LastChangeID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	feed, err := db.Subscribe(t.Context(), last)
	if err != nil {
		t.Fatal(err)
	}

	other, err := pgx.Connect(t.Context(), server)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	outside, err := other.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := outside.Exec(t.Context(), `SET LOCAL search_path TO "`+db.Schema()+`"`); err != nil {
		t.Fatal(err)
	}
	if _, err := outside.Exec(t.Context(), "UPDATE products SET name = 'A outside' WHERE id = $1", a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(ctx, store.KindProduct, b.ID, store.Update{BaseVersion: b.Version, Set: store.Values{"name": "B saved"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-feed:
		t.Fatalf("the feed delivered %+v while an outside write with a lower change id was still open", c)
	case <-time.After(1500 * time.Millisecond):
	}
	if err := outside.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for len(got) < 2 {
		select {
		case c := <-feed:
			got = append(got, c.RecordID)
		case <-time.After(20 * time.Second):
			t.Fatalf("the feed delivered %v, want products %d then %d", got, a.ID, b.ID)
		}
	}
	if got[0] != a.ID || got[1] != b.ID {
		t.Fatalf("the feed delivered products %v, want %d (outside, lower id) then %d", got, a.ID, b.ID)
	}
}

// TestDB_OutsideVersionNeverFalls: another program that sets a record's version lower is
// refused, as on SQLite: a lower version would let a stale save pass without a conflict.
func TestDB_OutsideVersionNeverFalls(t *testing.T) {
	server := pgtest.ServerDSN(t)
	cli, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("no psql command to write the store as another program")
	}
	db, err := postgres.Open(t.Context(), pgtest.DSN(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	psql := func(sql string) error {
		script := "SET search_path TO \"" + db.Schema() + "\"" + ";\n" + sql
		if out, err := exec.Command(cli, server, "-v", "ON_ERROR_STOP=1", "-c", script).CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	rec, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "V-1", "name": "One"})
	if err != nil {
		t.Fatal(err)
	}
	if err := psql(fmt.Sprintf("UPDATE products SET name = 'Outside' WHERE id = %d", rec.ID)); err != nil {
		t.Fatal(err)
	}
	err = psql(fmt.Sprintf("UPDATE products SET version = %d WHERE id = %d", rec.Version, rec.ID))
	if err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("an outside update lowering the version: err %v, want a refusal naming the version", err)
	}
	_, err = db.UpdateRecord(ctx, store.KindProduct, rec.ID, store.Update{BaseVersion: rec.Version, Set: store.Values{"name": "Alice"}})
	if store.ErrorCode(err) != store.ECONFLICT {
		t.Errorf("stale save after the outside write: %v, want a conflict", err)
	}
}
