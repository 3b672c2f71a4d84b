package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSourceLocation: a working copy keeps where its source is, never its password.
func TestSourceLocation(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://alice:s3cret@db.example:5432/tandem?sslmode=require": "postgres://alice@db.example:5432/tandem?sslmode=require",
		"postgresql://bob@db/x?password=s3cret&sslmode=disable":          "postgresql://bob@db/x?sslmode=disable",
		"host=db password='s3cret' dbname=tandem":                        "host=db dbname=tandem",
	} {
		got, err := sourceLocation(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if got != want || strings.Contains(got, "s3cret") {
			t.Errorf("sourceLocation(%q) = %q, want %q", dsn, got, want)
		}
	}
	got, err := sourceLocation("team.db")
	if err != nil || !filepath.IsAbs(got) || filepath.Base(got) != "team.db" {
		t.Errorf("sourceLocation(team.db) = %q, %v; want an absolute path", got, err)
	}
}
