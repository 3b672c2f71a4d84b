package cli

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/internal/netproxy"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// The --local tests: a PostgreSQL source behind a TCP proxy (internal/netproxy) that the
// test cuts and restores, the built binary as real processes, and a home of their own for
// the local copies (XDG_DATA_HOME).

// localEnv is one --local setup: the source's DSN as the test reaches it directly, the DSN
// through the proxy that tandem --local is given, and the data and config directories.
type localEnv struct {
	direct, proxied string
	proxy           *netproxy.Proxy
	data, config    string
}

func newLocalEnv(t *testing.T, products int) *localEnv {
	t.Helper()
	direct := pgtest.DSN(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	p, err := netproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	u.Host = p.Addr()
	e := &localEnv{direct: direct, proxied: u.String(), proxy: p, data: t.TempDir(), config: t.TempDir()}
	mustTandem(t, direct, "seed", "--products", itoa(products), "--documents", "0")
	return e
}

func itoa(n int) string { return strconv.Itoa(n) }

// cmd is tandem with args through the proxy, with --local, in the test's data directory.
func (e *localEnv) cmd(args ...string) *exec.Cmd {
	c := tandemCmd(e.proxied, append([]string{"--local"}, args...)...)
	c.Env = append(c.Env, "XDG_DATA_HOME="+e.data, "XDG_CONFIG_HOME="+e.config)
	return c
}

func (e *localEnv) run(t *testing.T, args ...string) result {
	t.Helper()
	return runResult(t, e.cmd(args...), args)
}

// copyPath is the local copy's file, as tandem copies lists it.
func (e *localEnv) copyPath(t *testing.T) string {
	t.Helper()
	c := tandemCmd(e.direct, "copies", "--json")
	c.Env = append(c.Env, "XDG_DATA_HOME="+e.data, "XDG_CONFIG_HOME="+e.config)
	r := runResult(t, c, nil)
	var cs []jsonCopy
	if err := json.Unmarshal([]byte(r.stdout), &cs); err != nil || len(cs) != 1 {
		t.Fatalf("tandem copies: %v %q %s", err, r.stdout, r.stderr)
	}
	return cs[0].Path
}

// follow starts tandem --local sync --follow --json and returns it.
func (e *localEnv) follow(t *testing.T) *lineProc {
	t.Helper()
	p := &lineProc{cmd: e.cmd("sync", "--follow", "--json"), lines: make(chan string, 1024), stderr: new(syncBuf)}
	startLineProc(t, p)
	return p
}

// waitFor polls cond every 100 ms until it holds, failing after a generous wait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// field reads one field of a record as tandem get --json prints it.
func field(t *testing.T, dsn string, id int64, name string) any {
	t.Helper()
	return mustGet(t, dsn, "product", id).Fields[name]
}

func TestLocal_CutSavesLandOnceAndCollisionQueued(t *testing.T) {
	e := newLocalEnv(t, 10)
	// The first run clones, with a line on stderr.
	r := e.run(t, "list", "products")
	wantExit(t, "first --local run", r, 0)
	if !strings.Contains(r.stderr, "local copy") || strings.Count(r.stdout, "\n") < 10 {
		t.Fatalf("first --local run: stdout %q stderr %q", r.stdout, r.stderr)
	}
	path := e.copyPath(t)
	f := e.follow(t)
	if l := f.next(t, 30*time.Second); !strings.Contains(l, `"online":true`) {
		t.Fatalf("first state: %s", l)
	}
	// A remote save arrives in the copy while connected.
	mustTandem(t, e.direct, "set", "product", "4", "name=Remote lamp", "--expect-version", "1")
	waitFor(t, "the source's save in the copy", func() bool { return field(t, path, 4, "name") == "Remote lamp" })

	stock1 := field(t, e.direct, 1, "stock").(float64)
	e.proxy.Cut()
	for range 3 {
		r := e.run(t, "adjust", "product", "1", "stock", "-1")
		wantExit(t, "adjust while cut", r, 0)
		if !strings.Contains(r.stderr, "pending") {
			t.Fatalf("adjust while cut says nothing of pending: %q", r.stderr)
		}
	}
	// A collision: the same field changed on both sides during the cut.
	wantExit(t, "local set while cut", e.run(t, "set", "product", "2", "price=11.11", "--expect-version", "1"), 0)
	mustTandem(t, e.direct, "set", "product", "2", "price=22.22", "--expect-version", "1")
	if got := field(t, e.direct, 1, "stock").(float64); got != stock1 {
		t.Fatalf("the source changed while cut: stock %v, was %v", got, stock1)
	}
	e.proxy.Restore()
	waitFor(t, "the cut's adjusts on the source", func() bool { return field(t, e.direct, 1, "stock").(float64) == stock1-3 })
	waitFor(t, "the collision in the copy's conflict queue", func() bool {
		var cs []jsonCopy
		c := tandemCmd(e.direct, "copies", "--json")
		c.Env = append(c.Env, "XDG_DATA_HOME="+e.data, "XDG_CONFIG_HOME="+e.config)
		_ = json.Unmarshal([]byte(runResult(t, c, nil).stdout), &cs)
		return len(cs) == 1 && cs[0].Conflicts == 1 && cs[0].Pending == 0
	})
	// Exactly once: a round later nothing moved again.
	time.Sleep(time.Second)
	if got := field(t, e.direct, 1, "stock").(float64); got != stock1-3 {
		t.Fatalf("stock on the source %v, want %v (each adjust once)", got, stock1-3)
	}
	if got := field(t, e.direct, 2, "price"); got != "22.22" {
		t.Fatalf("the source's price %v: the collision must wait for a person", got)
	}
	if f.stop(t, syscall.SIGTERM) != 0 {
		t.Fatalf("sync --follow did not end cleanly: %s", f.stderr)
	}
	// With a conflict open the copy is not forgotten.
	c := tandemCmd(e.direct, "copies", "forget", strings.TrimSuffix(pathBase(path), ".db"))
	c.Env = append(c.Env, "XDG_DATA_HOME="+e.data, "XDG_CONFIG_HOME="+e.config)
	wantExit(t, "forget with a conflict", runResult(t, c, nil), 2, "conflict")
}

func pathBase(p string) string { return p[strings.LastIndex(p, "/")+1:] }

func TestLocal_KilledDuringPushConverges(t *testing.T) {
	const n = 30
	e := newLocalEnv(t, n)
	wantExit(t, "first --local run", e.run(t, "list", "products"), 0)
	path := e.copyPath(t)
	before := map[int64]float64{}
	for id := int64(1); id <= n; id++ {
		before[id] = field(t, e.direct, id, "stock").(float64)
		// Straight into the copy: pending, not pushed.
		mustTandem(t, path, "adjust", "product", itoa(int(id)), "stock", "-2")
	}
	// A slow line, so that a kill falls inside the push: killed later each time until one
	// left some of the adjusts on the source and not others.
	e.proxy.SetLatency(20 * time.Millisecond)
	onSource := func() int {
		k := 0
		for id := int64(1); id <= n; id++ {
			if field(t, e.direct, id, "stock").(float64) == before[id]-2 {
				k++
			}
		}
		return k
	}
	midPush := false
	for i := 0; i < 10 && !midPush; i++ {
		f := e.follow(t)
		time.Sleep(time.Duration(1500+400*i) * time.Millisecond)
		_ = f.cmd.Process.Signal(syscall.SIGKILL)
		_ = f.cmd.Wait()
		k := onSource()
		t.Logf("kill %d: %d of %d on the source", i, k, n)
		midPush = k > 0 && k < n
		if k == n {
			break
		}
	}
	if !midPush {
		t.Fatal("no kill fell inside the push (every one came before it started or after it ended)")
	}
	e.proxy.SetLatency(0)
	f := e.follow(t)
	waitFor(t, "every adjust on the source", func() bool {
		for id := int64(1); id <= n; id++ {
			if field(t, e.direct, id, "stock").(float64) != before[id]-2 {
				return false
			}
		}
		return true
	})
	waitFor(t, "nothing pending", func() bool {
		c := tandemCmd(e.direct, "copies", "--json")
		c.Env = append(c.Env, "XDG_DATA_HOME="+e.data, "XDG_CONFIG_HOME="+e.config)
		var cs []jsonCopy
		_ = json.Unmarshal([]byte(runResult(t, c, nil).stdout), &cs)
		return len(cs) == 1 && cs[0].Pending == 0 && cs[0].Conflicts == 0
	})
	f.stop(t, syscall.SIGTERM)
	for id := int64(1); id <= n; id++ {
		if got := field(t, e.direct, id, "stock").(float64); got != before[id]-2 {
			t.Errorf("product %d: stock %v on the source, want %v (once)", id, got, before[id]-2)
		}
		if got := field(t, path, id, "stock").(float64); got != before[id]-2 {
			t.Errorf("product %d: stock %v in the copy, want %v", id, got, before[id]-2)
		}
	}
}

// TestLocal_NoPasswordInCopy: a DSN with a password works with --local (the server of the
// tests trusts, so any password does), and neither the copy's file nor tandem copies holds
// the password.
func TestLocal_NoPasswordInCopy(t *testing.T) {
	e := newLocalEnv(t, 3)
	u, err := url.Parse(e.proxied)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cretPassw0rd"
	u.User = url.UserPassword(u.User.Username(), secret)
	e.proxied = u.String()
	r := e.run(t, "list", "products")
	wantExit(t, "--local with a password", r, 0)
	path := e.copyPath(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Fatal("the copy's file holds the source's password")
	}
	c := tandemCmd(e.direct, "copies")
	c.Env = append(c.Env, "XDG_DATA_HOME="+e.data, "XDG_CONFIG_HOME="+e.config)
	if out := runResult(t, c, nil); strings.Contains(out.stdout+out.stderr, secret) || !strings.Contains(out.stdout, "0 pending") {
		t.Fatalf("tandem copies: %q %q", out.stdout, out.stderr)
	}
	// Offline, the copy is found by the source's place without the password.
	e.proxy.Cut()
	wantExit(t, "--local with a password while cut", e.run(t, "set", "product", "1", "name=Cut lamp", "--expect-version", "1"), 0)
	e.proxy.Restore()
	wantExit(t, "--local after the cut", e.run(t, "sync"), 0)
	if got := field(t, e.direct, 1, "name"); got != "Cut lamp" {
		t.Fatalf("name on the source %v after the sync", got)
	}
}

// TestLocal_ConfigFile: local: true in the user's config file works as --local on a
// PostgreSQL store, and --local=false turns it off for one run.
func TestLocal_ConfigFile(t *testing.T) {
	e := newLocalEnv(t, 2)
	if err := os.MkdirAll(filepath.Join(e.config, "tandem"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.config, "tandem", "config.yaml"), []byte("local: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := tandemCmd(e.proxied, "--local=false", "list", "products")
	c.Env = append(c.Env, "XDG_DATA_HOME="+e.data, "XDG_CONFIG_HOME="+e.config)
	wantExit(t, "--local=false", runResult(t, c, nil), 0)
	if entries, _ := os.ReadDir(filepath.Join(e.data, "tandem", "copies")); len(entries) != 0 {
		t.Fatalf("--local=false made a copy: %v", entries)
	}
	c = tandemCmd(e.proxied, "list", "products")
	c.Env = append(c.Env, "XDG_DATA_HOME="+e.data, "XDG_CONFIG_HOME="+e.config)
	r := runResult(t, c, nil)
	wantExit(t, "local: true", r, 0)
	if !strings.Contains(r.stderr, "local copy") {
		t.Fatalf("local: true made no local copy: %q", r.stderr)
	}
	e.copyPath(t)
}
