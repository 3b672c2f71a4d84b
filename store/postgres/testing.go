package postgres

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestEnv is the environment variable that names the PostgreSQL server tests run against,
// for example postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const TestEnv = "TANDEM_TEST_POSTGRES"

// TestServerDSN returns the DSN of the test server from TANDEM_TEST_POSTGRES. When it is unset
// the test is skipped, or fails when CI=true: CI must never pass with PostgreSQL untested.
func TestServerDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(TestEnv)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set but CI=true: the PostgreSQL tests must run in CI; see README 'Shared server'", TestEnv)
		}
		t.Skipf("%s not set; see README 'Shared server'", TestEnv)
	}
	return dsn
}

// TestDSN creates a fresh, empty schema on the test server (TANDEM_TEST_POSTGRES, see
// TestServerDSN), drops it with everything in it when the test ends, and returns a DSN whose
// search_path selects it. Stores opened on the DSN, in this process or in child processes,
// see only that schema, and their change feeds use a channel of their own. Close stores
// before the test ends (t.Cleanup registered after TestDSN runs first).
func TestDSN(t testing.TB) string {
	t.Helper()
	base := TestServerDSN(t)
	schema := "tandem_t_" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to the test server %s: %s", redactDSN(base), redactSecret(err.Error(), dsnPassword(base)))
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+ident(schema)); err != nil {
		t.Fatalf("create test schema %s: %v", schema, err)
	}
	t.Cleanup(func() { dropTestSchema(t, base, schema) })
	dsn, err := WithSearchPath(base, schema)
	if err != nil {
		t.Fatalf("test DSN: %v", err)
	}
	return dsn
}

// dropTestSchema drops a test schema, first ending sessions still using it (a killed child
// process's connection may linger and hold locks).
func dropTestSchema(t testing.TB, base, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Errorf("drop test schema %s: %s", schema, redactSecret(err.Error(), dsnPassword(base)))
		return
	}
	defer conn.Close(context.Background())
	_, _ = conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND application_name IN ($1, $2)`,
		appName(clientAppNamePrefix, schema), appName(listenAppNamePrefix, schema))
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident(schema)+" CASCADE"); err != nil {
		t.Errorf("drop test schema %s: %v", schema, err)
	}
}

// WithSearchPath returns dsn with its search_path set to schema, so a store opened on it
// lives in that schema. It accepts URL DSNs (postgres://...) and key=value DSNs.
func WithSearchPath(dsn, schema string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " search_path=" + schema, nil
}

// redactDSN returns user@host:port/db for a DSN, or a placeholder if it does not parse.
func redactDSN(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	return describe(cfg.Config)
}
