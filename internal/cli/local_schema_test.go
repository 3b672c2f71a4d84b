package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLocal_OwnRecords: --local on a store of kinds of its own makes a copy that runs the
// source's schema (as tandem clone does), and a create with a ref made in it lands on the
// source.
func TestLocal_OwnRecords(t *testing.T) {
	parts, err := filepath.Abs("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dsn := filepath.Join(dir, "parts.db")
	mustTandem(t, dsn, "init", "--schema", parts)
	mustTandem(t, dsn, "create", "supplier", "code=ACME", "name=Acme")
	local := func(args ...string) result {
		t.Helper()
		c := tandemCmd(dsn, append([]string{"--local"}, args...)...)
		c.Env = append(c.Env, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
		return runResult(t, c, args)
	}
	r := local("create", "part", "label=Bolt", "supplier=1")
	wantExit(t, "--local create of a part", r, 0, "pushed to the source")
	if out := mustTandem(t, dsn, "list", "part"); !strings.Contains(out, "Bolt") {
		t.Fatalf("the part made with --local is not on the source:\n%s", out)
	}
	r = local("list", "supplier")
	wantExit(t, "--local list of suppliers", r, 0, "Acme")
}
