package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binary is the tandem binary built once by TestMain; the CLI tests run it as real OS
// processes.
var binary string

// testDir holds the binary and the template stores (templates_test.go), removed at the end.
var testDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tandem-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "make temp dir:", err)
		os.Exit(1)
	}
	testDir = dir
	binary = filepath.Join(dir, "tandem")
	build := exec.Command("go", "build", "-o", binary, "github.com/tandem-editor/tandem")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tandem:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
