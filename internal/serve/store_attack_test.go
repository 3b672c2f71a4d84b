package serve

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	"github.com/tandem-editor/tandem/store/remote"
)

// storeServer starts a server on st whose users file holds users; it returns the file's
// path and a function that opens a store-protocol stream with a key.
func storeServer(t *testing.T, st store.Store, users ...[3]string) (string, func(gossh.Signer) (*remote.Client, *gossh.Session)) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "users.yaml")
	if err := os.WriteFile(path, []byte(usersFile(users...)), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Listen: "127.0.0.1:0", HostKey: filepath.Join(dir, "host"), Users: path, Store: st,
		Command: func(context.Context, []string, io.Reader, io.Writer, io.Writer) int { return 1 },
		Poll:    50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() { stop(); <-served })
	open := func(k gossh.Signer) (*remote.Client, *gossh.Session) {
		t.Helper()
		c, err := gossh.Dial("tcp", srv.Addr().String(), &gossh.ClientConfig{
			User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(k)},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		in, _ := s.StdinPipe()
		out, _ := s.StdoutPipe()
		if err := s.Start(StoreCommand); err != nil {
			t.Fatal(err)
		}
		rc, err := remote.Dial(context.Background(), &pipes{out, in})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		return rc, s
	}
	return path, open
}

type pipes struct {
	io.Reader
	io.WriteCloser
}

// TestStoreProtocol_RemovedUserEnds: a reload that drops a user ends their open
// store-protocol session, though the client sends nothing after.
func TestStoreProtocol_RemovedUserEnds(t *testing.T) {
	alice, bob := testKey(t), testKey(t)
	keys.Store("alice2", alice)
	keys.Store("bob2", bob)
	path, open := storeServer(t, memory.New(store.Options{}), [3]string{"alice", "editor", "alice2"}, [3]string{"bob", "editor", "bob2"})
	c, s := open(bob)
	ctx := context.Background()
	if _, err := c.CountRecords(ctx, store.KindProduct); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	if err := os.WriteFile(path, []byte(usersFile([3]string{"alice", "editor", "alice2"})), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("bob's store-protocol session went on after he was removed")
	}
}
