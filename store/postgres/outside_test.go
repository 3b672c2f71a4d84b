package postgres_test

import (
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
