package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/internal/serve"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/remote"
)

// A store reached through a team server: ssh://[user@]host[:port][/]. tandem runs the
// OpenSSH client (ssh, or the command in TANDEM_SSH, as git does with GIT_SSH_COMMAND), so
// the person's keys, agent, known_hosts and ~/.ssh/config apply as they do for any ssh;
// the server runs its store service in that session, as the user the key proves.

// sshCommandEnv names the environment variable that replaces the ssh command.
const sshCommandEnv = "TANDEM_SSH"

// isSSHDSN reports whether dsn names a store behind a team server.
func isSSHDSN(dsn string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(dsn)), "ssh://")
}

// sshTarget is where an ssh:// DSN points.
type sshTarget struct {
	user, host, port string
}

// parseSSHDSN reads an ssh:// DSN. EINVALID for a password in it (keys only), a path
// (the server serves one store), or no host.
func parseSSHDSN(label, dsn string) (sshTarget, error) {
	u, err := url.Parse(strings.TrimSpace(dsn))
	if err != nil {
		return sshTarget{}, store.Errorf(store.EINVALID, "%s: not an ssh:// address (ssh://[user@]host[:port])", label)
	}
	if _, has := u.User.Password(); has {
		return sshTarget{}, store.Errorf(store.EINVALID, "%s: an ssh:// address takes no password: the team server knows people by their SSH keys", label)
	}
	if u.Hostname() == "" || strings.HasPrefix(u.Hostname(), "-") {
		return sshTarget{}, store.Errorf(store.EINVALID, "%s: the ssh:// address names no host (ssh://[user@]host[:port])", label)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return sshTarget{}, store.Errorf(store.EINVALID, "%s: an ssh:// address is ssh://[user@]host[:port]: a team server serves one store", label)
	}
	return sshTarget{user: u.User.Username(), host: u.Hostname(), port: u.Port()}, nil
}

// sshArgs is the ssh command line that runs the store service on t.
func (t sshTarget) sshArgs() []string {
	cmd := strings.Fields(os.Getenv(sshCommandEnv))
	if len(cmd) == 0 {
		cmd = []string{"ssh"} // unset or blank
	}
	cmd = append(cmd, "-T", "-o", "ConnectTimeout=15")
	if t.port != "" {
		cmd = append(cmd, "-p", t.port)
	}
	if t.user != "" {
		cmd = append(cmd, "-l", t.user)
	}
	return append(cmd, "--", t.host, serve.StoreCommand)
}

// openRemote opens the store behind a team server. EUNAVAILABLE with what ssh said when
// the server cannot be reached or refuses the key.
func openRemote(ctx context.Context, dsn string) (store.Store, error) {
	t, err := parseSSHDSN("--db", dsn)
	if err != nil {
		return nil, err
	}
	args := t.sshArgs()
	cmd := exec.Command(args[0], args[1:]...)
	stderr := &capped{max: 4 << 10}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, store.Errorf(store.EUNAVAILABLE, "%s: start %s: %v (set %s to the ssh command to use)", t.host, args[0], err, sshCommandEnv)
	}
	conn := newSSHConn(cmd, in, out, errPipe, stderr)
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := remote.Dial(dctx, conn)
	if err != nil {
		said := strings.TrimSpace(stderr.String())
		if said == "" {
			return nil, fmt.Errorf("team server %s: %w", t.host, err)
		}
		return nil, &store.Error{Code: store.ErrorCode(err), Message: fmt.Sprintf("team server %s: %s", t.host, said), Err: err}
	}
	return c, nil
}

// sshConn is the ssh process's standard input and output as one stream; Close ends the
// session and waits for the process (a bounded while, then kills it).
type sshConn struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
	stderr *capped
	said   chan struct{} // closed once ssh's stderr has ended (ssh exits, or Close)
	once   sync.Once
}

// newSSHConn is the stream of cmd, started, with its stdin in and stdout out; what it
// prints on errPipe is kept in stderr.
func newSSHConn(cmd *exec.Cmd, in io.WriteCloser, out, errPipe io.ReadCloser, stderr *capped) *sshConn {
	c := &sshConn{cmd: cmd, in: in, out: out, stderr: stderr, said: make(chan struct{})}
	go func() {
		_, _ = io.Copy(stderr, errPipe)
		close(c.said)
	}()
	return c
}

// sshSaysWait bounds how long a read that failed waits for ssh to end, so that what the
// server or ssh said on the way out can be told.
const sshSaysWait = 2 * time.Second

// Read reads the stream. When it ends, the error carries what ssh printed (the server's
// "your access to this server was removed …", ssh's own "Connection reset"): without it
// the person would read only that the connection ended.
func (c *sshConn) Read(p []byte) (int, error) {
	n, err := c.out.Read(p)
	if err == nil {
		return n, nil
	}
	select {
	case <-c.said:
	case <-time.After(sshSaysWait):
	}
	if said := strings.TrimSpace(c.stderr.String()); said != "" {
		err = fmt.Errorf("%w (%s)", err, strings.ReplaceAll(safe.Text(said), "\n", "; "))
	}
	return n, err
}

func (c *sshConn) Write(p []byte) (int, error) { return c.in.Write(p) }

func (c *sshConn) Close() error {
	c.once.Do(func() {
		c.in.Close()
		// Wait closes the pipes: only once ssh has ended and its last words are read.
		select {
		case <-c.said:
		case <-time.After(5 * time.Second):
			_ = c.cmd.Process.Kill()
			select { // a child of ssh (a ProxyCommand) may hold stderr open
			case <-c.said:
			case <-time.After(sshSaysWait):
			}
		}
		_ = c.cmd.Wait()
	})
	return nil
}

// capped keeps the first max bytes written to it (what ssh says on failure).
type capped struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
