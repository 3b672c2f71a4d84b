package serve

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

func testKey(t *testing.T) gossh.Signer {
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

func usersFile(users ...[3]string) string {
	var b strings.Builder
	b.WriteString("users:\n")
	for _, u := range users {
		fmt.Fprintf(&b, "  - name: %s\n    role: %s\n    keys:\n      - %s", u[0], u[1], gossh.MarshalAuthorizedKey(mustKey(u[2])))
	}
	return b.String()
}

var keys sync.Map // name → gossh.Signer, for usersFile

func mustKey(name string) gossh.PublicKey {
	k, _ := keys.Load(name)
	return k.(gossh.Signer).PublicKey()
}

// TestServer_InProcess: an in-process server on a memory store, with x/crypto clients run
// concurrently (under -race): a command runs with the actor its key proves, whatever login
// name the client gives; an unknown key is refused; a reload that removes a user ends their
// open session with a message and refuses their key; stopping ends the rest.
func TestServer_InProcess(t *testing.T) {
	dir := t.TempDir()
	alice, bob := testKey(t), testKey(t)
	keys.Store("alice", alice)
	keys.Store("bob", bob)
	users := filepath.Join(dir, "users.yaml")
	if err := os.WriteFile(users, []byte(usersFile([3]string{"alice", "editor", "alice"}, [3]string{"bob", "viewer", "bob"})), 0o600); err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	srv, err := New(Config{
		Listen: "127.0.0.1:0", HostKey: filepath.Join(dir, "host"), Users: users,
		Store: memory.New(store.Options{}),
		Command: func(ctx context.Context, _ store.Store, args []string, _ io.Reader, stdout, _ io.Writer) int {
			a, err := store.ActorFrom(ctx)
			if err != nil {
				return 1
			}
			fmt.Fprintf(stdout, "%s|%s|%s", a.Name, a.ReadOnly, strings.Join(args, " "))
			if args[0] == "wait" {
				select {
				case <-ctx.Done():
				case <-block:
				}
			}
			return 7
		},
		Poll: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() { stop(); <-served }()

	dial := func(k gossh.Signer) (*gossh.Client, error) {
		return gossh.Dial("tcp", srv.Addr().String(), &gossh.ClientConfig{
			User: "root", Auth: []gossh.AuthMethod{gossh.PublicKeys(k)},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
		})
	}
	run := func(k gossh.Signer, cmd string) (string, string, int) {
		c, err := dial(k)
		if err != nil {
			t.Errorf("dial: %v", err)
			return "", "", -1
		}
		defer c.Close()
		s, err := c.NewSession()
		if err != nil {
			t.Errorf("session: %v", err)
			return "", "", -1
		}
		var out, errb bytes.Buffer
		s.Stdout, s.Stderr = &out, &errb
		err = s.Run(cmd)
		var ee *gossh.ExitError
		if errors.As(err, &ee) {
			return out.String(), errb.String(), ee.ExitStatus()
		}
		if err != nil {
			t.Errorf("run %s: %v", cmd, err)
		}
		return out.String(), errb.String(), 0
	}

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, want := alice, "alice||list product"
			if i%2 == 1 {
				k, want = bob, "bob|role viewer: reads records, writes none|list product"
			}
			if out, _, code := run(k, "list product"); out != want || code != 7 {
				t.Errorf("session %d: %q exit %d; want %q exit 7", i, out, code, want)
			}
		}()
	}
	wg.Wait()
	if c, err := dial(testKey(t)); err == nil {
		c.Close()
		t.Fatal("an unknown key was let in")
	}

	// bob's session is open when the file drops him.
	c, err := dial(bob)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	s.Stderr = &errb
	done := make(chan error, 1)
	if err := s.Start("wait"); err != nil {
		t.Fatal(err)
	}
	go func() { done <- s.Wait() }()
	time.Sleep(100 * time.Millisecond) // not a timing assertion: lets the session register
	if err := os.WriteFile(users, []byte(usersFile([3]string{"alice", "editor", "alice"})), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("bob's session went on after he was removed")
	}
	if !strings.Contains(errb.String(), "your access to this server was removed") {
		t.Fatalf("bob's session ended saying %q", errb.String())
	}
	if c, err := dial(bob); err == nil {
		c.Close()
		t.Fatal("bob's key still let in after the reload")
	}
	close(block)
}

// TestLoadUsers_Errors: each mistake in a users file is named with its line (an unknown
// kind in a user's limits with the user's name); a name that would reach every session's
// terminal with an escape sequence (ESC, the 8-bit CSI, BEL, a bidirectional override) is
// refused before it can.
func TestLoadUsers_Errors(t *testing.T) {
	k := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(testKey(t).PublicKey())))
	for _, tc := range []struct{ file, want string }{
		{"users: []\nextra: 1\n", "u.yaml:2: unknown key \"extra\""},
		{"users:\n  - name: a\n    role: editor\n", "u.yaml:2: user \"a\" has no keys"},
		{"users:\n  - name: a\n    role: editor\n    keys: [" + k + "]\n  - name: a\n    role: viewer\n    keys: [x]\n", "u.yaml:5: name \"a\" is given to two users"},
		{"users:\n  - name: a\n    rights: all\n", "u.yaml:3: unknown key \"rights\""},
		{"users:\n  - name: \"a\\u202eb\"\n    role: editor\n    keys: [" + k + "]\n", "u.yaml:2: name: holds control characters"},
		{"users:\n  - name: \"a\\u009b31mb\"\n    role: editor\n    keys: [" + k + "]\n", "u.yaml:2: name: holds control characters"},
		{"users:\n  - name: \"a\\x1b]0;title\\x07\"\n    role: editor\n    keys: [" + k + "]\n", "u.yaml:2: name: holds control characters"},
		{"users:\n  - name: Zoë\n    role: admin\n    keys: [" + k + "]\n", ""},
		{"users: [\n", "u.yaml: line"},
		{"users:\n  - name: a\n    role: editor\n    kinds: [product, part]\n    keys: [" + k + "]\n", "u.yaml:2: user \"a\": unknown kind \"part\" (kinds: product, document)"},
		{"users:\n  - name: a\n    role: editor\n    subtrees: {product: [1]}\n    keys: [" + k + "]\n", "u.yaml:2: user \"a\": subtrees of product: product records are not a tree"},
		{"users:\n  - name: a\n    role: editor\n    subtrees: {document: []}\n    keys: [" + k + "]\n", "name the records at the top"},
		{"users:\n  - name: a\n    role: editor\n    subtrees: {document: [x]}\n    keys: [" + k + "]\n", "u.yaml:4: subtrees: want a mapping"},
		{"users:\n  - name: a\n    role: editor\n    kinds: [product]\n    subtrees: {document: [3, 7]}\n    keys: [" + k + "]\n", ""},
	} {
		_, err := parseUsers("u.yaml", []byte(tc.file), store.DefaultRegistry())
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v; want it accepted", tc.file, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v; want %q", tc.file, err, tc.want)
		}
	}
}
