package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// committed is the reference in the repository, relative to this package.
const committed = "../../../docs/cli"

// TestReferenceMatchesCommands regenerates the CLI reference into a temporary directory and
// fails when docs/cli differs from it: a page changed, missing or left over.
func TestReferenceMatchesCommands(t *testing.T) {
	fresh := t.TempDir()
	if err := generate(fresh); err != nil {
		t.Fatal(err)
	}
	want, got := pages(t, fresh), pages(t, committed)
	const fix = "run `go run ./internal/cli/gendocs` from the repository's root to update docs/cli"
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("docs/cli has no %s: %s", name, fix)
			continue
		}
		if read(t, filepath.Join(fresh, name)) != read(t, filepath.Join(committed, name)) {
			t.Errorf("docs/cli/%s is not what the commands say: %s", name, fix)
		}
	}
	for _, name := range got {
		if !slices.Contains(want, name) {
			t.Errorf("docs/cli/%s is no command's page: %s", name, fix)
		}
	}
}

// TestReferenceIsStable: the pages carry no generation date and nothing of the machine
// (the account's name), so every machine and day gives the same files.
func TestReferenceIsStable(t *testing.T) {
	t.Setenv("TANDEM_USER", "someone-else")
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range pages(t, dir) {
		s := read(t, filepath.Join(dir, name))
		if strings.Contains(s, "Auto generated") || strings.Contains(s, "someone-else") {
			t.Errorf("%s depends on the day or the machine:\n%s", name, s)
		}
	}
	if read(t, filepath.Join(dir, "tandem.md")) != read(t, filepath.Join(committed, "tandem.md")) {
		t.Error("tandem.md depends on $TANDEM_USER")
	}
}

// pages returns the names of the markdown files in dir, sorted.
func pages(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	slices.Sort(names)
	return names
}

// read returns the file's content, failing the test when it cannot be read.
func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
