package serve

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/tui"
)

// BenchConfig is what BenchServe measures: Sessions editor sessions over SSH from this
// process, each Rounds times opening its own product, typing a new name and saving it,
// and between rounds watching the list for the others' saves.
type BenchConfig struct {
	// Store is an empty store the benchmark fills with one product per session.
	Store store.Store
	// Dir holds the users file, the keys and the drafts.
	Dir      string
	Sessions int
	Rounds   int
	// Dwell is the longest a session watches the list between its rounds (at random up to
	// it, at least half of it).
	Dwell time.Duration
	// Think is the pause between two keystrokes of a session.
	Think time.Duration
}

// BenchResult is what BenchServe measured.
type BenchResult struct {
	Sessions, Rounds int
	// Keystroke is the time from a keystroke written to the first output holding its echo.
	Keystroke Quantiles
	// Seen is the time from a save's Ctrl-S to its new value in the output of another
	// session that had the list on screen meanwhile.
	Seen Quantiles
	// Missed counts (save, session) pairs where a session had the list on screen for a
	// second after a save and never showed it.
	Missed int
	// Saves counts the saves confirmed ("saved v…"); Failed the steps that timed out, the
	// first of which Failures names.
	Saves, Failed int
	Failures      []string
	// Lost counts products that lack a confirmed save: their version is below one plus
	// their confirmed saves, or their name is neither the last confirmed one nor one typed
	// after it (a save whose confirmation timed out may have happened).
	Lost int
	// RSSPerSession is the process's resident memory growth (server and clients) divided
	// by Sessions; HeapPerSession the Go heap's.
	RSSPerSession, HeapPerSession int64
	// Load is /proc/loadavg before and after.
	LoadBefore, LoadAfter string
	Elapsed               time.Duration
}

// Quantiles summarise samples.
type Quantiles struct {
	N             int
	P50, P99, Max time.Duration
}

func quantiles(d []time.Duration) Quantiles {
	if len(d) == 0 {
		return Quantiles{}
	}
	slices.Sort(d)
	at := func(p float64) time.Duration { return d[int(math.Ceil(p*float64(len(d))))-1] }
	return Quantiles{N: len(d), P50: at(0.50), P99: at(0.99), Max: d[len(d)-1]}
}

// Two alphabets of capitals the editor's own text does not use in runs: a session's
// names alternate between them, so that every cell of a name changes at each save and the
// terminal is sent the whole new name in one run, where the benchmark finds it.
var benchAlphabets = [2]string{"QXZJVWKY", "BDGHMNPT"}

// benchName is the name session i gives its product in round r: 4 capitals, i and r in
// base 8, from the alphabet of r's parity.
func benchName(i, r int) string {
	a := benchAlphabets[r%2]
	return string([]byte{a[i/8%8], a[i%8], a[r/8%8], a[r%8]})
}

// benchNames finds the names (benchName) in b.
func benchNames(b []byte, found func(string)) {
	for _, a := range benchAlphabets {
		run := 0
		for k, c := range b {
			if strings.IndexByte(a, c) < 0 {
				run = 0
				continue
			}
			if run++; run >= 4 {
				found(string(b[k-3 : k+1]))
			}
		}
	}
}

// benchSave is one save: whose, which name, when its Ctrl-S was written, and whether
// "saved v…" showed.
type benchSave struct {
	session   int
	name      string
	at        time.Time
	confirmed bool
}

// benchSession is one client session of the benchmark.
type benchSession struct {
	i     int
	stdin io.Writer

	mu      sync.Mutex
	out     []byte               // output since the last mark
	wake    chan struct{}        // signalled on new output
	seen    map[string]time.Time // names first shown, when
	atList  []span               // when its list was on screen
	pressed []time.Duration      // keystroke latencies
}

// span is a time the list was on screen; to is zero while it still is.
type span struct{ from, to time.Time }

