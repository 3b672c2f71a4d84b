// Package pgtest gives tests a PostgreSQL schema of their own on the test server named by
// TANDEM_TEST_POSTGRES. It is imported only by tests, so the tandem binary never links the
// testing package; it does not import store/postgres, so that package's own tests can use it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env is the environment variable that names the PostgreSQL server tests run against,
// for example postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const Env = "TANDEM_TEST_POSTGRES"

// ServerDSN returns the DSN of the test server from TANDEM_TEST_POSTGRES. When it is unset
// the test is skipped, or fails when CI=true: CI must never pass with PostgreSQL untested.
func ServerDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set but CI=true: the PostgreSQL tests must run in CI; see docs/testing.md", Env)
		}
		t.Skipf("%s not set; see docs/testing.md", Env)
	}
	return dsn
}

// DSN creates a fresh, empty schema on the test server (see ServerDSN), drops it with
// everything in it when the test ends, and returns a DSN whose search_path selects it. Stores
// opened on the DSN, in this process or in child processes, see only that schema, and their
// change feeds use a channel of their own. Close stores before the test ends (t.Cleanup
// registered after DSN runs first).
func DSN(t testing.TB) string {
	t.Helper()
	base := ServerDSN(t)
	schema := "tandem_t_" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to the test server: %s", scrub(err.Error(), base))
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("create test schema %s: %v", schema, err)
	}
	t.Cleanup(func() { dropSchema(t, base, schema) })
	dsn, err := WithSearchPath(base, schema)
	if err != nil {
		t.Fatalf("test DSN: %v", err)
	}
	return dsn
}

// dropSchema drops a test schema, first ending sessions still using it (a killed child
// process's connection may linger and hold locks). The store names its sessions
// "<prefix><schema>", so a session whose application_name ends in the schema is one of them.
func dropSchema(t testing.TB, base, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Errorf("drop test schema %s: %s", schema, scrub(err.Error(), base))
		return
	}
	defer conn.Close(context.Background())
	_, _ = conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND application_name LIKE '%' || $1`, schema)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
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

// scrub removes the DSN's password from a driver message.
func scrub(msg, dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			return strings.ReplaceAll(msg, p, "xxxxx")
		}
	}
	return msg
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
