package torture_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/torture"
)

// runLength is how long the torture runs here, and how often a writer is killed: a few
// seconds in a plain `go test`, longer under TANDEM_LONG_TESTS=1 (CI). The long run for a
// release is `tandem torture --duration 10m` (docs/testing.md).
func runLength() (duration, killEvery time.Duration) {
	if v := os.Getenv("TANDEM_LONG_TESTS"); v != "" && v != "0" {
		return 8 * time.Second, 1500 * time.Millisecond
	}
	return 4 * time.Second, time.Second
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// TestMain removes the binary the tests built (30 MB a run in the temporary directory).
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binDir is the directory of the binary mustBinary built, "" before.
var binDir string

// mustBinary builds tandem once for every test in this package.
func mustBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tandem-torture-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		binary = filepath.Join(dir, "tandem")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/tandem-editor/tandem").CombinedOutput()
		if err != nil {
			buildErr = err
			binary = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build tandem: %v\n%s", buildErr, binary)
	}
	return binary
}

// runTorture runs the real torture command (OS processes, SIGKILLs) and checks its verdict.
func runTorture(t *testing.T, dsn string, alsoWant ...string) {
	exe := mustBinary(t)
	var out bytes.Buffer
	duration, killEvery := runLength()
	cmd := exec.Command(exe, "--db", dsn, "torture", "--duration", duration.String(), "--workers", "3",
		"--kill-every", killEvery.String(), "--seed", "42")
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("tandem torture:\n%s", out.String())
	if err != nil {
		t.Fatalf("torture failed: %v", err)
	}
	for _, want := range append(alsoWant, "PASS counters", "PASS relative changes", "PASS version-checked increments",
		"PASS versions are contiguous", "PASS every editor save", "PASS no two leases", "PASS lease holders' journals",
		"PASS no idempotency key",
		"PASS the tree", "writers killed") {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestTorture_SQLite(t *testing.T) {
	runTorture(t, filepath.Join(t.TempDir(), "torture.db"))
}

func TestTorture_Postgres(t *testing.T) {
	runTorture(t, pgtest.DSN(t), "cut every writer's database connection")
}

// blindStore drops the version check: every version-checked save is sent with the version the
// record has right now, as a store that forgot "AND version = ?" would behave. It is also a
// little slow, as a store across a network is, which gives other writers time to come between
// a read and its write.
type blindStore struct{ store.Store }

func (b blindStore) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	if u.BaseVersion > 0 {
		time.Sleep(2 * time.Millisecond)
		cur, err := b.Store.FindRecord(ctx, kind, id)
		if err != nil {
			return nil, err
		}
		u.BaseVersion = cur.Version
	}
	return b.Store.UpdateRecord(ctx, kind, id, u)
}

// goroutineProc is a writer run in this process, so it can use the broken store.
type goroutineProc struct {
	cancel context.CancelFunc
	done   chan error
}

func (p *goroutineProc) Kill() error { p.cancel(); <-p.done; return nil }
func (p *goroutineProc) Stop() error { p.cancel(); return <-p.done }

// TestTorture_CatchesLostUpdates shows that the checks can fail: with the version check
// dropped, concurrent read-modify-writes overwrite each other and the run must report it.
func TestTorture_CatchesLostUpdates(t *testing.T) {
	t.Parallel() // beside TestTorture_CatchesOverlappingLeases: see there
	path := filepath.Join(t.TempDir(), "broken.db")
	open := func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path, store.Options{}) }
	st, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out bytes.Buffer
	report, err := torture.Run(context.Background(), torture.Config{
		Duration: 2 * time.Second, Workers: 4, Products: 1, Documents: 2, Seed: 7,
		Open: open,
		Start: func(ctx context.Context, cfg torture.WorkerConfig) (torture.Proc, error) {
			ctx, cancel := context.WithCancel(ctx)
			p := &goroutineProc{cancel: cancel, done: make(chan error, 1)}
			go func() { p.done <- torture.Work(ctx, blindStore{st}, cfg) }()
			return p, nil
		},
		Out: &out,
	})
	t.Logf("torture with the version check dropped:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if report.OK() {
		t.Fatal("the torture checks passed on a store without a version check; they cannot catch a lost update")
	}
	var lost bool
	for _, c := range report.Checks {
		if strings.HasPrefix(c.Name, "version-checked increments") && !c.OK && strings.Contains(c.Detail, "lost update") {
			lost = true
		}
	}
	if !lost {
		t.Error("the increment check did not name the lost update")
	}
}