// BenchServe runs the benchmark: an in-process server on 127.0.0.1 over cfg.Store, and
// cfg.Sessions clients with terminals. Errors are the setup's; a step that times out is
// counted in Failed.
func BenchServe(ctx context.Context, cfg BenchConfig) (*BenchResult, error) {
	res := &BenchResult{Sessions: cfg.Sessions, Rounds: cfg.Rounds, LoadBefore: loadavg()}
	signers, err := benchUsers(ctx, cfg)
	if err != nil {
		return nil, err
	}
	runtime.GC()
	rssBefore, heapBefore := rss(), heapInUse()
	srv, err := New(Config{
		Listen: "127.0.0.1:0", HostKey: filepath.Join(cfg.Dir, "host"), Users: filepath.Join(cfg.Dir, "users.yaml"),
		Store: cfg.Store, TUI: tui.Options{StoreID: cfg.Store.StoreID(), DraftDir: filepath.Join(cfg.Dir, "drafts")},
		Command: func(context.Context, store.Store, []string, io.Reader, io.Writer, io.Writer) int { return 2 },
		Limits:  Limits{Sessions: cfg.Sessions + 1, PerUser: 1},
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx) }()
	defer func() { stop(); <-served }()

	sessions := make([]*benchSession, cfg.Sessions)
	for i := range sessions {
		if sessions[i], err = openBenchSession(srv.Addr().String(), i, signers[i]); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	var (
		mu    sync.Mutex
		saves []benchSave
		wg    sync.WaitGroup
	)
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sv, failed := s.run(cfg)
			mu.Lock()
			defer mu.Unlock()
			saves = append(saves, sv...)
			res.Failed += len(failed)
			for _, err := range failed {
				if len(res.Failures) < 5 {
					res.Failures = append(res.Failures, err.Error())
				}
			}
		}()
	}
	// Memory is measured while every session is open and busy.
	time.Sleep(cfg.Dwell)
	runtime.GC()
	res.RSSPerSession = (rss() - rssBefore) / int64(cfg.Sessions)
	res.HeapPerSession = (heapInUse() - heapBefore) / int64(cfg.Sessions)
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.LoadAfter = loadavg()
	for _, sv := range saves {
		if sv.confirmed {
			res.Saves++
		}
	}
	res.Keystroke, res.Seen, res.Missed = benchLatencies(sessions, saves)
	res.Lost, err = benchLost(ctx, cfg.Store, saves)
	return res, err
}

// benchUsers fills the store with a product per session and writes the users file with a
// user and a new key per session.
func benchUsers(ctx context.Context, cfg BenchConfig) ([]gossh.Signer, error) {
	sys := store.WithActor(ctx, store.Actor{Name: "bench", Role: store.RoleEditor})
	var users strings.Builder
	users.WriteString("users:\n")
	signers := make([]gossh.Signer, cfg.Sessions)
	for i := range signers {
		if _, err := cfg.Store.CreateRecord(sys, store.KindProduct, store.Values{
			"sku": fmt.Sprintf("bench-serve-%d", i), "name": "bench", "price": int64(100), "stock": int64(1),
		}); err != nil {
			return nil, fmt.Errorf("bench serve: make product %d: %w", i, err)
		}
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		if signers[i], err = gossh.NewSignerFromKey(priv); err != nil {
			return nil, err
		}
		fmt.Fprintf(&users, "  - name: bench%d\n    role: editor\n    keys: [%s]\n", i,
			strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signers[i].PublicKey()))))
	}
	return signers, os.WriteFile(filepath.Join(cfg.Dir, "users.yaml"), []byte(users.String()), 0o600)
}

