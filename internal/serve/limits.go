package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// Limits bound what the sessions of a server may take, so that it is safe to leave running.
// A zero member means its default (DefaultLimits).
type Limits struct {
	// Sessions is how many sessions may be open at once, all users together.
	Sessions int
	// PerUser is how many sessions one user may have open at once.
	PerUser int
	// Idle ends an editor session that has had no input for this long.
	Idle time.Duration
	// AuthPerMinute is how many refused keys an address may offer in a minute; after that
	// its connections are refused for the rest of the minute.
	AuthPerMinute int
	// Input is the most bytes an editor session may send as one line or one paste.
	Input int
}

// DefaultLimits are the limits a server has when none are given.
var DefaultLimits = Limits{Sessions: 100, PerUser: 8, Idle: 30 * time.Minute, AuthPerMinute: 20, Input: 256 << 10}

// Check refuses a limit below zero (zero means its default): it would refuse
// everyone. The error names the limit.
func (l Limits) Check() error {
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"sessions", l.Sessions < 0}, {"sessions per user", l.PerUser < 0}, {"idle time", l.Idle < 0},
		{"refused keys per minute", l.AuthPerMinute < 0}, {"input size", l.Input < 0},
	} {
		if c.bad {
			return fmt.Errorf("the limit of %s is below zero", c.name)
		}
	}
	return nil
}

// withDefaults returns l with its zero members set to their defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Sessions == 0 {
		l.Sessions = d.Sessions
	}
	if l.PerUser == 0 {
		l.PerUser = d.PerUser
	}
	if l.Idle == 0 {
		l.Idle = d.Idle
	}
	if l.AuthPerMinute == 0 {
		l.AuthPerMinute = d.AuthPerMinute
	}
	if l.Input == 0 {
		l.Input = d.Input
	}
	return l
}

// endError is why the server ended a session: the client reads it on stderr.
type endError string

func (e endError) Error() string { return string(e) }

// Why a session ends before its user ends it.
const (
	errRemoved  endError = "your access to this server was removed or changed; the session ends (unsaved edits are kept as a draft)"
	errStopping endError = "the server is stopping; the session ends (unsaved edits are kept as a draft)"
)

// errIdle is the message of a session ended after idle without input.
func errIdle(idle time.Duration) endError {
	return endError(fmt.Sprintf("no input for %s; the session ends (unsaved edits are kept as a draft)", idle))
}

// errInput is the message of a session that sent a line or paste longer than max bytes.
func errInput(max int) endError {
	return endError(fmt.Sprintf("input of more than %d bytes in one line or paste; the session ends (unsaved edits are kept as a draft)", max))
}

// admit refuses a new session of user when the server or the user is at its limit; else it
// registers se. The error is the message for the client.
func (s *Server) admit(se *session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) >= s.cfg.Limits.Sessions {
		return fmt.Errorf("the server has %d sessions open, its limit; try again later", len(s.sessions))
	}
	mine := 0
	for o := range s.sessions {
		if o.user == se.user {
			mine++
		}
	}
	if mine >= s.cfg.Limits.PerUser {
		return fmt.Errorf("you have %d sessions open, the limit for one person; close one first", mine)
	}
	s.sessions[se] = struct{}{}
	return nil
}

// authLimiter counts the keys refused to each address in the current minute.
type authLimiter struct {
	max int
	now func() time.Time

	mu      sync.Mutex
	minute  time.Time      // the start of the current minute
	refused map[string]int // by address (IP without port)
}

func newAuthLimiter(max int) *authLimiter {
	return &authLimiter{max: max, now: time.Now, refused: map[string]int{}}
}

