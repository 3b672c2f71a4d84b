package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// pgRoleDSN makes a login role of the test server with every right on the store dsn's
// schema (dropped when the test ends) and returns its name and dsn connecting as it.
func pgRoleDSN(t *testing.T, dsn string) (string, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := cfg.RuntimeParams["search_path"]
	role := schema + "_carol"
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.ServerDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	r, s := pgx.Identifier{role}.Sanitize(), pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{"CREATE ROLE " + r + " LOGIN", "GRANT ALL ON SCHEMA " + s + " TO " + r,
		"GRANT ALL ON ALL TABLES IN SCHEMA " + s + " TO " + r, "GRANT ALL ON ALL SEQUENCES IN SCHEMA " + s + " TO " + r} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, pgtest.ServerDSN(t))
		if err != nil {
			t.Errorf("drop role %s: %v", role, err)
			return
		}
		defer c.Close(ctx)
		for _, q := range []string{"DROP OWNED BY " + r, "DROP ROLE " + r} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return role, u.String()
}

// TestCLI_UserFromDB: on a direct PostgreSQL connection, with --user-from-db or identity:
// database in the config file, who writes is the database role the connection
// authenticated as (session_user): $TANDEM_USER does not change it, --user naming another
// is refused (exit 2) and writes nothing; on a SQLite file the flag is refused and the
// config's identity leaves --user in charge.
func TestCLI_UserFromDB(t *testing.T) {
	dsn := pgtest.DSN(t)
	mustTandem(t, dsn, "init")
	role, carol := pgRoleDSN(t, dsn)
	p := mustCreate(t, dsn, "product", "sku=ID-1", "name=Identity", "price=1")

	wantExit(t, "a save as the database role", tandem(t, carol, "--user-from-db", "adjust", "product", fmt.Sprint(p.ID), "stock", "+1"), 0)
	if got := mustGet(t, dsn, "product", p.ID); got.UpdatedBy != role || got.Version != 2 {
		t.Fatalf("after --user-from-db: v%d by %q; want v2 by %q (not $TANDEM_USER)", got.Version, got.UpdatedBy, role)
	}
	wantExit(t, "--user beside --user-from-db", tandem(t, carol, "--user-from-db", "--user", "mallory", "adjust", "product", fmt.Sprint(p.ID), "stock", "+1"),
		2, `--user "mallory" cannot be given`, fmt.Sprintf("the database role you connect as, %q", role))

	config := t.TempDir()
	if err := os.MkdirAll(filepath.Join(config, "tandem"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "tandem", "config.yaml"), []byte("identity: database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withConfig := func(dsn string, args ...string) result {
		cmd := tandemCmd(dsn, args...)
		cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+config)
		return runResult(t, cmd, args)
	}
	wantExit(t, "a set under identity: database", withConfig(carol, "set", "product", fmt.Sprint(p.ID), "name=Carol's", "--expect-version", "2"), 0)
	wantExit(t, "--user under identity: database", withConfig(carol, "--user", "mallory", "set", "product", fmt.Sprint(p.ID), "name=Mallory's", "--expect-version", "3"),
		2, `--user "mallory" cannot be given`)
	if got := mustGet(t, dsn, "product", p.ID); got.UpdatedBy != role || got.Version != 3 || got.Fields["name"] != "Carol's" {
		t.Fatalf("after identity: database: v%d by %q named %v; want v3 by %q named Carol's", got.Version, got.UpdatedBy, got.Fields["name"], role)
	}

	file := newSQLiteStore(t)
	q := mustCreate(t, file, "product", "sku=ID-2", "name=Local", "price=1")
	wantExit(t, "--user-from-db on SQLite", tandem(t, file, "--user-from-db", "adjust", "product", fmt.Sprint(q.ID), "stock", "+1"),
		2, "needs a PostgreSQL store")
	wantExit(t, "identity: database on SQLite", withConfig(file, "--user", "dora", "adjust", "product", fmt.Sprint(q.ID), "stock", "+1"), 0)
	if got := mustGet(t, file, "product", q.ID); got.UpdatedBy != "dora" {
		t.Fatalf("on SQLite under identity: database: by %q; want dora", got.UpdatedBy)
	}
}
