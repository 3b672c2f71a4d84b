package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mustVersion1 writes a database at path as tandem 1 left it: the first migration only, at
// user_version 1, then the given statements (its records). Migration tests open it to see the
// later migrations upgrade real old data.
func mustVersion1(t *testing.T, path string, stmts ...string) {
	t.Helper()
	args := make([][]any, len(stmts))
	for i, q := range stmts {
		args[i] = []any{q}
	}
	mustVersion(t, path, 1, args...)
}

// mustVersion writes a database at path at schema version: the migrations' scripts up to
// that version on an empty file, at that user_version, then stmts (its records), each the
// SQL followed by its arguments. The scripts' Go parts (fillFolds, fillSKUKeys) have nothing
// to do on empty tables: the statements write the columns that version's tandem wrote.
func mustVersion(t *testing.T, path string, version int, stmts ...[]any) {
	t.Helper()
	names, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var script [][]any
	for _, name := range names { // Glob sorts them
		num, _, _ := strings.Cut(filepath.Base(name), "_")
		if v, err := strconv.Atoi(num); err != nil || v > version {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		script = append(script, []any{string(b)})
	}
	script = append(script, []any{"PRAGMA user_version = " + strconv.Itoa(version)})
	for _, s := range append(script, stmts...) {
		if _, err := raw.Exec(s[0].(string), s[1:]...); err != nil {
			t.Fatalf("build a version %d database: %.60s: %v", version, s[0], err)
		}
	}
}