// openBenchSession connects session i with key k and starts the editor in a terminal tall
// enough to list every product.
func openBenchSession(addr string, i int, k gossh.Signer) (*benchSession, error) {
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{
		User: "bench", Auth: []gossh.AuthMethod{gossh.PublicKeys(k)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("bench serve: session %d: %w", i, err)
	}
	sess, err := c.NewSession()
	if err != nil {
		return nil, err
	}
	if err := sess.RequestPty("xterm-256color", 80, 120, gossh.TerminalModes{}); err != nil {
		return nil, err
	}
	s := &benchSession{i: i, wake: make(chan struct{}, 1), seen: map[string]time.Time{}}
	out, err := sess.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if s.stdin, err = sess.StdinPipe(); err != nil {
		return nil, err
	}
	if err := sess.Shell(); err != nil {
		return nil, err
	}
	go s.read(out)
	return s, nil
}

// read takes the session's output as it comes: it notes the names it shows, and keeps
// the bytes for the steps waiting for them.
func (s *benchSession) read(out io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := out.Read(buf)
		now := time.Now()
		s.mu.Lock()
		s.out = append(s.out, buf[:n]...)
		benchNames(buf[:n], func(name string) {
			if _, ok := s.seen[name]; !ok {
				s.seen[name] = now
			}
		})
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// send writes keys after forgetting the output so far: a wait then sees only what came
// after them.
func (s *benchSession) send(keys string) time.Time {
	s.mu.Lock()
	s.out = s.out[:0]
	s.mu.Unlock()
	at := time.Now()
	_, _ = io.WriteString(s.stdin, keys)
	return at
}

// settle waits until the session's output has been quiet for quiet, at most for most.
func (s *benchSession) settle(quiet, most time.Duration) {
	for end := time.Now().Add(most); time.Now().Before(end); {
		s.mu.Lock()
		n := len(s.out)
		s.mu.Unlock()
		time.Sleep(quiet)
		s.mu.Lock()
		same := len(s.out) == n
		s.mu.Unlock()
		if same {
			return
		}
	}
}

// wait waits up to 10 seconds for output holding one of want since the last send; it
// returns when that output came. The terminal is sent only the cells that change, so a
// screen is known by any of a few of its texts.
func (s *benchSession) wait(want ...string) (time.Time, error) {
	return s.waitIn(func(out []byte) []byte { return out }, want...)
}

// waitText is wait in the text of the output, its escape sequences left out: a key's echo
// is its character drawn, not a letter that ends a sequence ("\x1b[K" is not a K).
func (s *benchSession) waitText(want ...string) (time.Time, error) {
	return s.waitIn(func(out []byte) []byte { return []byte(ansi.Strip(string(out))) }, want...)
}

// waitIn is wait looking in what text makes of the output.
func (s *benchSession) waitIn(text func([]byte) []byte, want ...string) (time.Time, error) {
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		out := text(s.out)
		ok := slices.ContainsFunc(want, func(w string) bool { return bytes.Contains(out, []byte(w)) })
		s.mu.Unlock()
		if ok {
			return time.Now(), nil
		}
		select {
		case <-s.wake:
		case <-deadline:
			s.mu.Lock()
			tail := s.out[max(0, len(s.out)-400):]
			s.mu.Unlock()
			return time.Time{}, fmt.Errorf("session %d: none of %q in %q", s.i, want, tail)
		}
	}
}

// listShown are texts of the list's screen.
var listShown = []string{"products", "by id", " of "}

// run is one session's work: its cursor to its product, then per round a dwell at the
// list, the product opened, a new name typed a key at a time, saved, and back to the list.
// It returns the saves tried and the steps that failed.
func (s *benchSession) run(cfg BenchConfig) ([]benchSave, []error) {
	var (
		saves  []benchSave
		failed []error
	)
	// The list's position ("1 of 50") shows once its rows are loaded: a j before them
	// would move nothing, and the session would edit another's product.
	if _, err := s.waitText(" of "); err != nil {
		return nil, []error{err}
	}
	// The list moves its cursor to the session's product before the rounds start: a key
	// sent meanwhile would open another product.
	s.send(strings.Repeat("j", s.i))
	s.settle(time.Second, time.Minute)
	s.atList = append(s.atList, span{from: time.Now()})
	for r := range cfg.Rounds {
		time.Sleep(cfg.Dwell/2 + time.Duration(mrand.Int64N(int64(cfg.Dwell/2)+1)))
		s.mu.Lock()
		s.atList[len(s.atList)-1].to = time.Now()
		s.mu.Unlock()
		sv, err := s.edit(cfg, r)
		if err != nil {
			failed = append(failed, err)
		}
		if sv != nil {
			saves = append(saves, *sv)
		}
		s.send("\x1b") // back to the list
		if _, err := s.wait(listShown...); err != nil {
			failed = append(failed, err)
		}
		s.mu.Lock()
		s.atList = append(s.atList, span{from: time.Now()})
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.atList[len(s.atList)-1].to = time.Now()
	s.mu.Unlock()
	return saves, failed
}

// edit opens the session's product, types round r's name and saves it.
func (s *benchSession) edit(cfg BenchConfig, r int) (*benchSave, error) {
	s.send("\r")
	if _, err := s.wait("· v"); err != nil { // the version shows once the record is read
		return nil, err
	}
	s.send("\t")
	if _, err := s.wait("▸ name"); err != nil {
		return nil, err
	}
	s.send("\x15") // Ctrl-U: the field emptied
	time.Sleep(cfg.Think)
	name := benchName(s.i, r)
	for _, c := range name {
		at := s.send(string(c))
		got, err := s.waitText(string(c))
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.pressed = append(s.pressed, got.Sub(at))
		s.mu.Unlock()
		time.Sleep(cfg.Think)
	}
	sv := &benchSave{session: s.i, name: name, at: s.send("\x13")} // Ctrl-S
	_, err := s.wait("saved v")
	sv.confirmed = err == nil
	return sv, err
}

// benchLatencies gathers the keystroke latencies and, for each save and each other
// session that had its list on screen when it was made, how long until it showed it.
func benchLatencies(sessions []*benchSession, saves []benchSave) (keys, seen Quantiles, missed int) {
	var pressed, shown []time.Duration
	for _, o := range sessions {
		o.mu.Lock()
		pressed = append(pressed, o.pressed...)
		for _, sv := range saves {
			if sv.session == o.i || !sv.confirmed {
				continue
			}
			for _, sp := range o.atList {
				if sp.from.After(sv.at) || !sp.to.After(sv.at) {
					continue
				}
				if t, ok := o.seen[sv.name]; ok && !t.After(sp.to) {
					shown = append(shown, t.Sub(sv.at))
				} else if sp.to.Sub(sv.at) >= time.Second {
					missed++
				}
			}
		}
		o.mu.Unlock()
	}
	return quantiles(pressed), quantiles(shown), missed
}

// benchLost counts products that lack a confirmed save (BenchResult.Lost).
func benchLost(ctx context.Context, st store.Store, saves []benchSave) (int, error) {
	last := map[int]benchSave{}    // the last confirmed save of each session
	count := map[int]int64{}       // confirmed saves of each session
	tried := map[int][]benchSave{} // every save tried
	for _, sv := range saves {
		tried[sv.session] = append(tried[sv.session], sv)
		if !sv.confirmed {
			continue
		}
		if cur, ok := last[sv.session]; !ok || sv.at.After(cur.at) {
			last[sv.session] = sv
		}
		count[sv.session]++
	}
	sys := store.WithActor(ctx, store.Actor{Name: "bench", Role: store.RoleEditor})
	recs, err := st.FindRecords(sys, store.Filter{Kind: store.KindProduct})
	if err != nil {
		return 0, fmt.Errorf("bench serve: read the products: %w", err)
	}
	lost := 0
	for i, rec := range recs {
		sv, ok := last[i]
		if !ok {
			continue
		}
		if rec.Version < 1+count[i] || !slices.ContainsFunc(tried[i], func(o benchSave) bool {
			return o.name == rec.Fields["name"] && !o.at.Before(sv.at)
		}) {
			lost++
		}
	}
	return lost, nil
}

// rss is the process's resident memory in bytes (0 where /proc is missing).
func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func heapInUse() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// loadavg is the machine's load (1, 5, 15 minutes) from /proc/loadavg, or "unknown".
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
