package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	"github.com/tandem-editor/tandem/tui"
)

// syncBuf is a buffer written by one goroutine and read by another.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testServer is an in-process server on a memory store holding products 1..3, for the
// users alice (editor) and bob (editor), its log in JSON.
type testServer struct {
	*Server
	st    store.Store
	log   *syncBuf
	alice gossh.Signer
	bob   gossh.Signer
	users string
}

// startServer starts a test server with limits; cmd (nil: print "ok") runs commands.
func startServer(t *testing.T, limits Limits, cmd func(ctx context.Context, st store.Store, args []string, stdout io.Writer) int) *testServer {
	t.Helper()
	dir := t.TempDir()
	ts := &testServer{st: memory.New(store.Options{}), log: new(syncBuf), alice: testKey(t), bob: testKey(t)}
	keys.Store("alice", ts.alice)
	keys.Store("bob", ts.bob)
	seed := store.WithActor(context.Background(), store.Actor{Name: "seed", Role: store.RoleEditor})
	for i := 1; i <= 3; i++ {
		if _, err := ts.st.CreateRecord(seed, store.KindProduct, store.Values{
			"sku": fmt.Sprintf("SKU-%d", i), "name": fmt.Sprintf("Product %d", i), "price": int64(100), "stock": int64(1),
		}); err != nil {
			t.Fatal(err)
		}
	}
	ts.users = filepath.Join(dir, "users.yaml")
	if err := os.WriteFile(ts.users, []byte(usersFile([3]string{"alice", "editor", "alice"}, [3]string{"bob", "editor", "bob"})), 0o600); err != nil {
		t.Fatal(err)
	}
	if cmd == nil {
		cmd = func(context.Context, store.Store, []string, io.Writer) int { return 0 }
	}
	srv, err := New(Config{
		Listen: "127.0.0.1:0", HostKey: filepath.Join(dir, "host"), Users: ts.users, Store: ts.st,
		TUI: tui.Options{StoreID: "test", DraftDir: filepath.Join(dir, "drafts")},
		Command: func(ctx context.Context, st store.Store, args []string, _ io.Reader, stdout, _ io.Writer) int {
			if args[0] == "wait" {
				<-ctx.Done()
				return 0
			}
			return cmd(ctx, st, args, stdout)
		},
		Limits: limits,
		Log:    slogJSON(ts.log),
		Poll:   50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.Server = srv
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() { stop(); <-served })
	return ts
}

func (ts *testServer) dial(k gossh.Signer) (*gossh.Client, error) {
	return gossh.Dial("tcp", ts.Addr().String(), &gossh.ClientConfig{
		User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(k)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
	})
}

// openSessions is how many sessions the server has open.
func (ts *testServer) openSessions() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.sessions)
}

// clientSession is a session a test opened: its output, stderr and the end of it.
type clientSession struct {
	*gossh.Session
	client    *gossh.Client
	out, errb *syncBuf
	stdin     io.WriteCloser
	unread    io.Reader // a stuck session's output, not read
	done      chan error
}

