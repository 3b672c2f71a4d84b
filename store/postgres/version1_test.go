package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// mustVersion1 writes a schema at dsn as tandem 1 left it: the first migration only,
// recorded as version 1, then the given statements (its records). Migration tests open it to
// see the later migrations upgrade real old data.
func mustVersion1(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ms, err := migrations()
	if err != nil || len(ms) == 0 || ms[0].version != 1 {
		t.Fatalf("migrations = %v, %v", ms, err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	for _, q := range append([]string{
		ms[0].sql,
		"CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO schema_migrations (version) VALUES (1)",
	}, stmts...) {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("build a version 1 schema: %.60s: %v", q, err)
		}
	}
}
