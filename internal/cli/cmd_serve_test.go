package cli

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// newKey makes an ed25519 key for an SSH client in a test.
func newKey(t *testing.T) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// authorized is the authorized_keys line of k.
func authorized(k gossh.PublicKey) string {
	return strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k)))
}

// usersYAML is a users file for name → (role, key line).
func usersYAML(users ...[3]string) string {
	var b strings.Builder
	b.WriteString("users:\n")
	for _, u := range users {
		fmt.Fprintf(&b, "  - name: %s\n    role: %s\n    keys:\n      - %s\n", u[0], u[1], u[2])
	}
	return b.String()
}

// servedProc is a running tandem serve.
type servedProc struct {
	*lineProc
	addr string
}

// startServe runs tandem serve on dsn with the users file at users and the flags extra, on
// a free port, and waits until it listens.
func startServe(t *testing.T, dsn, users string, extra ...string) *servedProc {
	t.Helper()
	p := startLines(t, dsn, append([]string{"serve", "--users", users, "--listen", "127.0.0.1:0"}, extra...)...)
	for {
		l := p.next(t, 30*time.Second)
		if addr, ok := strings.CutPrefix(l, "tandem serve: listening on "); ok {
			addr, _, _ = strings.Cut(addr, " ")
			return &servedProc{lineProc: p, addr: addr}
		}
	}
}

// sshClient connects to addr with key.
func sshClient(addr string, key gossh.Signer) (*gossh.Client, error) {
	return gossh.Dial("tcp", addr, &gossh.ClientConfig{
		User:            "whoever",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(key)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         10 * time.Second,
	})
}

// sshRun runs command in a session without a terminal and returns what it did.
func sshRun(t *testing.T, addr string, key gossh.Signer, command string) result {
	t.Helper()
	return sshRunIn(t, addr, key, command, "")
}

// sshRunIn is sshRun with stdin.
func sshRunIn(t *testing.T, addr string, key gossh.Signer, command, stdin string) result {
	t.Helper()
	c, err := sshClient(addr, key)
	if err != nil {
		t.Fatalf("ssh %s: %v", command, err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var out, errb bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errb
	sess.Stdin = strings.NewReader(stdin)
	err = sess.Run(command)
	code := 0
	var ee *gossh.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitStatus()
	} else if err != nil {
		t.Fatalf("ssh %s: %v", command, err)
	}
	return result{out.String(), errb.String(), code}
}

// TestServe_IdentityAndCommands: a key not in the users file is refused; a known key runs
// CLI commands as its user (exit codes as the SSH exit status), writes history under the
// user's name, cannot change it with --user, and cannot reach the server's files.
func TestServe_IdentityAndCommands(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "team.db")
	madeStoreAt(t, dsn, "seed")
	alice, stranger := newKey(t), newKey(t)
	users := writeFile(t, "users.yaml", usersYAML([3]string{"alice", "editor", authorized(alice.PublicKey())}))
	srv := startServe(t, dsn, users)
	if fi, err := os.Stat(filepath.Join(filepath.Dir(users), "tandem_host_ed25519")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key: %v, %v; want a file of mode 0600", fi, err)
	}

	if c, err := sshClient(srv.addr, stranger); err == nil {
		c.Close()
		t.Fatal("a key not in the users file was let in")
	}

	r := sshRun(t, srv.addr, alice, "list product --json")
	wantExit(t, "list over ssh", r, 0)
	var recs []record
	if err := json.Unmarshal([]byte(r.stdout), &recs); err != nil || len(recs) != 60 {
		t.Fatalf("list --json over ssh: %d records, %v\n%s", len(recs), err, r.stdout)
	}

	wantExit(t, "set over ssh", sshRun(t, srv.addr, alice, "set product 1 price=12.50 --expect-version 1"), 0)
	got := mustGet(t, dsn, "product", 1)
	if got.UpdatedBy != "alice" || got.Version != 2 {
		t.Fatalf("after alice's set over ssh: by %q v%d; want alice v2", got.UpdatedBy, got.Version)
	}
	wantExit(t, "a stale set", sshRun(t, srv.addr, alice, "set product 1 price=13 --expect-version 1"), 3)
	wantExit(t, "get of a missing record", sshRun(t, srv.addr, alice, "get product 999999"), 5)

	wantExit(t, "--user in a session", sshRun(t, srv.addr, alice, "--user mallory set product 2 price=1 --expect-version 1"),
		2, "--user cannot be given over SSH", "you are alice")
	wantExit(t, "--local in a session", sshRun(t, srv.addr, alice, "--local list products"),
		2, "--local cannot be given over SSH")
	wantExit(t, "--db in a session", sshRun(t, srv.addr, alice, "list product --db /etc/other.db"), 2, "--db cannot be given")
	wantExit(t, "a server file into a field", sshRun(t, srv.addr, alice, "set product 2 description=@/etc/passwd --expect-version 1"),
		2, "no file of the server is read")
	wantExit(t, "import of a server file", sshRun(t, srv.addr, alice, "import /etc/passwd"), 2, "stdin only")
	wantExit(t, "export to a server file", sshRun(t, srv.addr, alice, "export product -o /tmp/x.csv"), 2, "stdout only")
	wantExit(t, "clone", sshRun(t, srv.addr, alice, "clone "+dsn+" /tmp/copy.db"), 2, "not served over SSH")
	if v := mustGet(t, dsn, "product", 2).Version; v != 1 {
		t.Fatalf("product 2 is v%d after refused writes; want v1", v)
	}
	r = sshRun(t, srv.addr, alice, "")
	wantExit(t, "a session without a terminal or command", r, 2, "no terminal")
}