// open opens a session with k: the editor with a terminal (cols x rows) when cmd is "",
// else cmd. With stuck, its output is never read.
func (ts *testServer) open(t *testing.T, k gossh.Signer, cmd string, cols, rows int, stuck bool) *clientSession {
	t.Helper()
	c, err := ts.dial(k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	cs := &clientSession{Session: s, client: c, out: new(syncBuf), errb: new(syncBuf), done: make(chan error, 1)}
	if stuck {
		// Not read after the first frame: the channel's window fills, then the server's
		// writes wait.
		if cs.unread, err = s.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
		cs.unread = io.TeeReader(cs.unread, cs.out)
	} else {
		s.Stdout = cs.out
	}
	s.Stderr = cs.errb
	if cs.stdin, err = s.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if cmd == "" {
		if err := s.RequestPty("xterm-256color", rows, cols, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		err = s.Shell()
	} else {
		err = s.Start(cmd)
	}
	if err != nil {
		t.Fatal(err)
	}
	go func() { cs.done <- s.Wait() }()
	if stuck {
		buf := make([]byte, 1)
		for !strings.Contains(cs.out.String(), "Product 1") {
			if _, err := cs.unread.Read(buf); err != nil {
				t.Fatalf("the stuck session's first frame: %v", err)
			}
		}
	}
	return cs
}

// waitFor polls cond for up to 15 seconds; show (optional) says what there was instead.
func waitFor(t *testing.T, what string, cond func() bool, show ...func() string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			var got string
			for _, f := range show {
				got += "\n" + f()
			}
			t.Fatalf("waited 15s for %s%s", what, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ended waits for the session to end and returns its stderr.
func (cs *clientSession) ended(t *testing.T, what string) string {
	t.Helper()
	select {
	case <-cs.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: the session went on", what)
	}
	return cs.errb.String()
}

// TestServer_Refusals: agent, X11 and port forwarding, direct TCP channels and subsystems
// (sftp) are refused; the session is tandem and nothing else.
func TestServer_Refusals(t *testing.T) {
	ts := startServer(t, Limits{}, nil)
	c, err := ts.dial(ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{reqAgent, reqX11} {
		if ok, err := s.SendRequest(req, true, nil); ok || err != nil {
			t.Errorf("%s: answered %v, %v; want refused", req, ok, err)
		}
	}
	if err := s.RequestSubsystem("sftp"); err == nil {
		t.Error("the sftp subsystem was accepted")
	}
	fwd := gossh.Marshal(struct {
		Addr string
		Port uint32
	}{"127.0.0.1", 0})
	if ok, _, err := c.SendRequest("tcpip-forward", true, fwd); ok || err != nil {
		t.Errorf("tcpip-forward: answered %v, %v; want refused", ok, err)
	}
	if conn, err := c.Dial("tcp", ts.Addr().String()); err == nil {
		conn.Close()
		t.Error("a direct-tcpip channel was opened")
	}
}

// TestServer_SessionLimits: past the limit per user, or in all, a session is refused with
// a message saying which limit; the open ones go on.
func TestServer_SessionLimits(t *testing.T) {
	ts := startServer(t, Limits{PerUser: 2, Sessions: 3}, nil)
	ts.open(t, ts.alice, "wait", 0, 0, false)
	ts.open(t, ts.alice, "wait", 0, 0, false)
	waitFor(t, "two sessions", func() bool { return ts.openSessions() == 2 })
	third := ts.open(t, ts.alice, "list product", 0, 0, false)
	if msg := third.ended(t, "alice's third session"); !strings.Contains(msg, "you have 2 sessions open, the limit for one person") {
		t.Fatalf("alice's third session: %q", msg)
	}
	ts.open(t, ts.bob, "wait", 0, 0, false)
	waitFor(t, "three sessions", func() bool { return ts.openSessions() == 3 })
	fourth := ts.open(t, ts.bob, "list product", 0, 0, false)
	if msg := fourth.ended(t, "a fourth session"); !strings.Contains(msg, "the server has 3 sessions open, its limit") {
		t.Fatalf("a fourth session: %q", msg)
	}
	if n := ts.openSessions(); n != 3 {
		t.Fatalf("%d sessions open after the refusals; want 3", n)
	}
}

// TestServer_AuthPerMinute: an address that offered too many unknown keys this minute is
// refused, even with a good key, and the log says why.
func TestServer_AuthPerMinute(t *testing.T) {
	ts := startServer(t, Limits{AuthPerMinute: 3}, nil)
	for range 3 {
		if c, err := ts.dial(testKey(t)); err == nil {
			c.Close()
			t.Fatal("an unknown key was let in")
		}
	}
	if c, err := ts.dial(ts.alice); err == nil {
		c.Close()
		t.Fatal("alice was let in from an address over its limit of refused keys")
	}
	waitFor(t, "the refusal in the log", func() bool {
		return strings.Contains(ts.log.String(), "too many refused keys from this address this minute")
	})
}

// TestServer_Idle: an editor session with no input ends after the idle limit, saying so.
func TestServer_Idle(t *testing.T) {
	ts := startServer(t, Limits{Idle: 300 * time.Millisecond}, nil)
	cs := ts.open(t, ts.alice, "", 80, 24, false)
	if msg := cs.ended(t, "an idle session"); !strings.Contains(msg, "no input for 300ms; the session ends") {
		t.Fatalf("an idle session ended saying %q", msg)
	}
}

// TestServer_OversizedInput: a line or a paste longer than the input limit ends the
// session with a message, before the editor holds it.
func TestServer_OversizedInput(t *testing.T) {
	ts := startServer(t, Limits{Input: 4096}, nil)
	for name, in := range map[string]string{
		"line":  strings.Repeat("x", 5000),
		"paste": "\x1b[200~" + strings.Repeat("x\n", 2500),
	} {
		t.Run(name, func(t *testing.T) {
			cs := ts.open(t, ts.alice, "", 80, 24, false)
			waitFor(t, "the editor", func() bool { return strings.Contains(cs.out.String(), "Product 1") })
			if _, err := io.WriteString(cs.stdin, in); err != nil {
				t.Fatal(err)
			}
			if msg := cs.ended(t, "oversized input"); !strings.Contains(msg, "input of more than 4096 bytes in one line or paste") {
				t.Fatalf("oversized input ended the session saying %q", msg)
			}
		})
	}
}

// TestInputGuard_Check: lines and pastes are counted apart, markers found across reads.
func TestInputGuard_Check(t *testing.T) {
	g := newInputGuard(strings.NewReader(""), 10, func(error) {})
	for _, step := range []struct {
		in string
		ok bool
	}{
		{"12345\r12345678\r", true},
		{"\x1b[20", true},
		{"0~line\nli", true}, // in a paste line ends do not count: 7 bytes so far
		{"ne\nabcd", false},  // …so the paste is over 10 before it ends
	} {
		if got := g.check([]byte(step.in)); got != step.ok {
			t.Fatalf("check(%q) = %v; want %v", step.in, got, step.ok)
		}
	}
}

// TestFollowWindow_Coalesces: a storm of window sizes reaches the program as at most one
// size per resizeEvery, the last one included.
func TestFollowWindow_Coalesces(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	windows := make(chan ssh.Window)
	var mu sync.Mutex
	var got []tea.WindowSizeMsg
	go followWindow(ctx, func(m tea.Msg) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, m.(tea.WindowSizeMsg))
	}, windows)
	start := time.Now()
	for i := range 20000 {
		windows <- ssh.Window{Width: 80 + i%50, Height: 24}
	}
	windows <- ssh.Window{Width: 123, Height: 45}
	elapsed := time.Since(start)
	waitFor(t, "the last size", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && got[len(got)-1] == tea.WindowSizeMsg{Width: 123, Height: 45}
	})
	mu.Lock()
	defer mu.Unlock()
	if most := int(elapsed/resizeEvery) + 2; len(got) > most {
		t.Fatalf("20001 sizes in %s reached the program as %d; want at most %d", elapsed, len(got), most)
	}
}

// TestServer_ResizeStorm: a client resizing thousands of times a second neither crashes
// the server nor stops its session: the editor still answers a key afterwards. The CPU the
// storm cost is logged.
func TestServer_ResizeStorm(t *testing.T) {
	ts := startServer(t, Limits{}, nil)
	cs := ts.open(t, ts.alice, "", 80, 24, false)
	waitFor(t, "the editor", func() bool { return strings.Contains(cs.out.String(), "Product 1") })
	before := cpuTime(t)
	start := time.Now()
	for i := range 20000 {
		if err := cs.WindowChange(24+i%20, 80+i%40); err != nil {
			t.Fatalf("resize %d: %v", i, err)
		}
	}
	t.Logf("20000 resizes in %s cost the process %s of CPU", time.Since(start), cpuTime(t)-before)
	if err := cs.WindowChange(30, 100); err != nil {
		t.Fatal(err)
	}
	n := len(cs.out.String())
	if _, err := io.WriteString(cs.stdin, "/"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame after the storm", func() bool { return len(cs.out.String()) > n })
	select {
	case err := <-cs.done:
		t.Fatalf("the session ended in the storm: %v %s", err, cs.errb.String())
	default:
	}
}

// cpuTime is the user and system CPU time the test process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestServer_NeverReads: an editor session whose client never reads its output, while
// saves change what it shows and its window is resized (a full redraw each time), fills
// the SSH window and then costs the server a bounded heap (its frames wait, they are not
// queued), and blocks neither the writers nor another session.
func TestServer_NeverReads(t *testing.T) {
	ts := startServer(t, Limits{}, nil)
	ctx := store.WithActor(context.Background(), store.Actor{Name: "writer", Role: store.RoleEditor})
	long := strings.Repeat("w", 150)
	for i := 4; i <= 150; i++ {
		if _, err := ts.st.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("SKU-%d", i), "name": long, "price": int64(1)}); err != nil {
			t.Fatal(err)
		}
	}
	stuck := ts.open(t, ts.alice, "", 300, 150, true)
	waitFor(t, "the stuck session", func() bool { return ts.openSessions() == 1 })
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	before := heap()
	const rounds = 100
	for i := range rounds {
		if err := stuck.WindowChange(150, 300-i%2); err != nil {
			t.Fatal(err)
		}
		for id := int64(1); id <= 20; id++ {
			rec, err := ts.st.FindRecord(ctx, store.KindProduct, id)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ts.st.UpdateRecord(ctx, store.KindProduct, id, store.Update{
				BaseVersion: rec.Version, Set: store.Values{"name": fmt.Sprintf("%s %d", long, i)},
			}); err != nil {
				t.Fatalf("save %d of %d: %v", i, id, err)
			}
		}
		time.Sleep(resizeEvery) // not a timing assertion: each size reaches the editor
	}
	other := ts.open(t, ts.bob, "list product", 0, 0, false)
	if msg := other.ended(t, "another session's command"); msg != "" {
		t.Fatalf("another session's command: %q", msg)
	}
	after := heap()
	grew := int64(after) - int64(before)
	t.Logf("heap in use %d KiB before, %d KiB after %d saves and %d redraws (the store's history included)", before>>10, after>>10, rounds*20, rounds)
	if grew > 48<<20 {
		t.Fatalf("the server's heap grew by %d MiB while a client read nothing", grew>>20)
	}
	// What waited for the client: up to the SSH window's worth (2 MiB), when the server
	// wrote until the window was full and then waited.
	var waiting atomic.Int64
	go func() { _, _ = io.Copy(counter{&waiting}, stuck.unread) }()
	time.Sleep(2 * time.Second)
	t.Logf("%d KiB of output waited for the client", waiting.Load()>>10)
}

// counter counts the bytes written to it.
type counter struct{ n *atomic.Int64 }

func (c counter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// TestServer_LogLines: a connection logs one line with user, key fingerprint, address,
// outcome and duration; a refused one its reason; a write its kind, id and outcome; no
// line holds a value written.
func TestServer_LogLines(t *testing.T) {
	const secret = "SECRET-VALUE-4711"
	ts := startServer(t, Limits{}, func(ctx context.Context, st store.Store, _ []string, _ io.Writer) int {
		if _, err := st.UpdateRecord(ctx, store.KindProduct, 2, store.Update{BaseVersion: 1, Set: store.Values{"name": secret}}); err != nil {
			return 1
		}
		if _, err := st.UpdateRecord(ctx, store.KindProduct, 2, store.Update{BaseVersion: 1, Set: store.Values{"name": secret + "!"}}); err == nil {
			return 1
		}
		return 0
	})
	if c, err := ts.dial(testKey(t)); err == nil {
		c.Close()
		t.Fatal("an unknown key was let in")
	}
	cs := ts.open(t, ts.alice, "save", 0, 0, false)
	if msg := cs.ended(t, "the save"); msg != "" {
		t.Fatalf("the save: %q", msg)
	}
	cs.client.Close()
	fp := gossh.FingerprintSHA256(ts.alice.PublicKey())
	want := []map[string]any{
		{"msg": "connection", "outcome": "refused", "reason": "unknown key"},
		{"msg": "connection", "outcome": "closed", "user": "alice", "key": fp, "sessions": 1.0},
		{"msg": "write", "write": "update", "kind": "product", "id": 2.0, "outcome": "ok", "user": "alice", "key": fp},
		{"msg": "write", "write": "update", "kind": "product", "id": 2.0, "outcome": store.ECONFLICT, "user": "alice"},
	}
	waitFor(t, "the log lines", func() bool { return len(matching(ts.log.String(), want)) == len(want) }, ts.log.String)
	for _, l := range matching(ts.log.String(), want) {
		for _, k := range []string{"addr", "duration"} {
			if l["msg"] == "connection" && l[k] == "" {
				t.Errorf("a connection line without %s: %v", k, l)
			}
		}
	}
	if strings.Contains(ts.log.String(), "SECRET") {
		t.Fatalf("a value written reached the log:\n%s", ts.log)
	}
}

// matching returns, for each of want, the first JSON line of log holding all its pairs.
func matching(log string, want []map[string]any) []map[string]any {
	var found []map[string]any
	for _, w := range want {
		for _, line := range strings.Split(log, "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) != nil {
				continue
			}
			if holds(l, w) {
				found = append(found, l)
				break
			}
		}
	}
	return found
}

func holds(l, w map[string]any) bool {
	for k, v := range w {
		if l[k] != v {
			return false
		}
	}
	return true
}

// slogJSON is a JSON log on w.
func slogJSON(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }
