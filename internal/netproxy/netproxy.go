// Package netproxy is a TCP proxy for tests: it stands between tandem and a server (PostgreSQL
// on 127.0.0.1) and can add latency to what it forwards and cut the connection and restore
// it, so that tests can take a server away the way a network does without stopping it.
package netproxy

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards the connections made to its address to a target address. Cut closes the
// live connections and refuses new ones until Restore; SetLatency delays every chunk
// forwarded, in both directions.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	cut     bool
	latency time.Duration
	conns   map[net.Conn]bool
	closed  bool
	wg      sync.WaitGroup
}

// Start listens on a free port of 127.0.0.1 and forwards to target (host:port). It returns
// an error when it cannot listen.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netproxy: listen: %w", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, host:port, to give the client instead of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetLatency delays each chunk forwarded from now on by d, in either direction (0: none).
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
}

// Cut closes every live connection and refuses new ones (closed as soon as accepted) until
// Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
}

// Restore accepts and forwards new connections again after Cut.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Close stops the proxy and closes every connection; it waits for its goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		if p.cut || p.closed {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c] = true
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) serve(c net.Conn) {
	defer p.wg.Done()
	defer p.forget(c)
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(s) {
		_ = s.Close()
		return
	}
	defer p.forget(s)
	done := make(chan struct{}, 2)
	go func() { p.pipe(s, c); done <- struct{}{} }()
	go func() { p.pipe(c, s); done <- struct{}{} }()
	<-done
	// One direction ended: end both, as a dropped connection does.
	_ = c.Close()
	_ = s.Close()
	<-done
}

// track adds conn to the live connections unless the proxy was cut or closed meanwhile.
func (p *Proxy) track(conn net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.closed {
		return false
	}
	p.conns[conn] = true
	return true
}

func (p *Proxy) forget(conn net.Conn) {
	_ = conn.Close()
	p.mu.Lock()
	delete(p.conns, conn)
	p.mu.Unlock()
}

// pipe copies from src to dst, each chunk after the latency of the moment.
func (p *Proxy) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			d := p.latency
			p.mu.Unlock()
			if d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a closed connection
		}
	}
}
