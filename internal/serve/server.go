// Package serve is tandem's team server: the editor over SSH (charm.land/wish), one store
// for every session, each person known by their key from the users file. A session with a
// terminal gets the TUI; a session with a command ("ssh HOST list product --json") runs that
// CLI command; either as the user the key proves.
package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/tui"
)

// Config is what a server serves and how.
type Config struct {
	// Listen is the address to listen on, host:port.
	Listen string
	// HostKey is the path of the server's private key; made (ed25519, 0600) when missing.
	HostKey string
	// Users is the path of the users file (see LoadUsers).
	Users string
	// Store is the one store every session uses.
	Store store.Store
	// TUI is the base of every session's TUI options: User, Role, the streams and the
	// window size are set per session.
	TUI tui.Options
	// Command runs a CLI command (args without the program name) on st, the session's view
	// of Store, with the actor in ctx and returns its exit status.
	Command func(ctx context.Context, st store.Store, args []string, stdin io.Reader, stdout, stderr io.Writer) int
	// Limits bound sessions, idle time, refused keys and input; zero members are defaults.
	Limits Limits
	// Log gets a line per connection, session, write and reload; nil discards them.
	Log *slog.Logger
	// Out gets what the operator reads at start: the host key's fingerprint, the address.
	Out io.Writer
	// StopWait bounds how long a stop waits for sessions to end; zero means 10 seconds.
	StopWait time.Duration
	// Poll is how often the users file is checked for changes; zero means 1 second.
	Poll time.Duration
}

// Server is a running team server.
type Server struct {
	cfg       Config
	srv       *ssh.Server
	ln        net.Listener
	authLimit *authLimiter

	mu       sync.Mutex
	users    *Users
	stamp    []byte // the users file's content, to notice a change
	sessions map[*session]struct{}
	stopping bool
}

// session is one open SSH session, ended by cancel when its user goes away.
type session struct {
	user   string
	grant  string // User.Grant: a change ends the session
	key    gossh.PublicKey
	cancel context.CancelCauseFunc
}

type ctxKey int

const (
	userKey ctxKey = iota // the *User a connection's key proved
	connKey               // the connection's *connLog
)

// New loads the users file and the host key (making it on first start) and listens; Serve
// then accepts sessions. Errors name the file and line at fault.
func New(cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.StopWait == 0 {
		cfg.StopWait = 10 * time.Second
	}
	if cfg.Poll == 0 {
		cfg.Poll = time.Second
	}
	cfg.Limits = cfg.Limits.withDefaults()
	s := &Server{cfg: cfg, sessions: map[*session]struct{}{}, authLimit: newAuthLimiter(cfg.Limits.AuthPerMinute)}
	data, err := os.ReadFile(cfg.Users)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	users, err := parseUsers(cfg.Users, data, cfg.Store.Registry())
	if err != nil {
		return nil, err
	}
	s.users, s.stamp = users, data
	signer, made, err := hostKey(cfg.HostKey)
	if err != nil {
		return nil, err
	}
	srv, err := wish.NewServer(
		// Given first: without a host key wish would make one in the working directory.
		func(srv *ssh.Server) error { srv.AddHostKey(signer); return nil },
		wish.WithPublicKeyAuth(s.auth),
		wish.WithMiddleware(s.handle),
	)
	if err != nil {
		return nil, fmt.Errorf("ssh server: %w", err)
	}
	// No password or keyboard-interactive login, no port forwarding (nil callbacks refuse
	// it), no subsystems (sftp), no agent or X11 forwarding: only sessions, which run
	// tandem and nothing else.
	srv.PasswordHandler = nil
	srv.KeyboardInteractiveHandler = nil
	srv.HandshakeTimeout = 30 * time.Second
	srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": refuseForwarding(ssh.DefaultSessionHandler)}
	srv.ConnCallback = s.logConnections
	s.srv = srv
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.ln = ln
	state := "host key"
	if made {
		state = "made a new host key"
	}
	fmt.Fprintf(cfg.Out, "tandem serve: %s %s: %s\n", state, cfg.HostKey, gossh.FingerprintSHA256(signer.PublicKey()))
	fmt.Fprintf(cfg.Out, "tandem serve: listening on %s for %d users from %s\n", ln.Addr(), users.Len(), cfg.Users)
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve accepts sessions until ctx ends, then stops: every session is told and ends (its
// TUI keeps drafts and releases leases), and the wait for them is bounded by StopWait.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	said := "" // the last reload error logged: a file gone for a while is said once
	for {
		select {
		case err := <-errc:
			return fmt.Errorf("serve: %w", err)
		case <-tick.C:
			err := s.reloadIfChanged()
			if err != nil && err.Error() != said {
				s.cfg.Log.Error("users file not reloaded; the old one stays", "err", err.Error())
			}
			said = ""
			if err != nil {
				said = err.Error()
			}
		case <-ctx.Done():
			return s.stop()
		}
	}
}

// stop ends every session and the server, waiting at most StopWait.
func (s *Server) stop() error {
	s.mu.Lock()
	s.stopping = true
	for se := range s.sessions {
		se.cancel(errStopping)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.StopWait)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		// Connections a client keeps open after its sessions ended: close them.
		_ = s.srv.Close()
		s.cfg.Log.Info("stop: closed connections still open", "after", s.cfg.StopWait.String())
	}
	s.cfg.Log.Info("stopped")
	return nil
}