// TestServe_BadUsersFile: a users file with a mistake stops serve from starting, with the
// file and line in the message.
func TestServe_BadUsersFile(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "team.db")
	madeStoreAt(t, dsn, "seed")
	k := authorized(newKey(t).PublicKey())
	for _, tc := range []struct{ name, file, want string }{
		{"role", "users:\n  - name: alice\n    role: boss\n    keys: [" + k + "]\n", "users.yaml:3: role \"boss\""},
		{"key", "users:\n  - name: alice\n    role: editor\n    keys:\n      - ssh-ed25519 nonsense\n", "users.yaml:5: key of \"alice\""},
		{"escape in name", "users:\n  - name: \"al\\e[31mice\"\n    role: editor\n    keys: [" + k + "]\n", "users.yaml:2: name: holds control characters"},
		{"one key, two people", "users:\n  - {name: a, role: editor, keys: [" + k + "]}\n  - {name: b, role: viewer, keys: [" + k + "]}\n", "users.yaml:3: key SHA256:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			users := writeFile(t, "users.yaml", tc.file)
			r := tandem(t, dsn, "serve", "--users", users, "--listen", "127.0.0.1:0")
			wantExit(t, "serve with a bad users file", r, 2, tc.want)
		})
	}
}

// TestServe_ReloadAndStop: with sessions open, a users file that drops bob ends bob's
// session with a message and leaves alice's; a bad edit keeps the old file; SIGTERM ends
// alice's session with a message and the server within its bounded wait.
func TestServe_ReloadAndStop(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "team.db")
	madeStoreAt(t, dsn, "seed")
	alice, bob := newKey(t), newKey(t)
	aliceLine := [3]string{"alice", "editor", authorized(alice.PublicKey())}
	users := writeFile(t, "users.yaml", usersYAML(aliceLine, [3]string{"bob", "editor", authorized(bob.PublicKey())}))
	srv := startServe(t, dsn, users)

	as, bs := openServedTUI(t, srv.addr, alice, false), openServedTUI(t, srv.addr, bob, false)

	if err := os.WriteFile(users, []byte(usersYAML(aliceLine)), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bs.done:
	case <-time.After(15 * time.Second):
		t.Fatal("bob's session went on after bob was removed from the users file")
	}
	if !strings.Contains(bs.stderr.String(), "your access to this server was removed") {
		t.Fatalf("bob's session ended without saying why: %q", bs.stderr.String())
	}
	select {
	case err := <-as.done:
		t.Fatalf("alice's session ended when bob was removed: %v", err)
	default:
	}
	if c, err := sshClient(srv.addr, bob); err == nil {
		c.Close()
		t.Fatal("bob's key still let in after the reload")
	}

	// A bad edit is refused and the old file stays: alice can still connect.
	if err := os.WriteFile(users, []byte("users:\n  - name: alice\n    role: boss\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(srv.stderr.String(), "users.yaml:3: role") {
		if time.Now().After(deadline) {
			t.Fatalf("no message for a bad users file; stderr: %s", srv.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantExit(t, "alice after a bad edit", sshRun(t, srv.addr, alice, "get product 1"), 0)

	// alice opens product 1 with a lease (e); SIGTERM must release it, not leave it to
	// its TTL.
	fmt.Fprint(as.stdin, "e")
	deadline = time.Now().Add(15 * time.Second)
	for ls := mustLocks(t, dsn); len(ls) == 0 || ls[0].State == "released"; ls = mustLocks(t, dsn) {
		if time.Now().After(deadline) {
			t.Fatal("alice's e took no lease")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if l := mustLocks(t, dsn)[0]; l.Holder != "alice" {
		t.Fatalf("the lease is held by %q; want alice", l.Holder)
	}
	if code := srv.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exited %d on SIGTERM; stderr: %s", code, srv.stderr)
	}
	select {
	case <-as.done:
	case <-time.After(15 * time.Second):
		t.Fatal("alice's session went on after the server stopped")
	}
	if !strings.Contains(as.stderr.String(), "the server is stopping") {
		t.Fatalf("alice's session ended without saying why: %q", as.stderr.String())
	}
	for _, l := range mustLocks(t, dsn) {
		if l.State != "released" {
			t.Fatalf("a lease left %s after SIGTERM, not released: %+v", l.State, l)
		}
	}
}

// TestServe_Viewer: a viewer's session reads, and every write of theirs is refused by the
// store (exit 6, naming what the role allows), over the CLI and in the TUI, which says read
// only in its list before anyone types.
func TestServe_Viewer(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "team.db")
	madeStoreAt(t, dsn, "seed")
	vic := newKey(t)
	users := writeFile(t, "users.yaml", usersYAML([3]string{"vic", "viewer", authorized(vic.PublicKey())}))
	srv := startServe(t, dsn, users)

	wantExit(t, "a viewer's get", sshRun(t, srv.addr, vic, "get product 1 --json"), 0)
	for _, cmd := range []string{
		"set product 1 price=1 --expect-version 1",
		"adjust product 1 stock +1",
		"create product sku=V-1 name=n price=1",
		"delete product 1 --expect-version 1",
		"lease acquire product 1",
	} {
		wantExit(t, cmd, sshRun(t, srv.addr, vic, cmd), 6, `"vic" may read but not write (role viewer: reads records, writes none)`)
	}
	export := sshRun(t, srv.addr, vic, "export product --format csv")
	wantExit(t, "a viewer's export", export, 0)
	edited := strings.Replace(export.stdout, "product,1,1,", "product,1,1,X", 1)
	wantExit(t, "a viewer's import", sshRunIn(t, srv.addr, vic, "import - --format csv", edited), 6, `import: "vic" may read but not write`)
	wantExit(t, "a viewer's dry run", sshRunIn(t, srv.addr, vic, "import - --format csv --dry-run", edited), 0)
	if got := mustGet(t, dsn, "product", 1); got.Version != 1 {
		t.Fatalf("product 1 is v%d after a viewer's writes; want v1", got.Version)
	}
	if n := countRecords(t, dsn, "product"); n != 60 {
		t.Fatalf("%d products after a viewer's create; want 60", n)
	}

	c, err := sshClient(srv.addr, vic)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	out := new(syncBuf)
	sess.Stdout = out
	stdin, _ := sess.StdinPipe()
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitOut := func(want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("the viewer's TUI never showed %q", want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The editor's read-only header is checked in a real terminal (TestE2E_ServeOverOpenSSH):
	// a frame drawn over another is written in pieces.
	waitOut("vic (read only)")
	stdin.Close()
}