// greedyStore grants every lease asked for. When a live holder is in the way it ends that
// lease behind the holder's back (it knows every token, since every grant passes through it)
// and grants a new one at once: a store that forgot to look for a live lease. The holder is
// not told until its next renewal; the store's own log shows an ordinary release and grant.
// Its renewals are slow, as a store across a network is, so that holders keep their leases
// long enough for others to ask for them.
type greedyStore struct {
	store.Store
	mu     sync.Mutex
	tokens map[string]string // scope -> token of the last grant
	took   int               // leases ended behind their holders' backs
}

func (g *greedyStore) AcquireLease(ctx context.Context, r store.LeaseRequest) (*store.Lease, error) {
	scope := fmt.Sprintf("%s/%d/%s", r.Kind, r.RecordID, r.Group)
	l, err := g.Store.AcquireLease(ctx, r)
	if store.ErrorCode(err) == store.ELEASE {
		g.mu.Lock()
		victim := g.tokens[scope]
		g.mu.Unlock()
		if victim == "" {
			return nil, err
		}
		if _, err := g.Store.ReleaseLease(context.WithoutCancel(ctx), victim); err != nil {
			return nil, err
		}
		g.mu.Lock()
		g.took++
		g.mu.Unlock()
		l, err = g.Store.AcquireLease(ctx, r)
	}
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.tokens[scope] = l.Token
	g.mu.Unlock()
	return l, nil
}

func (g *greedyStore) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	time.Sleep(20 * time.Millisecond)
	return g.Store.ExtendLease(ctx, token, ttl)
}

// TestTorture_CatchesOverlappingLeases shows that the lease check does not take the store's
// word for it: with a store that grants a second live lease, the holders' journals show two
// holders at once and the run must fail naming the overlap.
func TestTorture_CatchesOverlappingLeases(t *testing.T) {
	// The two runs that must catch a broken store take seconds by the clock (sleeps in the
	// broken stores, lease renewals), not by CPU, each on a store of its own: they run
	// beside each other, after the torture runs of the real stores.
	t.Parallel()
	path := filepath.Join(t.TempDir(), "greedy.db")
	open := func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path, store.Options{}) }
	st, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	greedy := &greedyStore{Store: st, tokens: map[string]string{}}
	var out bytes.Buffer
	report, err := torture.Run(context.Background(), torture.Config{
		Duration: 3 * time.Second, Workers: 6, Products: 1, Documents: 2, Seed: 9,
		Open: open,
		Start: func(ctx context.Context, cfg torture.WorkerConfig) (torture.Proc, error) {
			ctx, cancel := context.WithCancel(ctx)
			p := &goroutineProc{cancel: cancel, done: make(chan error, 1)}
			go func() { p.done <- torture.Work(ctx, greedy, cfg) }()
			return p, nil
		},
		Out: &out,
	})
	t.Logf("torture with a store that grants a second live lease (%d taken behind their holders' backs):\n%s", greedy.took, out.String())
	if err != nil {
		t.Fatal(err)
	}
	var overlap bool
	for _, c := range report.Checks {
		if strings.HasPrefix(c.Name, "lease holders' journals") && !c.OK && strings.Contains(c.Detail, "lease overlap") {
			overlap = true
		}
	}
	if !overlap || report.OK() {
		t.Fatal("the torture run did not report a lease overlap on a store that grants a second live lease")
	}
}
