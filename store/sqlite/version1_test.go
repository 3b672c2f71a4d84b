package sqlite_test

import (
	"database/sql"
	"os"
	"testing"
)

// mustVersion1 writes a database at path as tandem 1 left it: the first migration only, at
// user_version 1, then the given statements (its records). Migration tests open it to see the
// later migrations upgrade real old data.
func mustVersion1(t *testing.T, path string, stmts ...string) {
	t.Helper()
	initSQL, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range append([]string{string(initSQL), "PRAGMA user_version = 1"}, stmts...) {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("build a version 1 database: %.60s: %v", q, err)
		}
	}
}