// host is the address a limit counts against: the IP, whatever the port.
func host(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

// roll starts a new minute when the current one is over, forgetting every count: the map
// holds at most the addresses of one minute.
func (l *authLimiter) roll() {
	if now := l.now(); now.Sub(l.minute) >= time.Minute {
		l.minute = now
		clear(l.refused)
	}
}

// Blocked reports whether addr has used up its refusals for this minute.
func (l *authLimiter) Blocked(addr net.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll()
	return l.refused[host(addr)] >= l.max
}

// Refused counts a key refused to addr.
func (l *authLimiter) Refused(addr net.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll()
	l.refused[host(addr)]++
}

// Session requests that would give a session more than tandem: the ssh library accepts an
// agent request on its own, so it is refused before it gets there; X11 is refused as well.
const (
	reqAgent = "auth-agent-req@openssh.com"
	reqX11   = "x11-req"
)

// refuseForwarding wraps the session channel handler so that agent and X11 forwarding
// requests are answered no. Port forwarding needs no wrapper: without forwarding callbacks
// the library refuses tcpip-forward requests and direct-tcpip channels.
func refuseForwarding(next ssh.ChannelHandler) ssh.ChannelHandler {
	return func(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
		next(srv, conn, filteredChannel{nc}, ctx)
	}
}

// filteredChannel is a new session channel whose forwarding requests are refused.
type filteredChannel struct{ gossh.NewChannel }

// Accept accepts the channel and passes on its requests, but for agent and X11 forwarding.
func (c filteredChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := c.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err
	}
	out := make(chan *gossh.Request)
	go func() {
		defer close(out)
		for r := range reqs {
			if r.Type == reqAgent || r.Type == reqX11 {
				if r.WantReply {
					_ = r.Reply(false, nil)
				}
				continue
			}
			out <- r
		}
	}()
	return ch, out, nil
}

// resizeEvery is the most often a session's program hears of a new window size: a client
// that resizes thousands of times a second gets one redraw per interval.
const resizeEvery = 50 * time.Millisecond

// followWindow sends the client's window sizes to the program (with send) until ctx ends
// or windows closes, keeping only the newest size of those that come within resizeEvery of
// the last one sent.
func followWindow(ctx context.Context, send func(tea.Msg), windows <-chan ssh.Window) {
	var (
		pending *ssh.Window
		fire    <-chan time.Time
		last    time.Time
	)
	resize := func(w ssh.Window) {
		send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
		last = time.Now()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case w, ok := <-windows:
			if !ok {
				return
			}
			if fire != nil {
				pending = &w
				continue
			}
			if wait := resizeEvery - time.Since(last); wait > 0 {
				pending, fire = &w, time.After(wait)
				continue
			}
			resize(w)
		case <-fire:
			fire = nil
			resize(*pending)
			pending = nil
		}
	}
}

// inputGuard is an editor session's input as the program reads it: it notes when input
// last came, for the idle limit, and ends the session (end) when a line or a bracketed
// paste runs past max bytes, before the program holds it all in memory.
type inputGuard struct {
	r    io.Reader
	max  int
	end  context.CancelCauseFunc
	last atomic.Int64 // unix nanoseconds of the last input

	run    int     // bytes since the last line end, or since the paste began
	paste  bool    // inside a bracketed paste
	recent [6]byte // the last bytes read, to find the paste markers across reads
}

// The markers a terminal puts around pasted text (bracketed paste).
var (
	pasteStart = [6]byte{0x1b, '[', '2', '0', '0', '~'}
	pasteEnd   = [6]byte{0x1b, '[', '2', '0', '1', '~'}
)

func newInputGuard(r io.Reader, max int, end context.CancelCauseFunc) *inputGuard {
	g := &inputGuard{r: r, max: max, end: end}
	g.last.Store(time.Now().UnixNano())
	return g
}

// Read reads input and checks it; past the limit it ends the session and reads no more.
func (g *inputGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if n > 0 {
		g.last.Store(time.Now().UnixNano())
		if !g.check(p[:n]) {
			g.end(errInput(g.max))
			return 0, io.EOF
		}
	}
	return n, err
}

// check counts b into the current line or paste; false when it is over the limit.
func (g *inputGuard) check(b []byte) bool {
	for _, c := range b {
		copy(g.recent[:], g.recent[1:])
		g.recent[5] = c
		switch {
		case g.recent == pasteStart:
			g.paste, g.run = true, 0
		case g.recent == pasteEnd:
			g.paste, g.run = false, 0
		case !g.paste && (c == '\r' || c == '\n'):
			g.run = 0
		default:
			g.run++
		}
		if g.run > g.max {
			return false
		}
	}
	return true
}

// idleFor is how long the session has had no input.
func (g *inputGuard) idleFor() time.Duration {
	return time.Since(time.Unix(0, g.last.Load()))
}

// endWhenIdle ends the session (end) once it has had no input for idle, checking a few
// times per idle period, until ctx ends.
func (g *inputGuard) endWhenIdle(ctx context.Context, idle time.Duration) {
	t := time.NewTicker(max(idle/8, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if g.idleFor() >= idle {
				g.end(errIdle(idle))
				return
			}
		}
	}
}
