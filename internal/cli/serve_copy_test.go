package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sshKeyFile makes an ed25519 key with ssh-keygen in dir and returns its path and its
// authorized_keys line.
func sshKeyFile(t *testing.T, dir, name string) (path, line string) {
	t.Helper()
	path = filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.TrimSpace(string(pub))
}

// viaSSH runs tandem with the OpenSSH client set to log in with key (TANDEM_SSH).
func viaSSH(t *testing.T, key string, args ...string) result {
	t.Helper()
	cmd := tandemCmd("", args...)
	cmd.Env = append(cmd.Env, "TANDEM_SSH=ssh -i "+key+" -o IdentitiesOnly=yes -o BatchMode=yes"+
		" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")
	return runResult(t, cmd, args)
}

// TestServe_CopyThroughServer: with the real ssh client, a working copy cloned through the
// team server (ssh://HOST:PORT) syncs through it with no database credentials: its edits
// land under the key's user whatever --user the laptop names, the server's saves come back,
// and a viewer's edits are refused by the server's store and wait in the copy as conflicts.
func TestServe_CopyThroughServer(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no OpenSSH client")
	}
	dir := t.TempDir()
	dsn := filepath.Join(dir, "team.db")
	madeStoreAt(t, dsn, "seed")
	aliceKey, aliceLine := sshKeyFile(t, dir, "alice")
	vicKey, vicLine := sshKeyFile(t, dir, "vic")
	users := writeFile(t, "users.yaml", usersYAML([3]string{"alice", "editor", aliceLine}, [3]string{"vic", "viewer", vicLine}))
	srv := startServe(t, dsn, users)
	url := "ssh://" + srv.addr

	copyA := filepath.Join(dir, "alice.db")
	wantExit(t, "clone through the server", viaSSH(t, aliceKey, "clone", url, copyA), 0, "cloned "+url)
	wantExit(t, "an adjust in the copy", viaSSH(t, aliceKey, "--db", copyA, "--user", "mallory", "adjust", "product", "1", "stock", "-2"), 0)
	stock := mustGet(t, dsn, "product", 1).Fields["stock"].(float64)
	mustTandem(t, dsn, "set", "product", "2", "price=9.99", "--expect-version", "1")
	wantExit(t, "sync through the server", viaSSH(t, aliceKey, "--db", copyA, "sync"), 0, "in sync")

	got := mustGet(t, dsn, "product", 1)
	if got.UpdatedBy != "alice" || got.Fields["stock"].(float64) != stock-2 {
		t.Errorf("product 1 on the server: by %q, stock %v; want alice's -2 on %v", got.UpdatedBy, got.Fields["stock"], stock)
	}
	hist := mustTandem(t, dsn, "history", "product", "1")
	if !strings.Contains(hist, "alice (offline copy") || strings.Contains(hist, "mallory") {
		t.Errorf("history of product 1 on the server:\n%s\nwant the push under alice, never mallory", hist)
	}
	if p := mustGet(t, copyA, "product", 2); p.Fields["price"] != "9.99" && p.Fields["price"] != 9.99 {
		t.Errorf("the server's save of product 2 did not reach the copy: price %v", p.Fields["price"])
	}

	copyV := filepath.Join(dir, "vic.db")
	wantExit(t, "a viewer's clone", viaSSH(t, vicKey, "clone", url, copyV), 0)
	before := mustGet(t, dsn, "product", 3).Version
	wantExit(t, "a viewer's edit in the copy", viaSSH(t, vicKey, "--db", copyV, "adjust", "product", "3", "stock", "-1"), 0)
	wantExit(t, "a viewer's sync", viaSSH(t, vicKey, "--db", copyV, "sync"), 3, "may read but not write")
	if v := mustGet(t, dsn, "product", 3).Version; v != before {
		t.Errorf("product 3 is v%d on the server after a viewer's push; want v%d", v, before)
	}

	wantExit(t, "--user naming another through the server", viaSSH(t, aliceKey, "--db", url, "--user", "mallory", "list", "product"),
		2, "you are alice")
	wantExit(t, "a direct command through the server", viaSSH(t, aliceKey, "--db", url, "set", "product", "4", "price=5", "--expect-version", "1"), 0)
	if got := mustGet(t, dsn, "product", 4); got.UpdatedBy != "alice" {
		t.Errorf("product 4 set through --db ssh://: by %q, want alice", got.UpdatedBy)
	}
	wantExit(t, "a password in the address", viaSSH(t, aliceKey, "--db", "ssh://alice:secret@"+srv.addr, "list", "product"), 2, "takes no password")
	wantExit(t, "a path in the address", viaSSH(t, aliceKey, "clone", url+"/other.db", filepath.Join(dir, "x.db")), 2, "serves one store")
	wantExit(t, "init through the server", viaSSH(t, aliceKey, "--db", url, "init"), 2, "made where the server runs")
	stranger, _ := sshKeyFile(t, dir, "stranger")
	r := viaSSH(t, stranger, "--db", url, "list", "product")
	wantExit(t, "an unknown key", r, 1, "Permission denied")
}
