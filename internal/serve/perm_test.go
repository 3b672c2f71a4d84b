package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// TestServer_LimitsReload: a session's actor carries its user's kinds and subtrees from
// the users file; a reload that changes them ends the user's open session with a message,
// and the next session carries the new limits.
func TestServer_LimitsReload(t *testing.T) {
	dir := t.TempDir()
	key := testKey(t)
	line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(key.PublicKey())))
	file := func(limits string) []byte {
		return []byte(fmt.Sprintf("users:\n  - name: pat\n    role: editor\n%s    keys: [%s]\n", limits, line))
	}
	users := filepath.Join(dir, "users.yaml")
	if err := os.WriteFile(users, file("    kinds: [product]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{
		Listen: "127.0.0.1:0", HostKey: filepath.Join(dir, "host"), Users: users,
		Store: memory.New(store.Options{}),
		Command: func(ctx context.Context, _ store.Store, args []string, _ io.Reader, stdout, _ io.Writer) int {
			a, err := store.ActorFrom(ctx)
			if err != nil || a.Perms == nil {
				return 1
			}
			fmt.Fprint(stdout, a.Perms.Allows(a.Name))
			if args[0] == "wait" {
				<-ctx.Done()
			}
			return 0
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
	session := func() (*gossh.Client, *gossh.Session) {
		c, err := gossh.Dial("tcp", srv.Addr().String(), &gossh.ClientConfig{User: "pat",
			Auth: []gossh.AuthMethod{gossh.PublicKeys(key)}, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		return c, s
	}

	c, s := session()
	defer c.Close()
	var out, errb bytes.Buffer
	s.Stdout, s.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := s.Start("wait"); err != nil {
		t.Fatal(err)
	}
	go func() { done <- s.Wait() }()
	time.Sleep(100 * time.Millisecond) // not a timing assertion: lets the session register
	if err := os.WriteFile(users, file("    subtrees: {document: [7]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("pat's session went on after his limits changed")
	}
	if want := `editor "pat" may write product records`; out.String() != want || !strings.Contains(errb.String(), "removed or changed") {
		t.Fatalf("first session: %q, stderr %q; want %q and the end said", out.String(), errb.String(), want)
	}

	c2, s2 := session()
	defer c2.Close()
	got, err := s2.Output("list")
	if want := `editor "pat" may write document records: document only at document 7 and below`; err != nil || string(got) != want {
		t.Fatalf("after the reload: %q, %v; want %q", got, err, want)
	}
}
