package torture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ExecStarter returns a Config.Start that runs each writer as an OS process of the tandem
// binary exe: `tandem --db DSN torture worker …`.
func ExecStarter(exe, dsn string) func(ctx context.Context, cfg WorkerConfig) (Proc, error) {
	return func(ctx context.Context, cfg WorkerConfig) (Proc, error) {
		args := []string{"--db", dsn, "--user", cfg.Name, "torture", "worker",
			"--seed", strconv.FormatUint(cfg.Seed, 10), "--journal", cfg.Journal,
			"--products", joinIDs(cfg.Products), "--documents", joinIDs(cfg.Docs)}
		cmd := exec.Command(exe, args...)
		p := &process{cmd: cmd}
		cmd.Stderr = &p.stderr
		// The writer must outlive neither the harness's context nor the harness: it is
		// stopped by Stop or Kill, never left running.
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", exe, err)
		}
		p.done = make(chan struct{})
		go func() { p.err = cmd.Wait(); close(p.done) }()
		return p, nil
	}
}

type process struct {
	cmd    *exec.Cmd
	stderr syncBuffer
	done   chan struct{}
	err    error
	killed bool
}

func (p *process) Kill() error {
	p.killed = true
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	<-p.done
	return nil
}

func (p *process) Stop() error {
	if p.killed {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("did not stop within 15 s of SIGTERM")
	}
	if p.err != nil && !diedOfTerm(p.err) {
		return fmt.Errorf("%w: %s", p.err, strings.TrimSpace(p.stderr.String()))
	}
	return nil
}

// diedOfTerm reports whether err is the exit of a process that SIGTERM ended by its default
// action: a writer started (after a kill) moments before the stop has no handler yet. That
// is a stop too; what it wrote, the invariants check.
func diedOfTerm(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

// syncBuffer is a bytes.Buffer safe for the process's writes and our reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 64<<10 {
		return len(p), nil // enough to explain a failure
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ",")
}

// ParseIDs parses a comma-separated list of record ids.
func ParseIDs(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("%q is not a record id", f)
		}
		out = append(out, id)
	}
	return out, nil
}

// WithApplicationName returns a PostgreSQL DSN whose connections carry name as their
// application_name, so TerminateBackends can find exactly them.
func WithApplicationName(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", errors.New("the PostgreSQL DSN is not a URL")
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// TerminateBackends ends every server connection whose application_name is name, as a
// server restart would, and returns how many it ended.
func TerminateBackends(ctx context.Context, dsn, name string) (int, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, fmt.Errorf("connect to terminate backends: %w", err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND pid <> pg_backend_pid()`, name).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("terminate backends: %w", err)
	}
	return n, nil
}
