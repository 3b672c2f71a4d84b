package serve

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"io"
	"os"
	"path/filepath"
	"sync"
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
		Command: func(context.Context, store.Store, []string, io.Reader, io.Writer, io.Writer) int { return 1 },
		Poll:    50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() { stop(); <-served })
	addrs.Store(path, srv.Addr().String())
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

var addrs sync.Map // users file → the address of the server storeServer started on it

func serverAddr(t *testing.T, users string) string {
	a, ok := addrs.Load(users)
	if !ok {
		t.Fatal("no server for " + users)
	}
	return a.(string)
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

// frame writes v as a frame of store/remote's protocol (length, then gob).
func frame(w io.Writer, v any) error {
	var buf bytes.Buffer
	buf.Write(make([]byte, 4))
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	_, err := w.Write(b)
	return err
}

// TestStoreProtocol_RemovedNonReaderEnds: a client that sends calls and never reads the
// answers (the server's writes block on the SSH window) loses its session all the same
// when a reload removes its user.
func TestStoreProtocol_RemovedNonReaderEnds(t *testing.T) {
	alice, bob := testKey(t), testKey(t)
	keys.Store("alice3", alice)
	keys.Store("bob3", bob)
	path, _ := storeServer(t, memory.New(store.Options{}), [3]string{"alice", "editor", "alice3"}, [3]string{"bob", "editor", "bob3"})
	c, err := gossh.Dial("tcp", serverAddr(t, path), &gossh.ClientConfig{
		User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(bob)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	in, _ := s.StdinPipe()
	if _, err := s.StdoutPipe(); err != nil { // never read
		t.Fatal(err)
	}
	if err := s.Start(StoreCommand); err != nil {
		t.Fatal(err)
	}
	type hello struct{ Version int }
	type request struct {
		ID     uint64
		Method string
	}
	go func() {
		if frame(in, hello{Version: 1}) != nil {
			return
		}
		for i := range 50000 {
			if frame(in, request{ID: uint64(i + 1), Method: "NoSuchCall"}) != nil {
				return
			}
		}
	}()
	time.Sleep(time.Second) // not a timing assertion: lets the answers fill the window
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	if err := os.WriteFile(path, []byte(usersFile([3]string{"alice", "editor", "alice3"})), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("bob's session, which reads no answers, went on after he was removed")
	}
}