// Reload reads the users file again. A bad file is refused and the old one stays; sessions
// of users removed, or whose key or role changed, end with a message.
func (s *Server) Reload() error {
	data, err := os.ReadFile(s.cfg.Users)
	if err != nil {
		return fmt.Errorf("users file: %w", err)
	}
	return s.reload(data)
}

func (s *Server) reloadIfChanged() error {
	data, err := os.ReadFile(s.cfg.Users)
	if err != nil {
		return fmt.Errorf("users file: %w", err)
	}
	s.mu.Lock()
	same := bytes.Equal(data, s.stamp)
	s.mu.Unlock()
	if same {
		return nil
	}
	return s.reload(data)
}

func (s *Server) reload(data []byte) error {
	users, err := parseUsers(s.cfg.Users, data, s.cfg.Store.Registry())
	if err != nil {
		s.mu.Lock()
		s.stamp = data // said once, not every poll
		s.mu.Unlock()
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users, s.stamp = users, data
	ended := 0
	for se := range s.sessions {
		if !users.Has(se.user, se.grant, se.key) {
			se.cancel(errRemoved)
			ended++
		}
	}
	s.cfg.Log.Info("users file reloaded", "users", users.Len(), "sessions_ended", ended)
	return nil
}

// auth accepts a key of a user in the users file and refuses every other.
func (s *Server) auth(ctx ssh.Context, key ssh.PublicKey) bool {
	c := connOf(ctx)
	if s.authLimit.Blocked(ctx.RemoteAddr()) {
		c.refused("too many refused keys from this address this minute", key)
		return false
	}
	s.mu.Lock()
	u := s.users.Lookup(key)
	s.mu.Unlock()
	if u == nil {
		s.authLimit.Refused(ctx.RemoteAddr())
		c.refused("unknown key", key)
		return false
	}
	ctx.SetValue(userKey, u)
	c.accepted(u.Name, key)
	return true
}

// handle runs one session: the TUI when it has a terminal and no command, else the command.
func (s *Server) handle(_ ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		code := s.run(sess)
		_ = sess.Exit(code)
	}
}

func (s *Server) run(sess ssh.Session) int {
	key := sess.PublicKey()
	s.mu.Lock()
	u := s.users.Lookup(key) // the file may have changed since the key was accepted
	stopping := s.stopping
	s.mu.Unlock()
	if u == nil || stopping {
		why := errRemoved
		if stopping {
			why = errStopping
		}
		fmt.Fprintf(sess.Stderr(), "tandem: %s\n", why)
		return 1
	}
	ctx, cancel := context.WithCancelCause(sess.Context())
	defer cancel(nil)
	se := &session{user: u.Name, grant: u.Grant(), key: key, cancel: cancel}
	if err := s.admit(se); err != nil {
		fmt.Fprintf(sess.Stderr(), "tandem: %s\n", err)
		s.cfg.Log.Info("session refused", "user", u.Name, "addr", sess.RemoteAddr().String(), "reason", err.Error())
		return 1
	}
	connOf(sess.Context()).sessionOpened()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, se)
		s.mu.Unlock()
	}()
	actx := store.WithActor(ctx, Actor(u))
	cmd := sess.Command()
	log := s.cfg.Log.With("user", u.Name, "addr", sess.RemoteAddr().String(), "key", gossh.FingerprintSHA256(key))
	st := withWriteLog(s.cfg.Store, log)
	start := time.Now()
	var code int
	switch {
	case len(cmd) == 0:
		log.Info("session", "what", "tui")
		code = s.runTUI(actx, cancel, st, sess, u)
	case len(cmd) == 1 && cmd[0] == StoreCommand:
		log.Info("session", "what", "store")
		code = s.serveStore(actx, st, sess, u)
	default:
		log.Info("session", "what", "command", "command", cmd[0])
		code = s.cfg.Command(actx, st, cmd, sess, sess, sess.Stderr())
	}
	var why endError
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &why) {
		fmt.Fprintf(sess.Stderr(), "\ntandem: %s\n", why)
		if code == 0 {
			code = 1
		}
	}
	log.Info("session ended", "exit", code, "duration", time.Since(start).Round(time.Millisecond).String())
	return code
}

// Actor is who a user of the server writes as, with the user's permissions, which the store
// checks on every write. A viewer reads only: the store refuses every write of theirs.
func Actor(u *User) store.Actor {
	a := store.Actor{Name: u.Name, Role: store.RoleEditor, Perms: u.Permissions()}
	if u.Role == RoleViewer {
		a.ReadOnly = "role viewer: reads records, writes none"
	}
	return a
}

// feedLinger is how long a session's change feed waits after a change for others to draw
// with it: every save reaches every session, so a server of n sessions draws n screens a
// save; with saves coming faster than this, a session draws several at once.
const feedLinger = 100 * time.Millisecond

// feedSpread is how much longer, at random, a session's feed may wait: the sessions hear a
// save at once and would all draw it at once, where a key pressed in one of them would wait
// for every other's frame; spread, they draw one after another. Measured with 50 sessions on
// two cores, keystroke p99 went from 34-56 ms at 150 ms to 23-32 ms at 400 ms, and a save
// still shows in every session within the promised second (p99 about 0.5 s).
const feedSpread = 400 * time.Millisecond

// runTUI runs the TUI on st in a session with a terminal, its size following the client's
// window; end ends the session early (idle, oversized input).
func (s *Server) runTUI(ctx context.Context, end context.CancelCauseFunc, st store.Store, sess ssh.Session, u *User) int {
	_, windows, ok := sess.Pty()
	if !ok {
		fmt.Fprintln(sess.Stderr(), "tandem: no terminal: connect with ssh -t for the editor, or give a command (ssh HOST list product --json)")
		return 2
	}
	opts := s.cfg.TUI
	opts.User = u.Name
	opts.Role = Actor(u).Role
	opts.ReadOnly = Actor(u).ReadOnly
	opts.Perms = u.Permissions()
	opts.NoEditor = "no external editor over SSH: it would run on the server; edit the text here"
	opts.FeedLinger = feedLinger
	opts.FeedSpread = feedSpread
	input := newInputGuard(sess, s.cfg.Limits.Input, end)
	go input.endWhenIdle(ctx, s.cfg.Limits.Idle)
	opts.ProgramOptions = append(bubbletea.MakeOptions(sess), tea.WithInput(input))
	opts.Started = func(p *tea.Program) { go followWindow(ctx, p.Send, windows) }
	if err := tui.Run(ctx, st, opts); err != nil {
		fmt.Fprintf(sess.Stderr(), "tandem: %s\n", safe.Text(err.Error()))
		return 1
	}
	return 0
}
