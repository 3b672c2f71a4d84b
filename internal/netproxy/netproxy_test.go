package netproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(l)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn) error {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err := bufio.NewReader(c).ReadString('\n')
	return err
}

func TestCutAndRestore(t *testing.T) {
	p, err := Start(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	p.Cut()
	if err := roundTrip(c); err == nil {
		t.Fatal("a live connection still answers after Cut")
	}
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		if roundTrip(c2) == nil {
			t.Fatal("a new connection answers while cut")
		}
		c2.Close()
	}
	p.Restore()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if err := roundTrip(c3); err != nil {
		t.Fatalf("after Restore: %v", err)
	}
}

func TestLatency(t *testing.T) {
	p, err := Start(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetLatency(100 * time.Millisecond)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if err := roundTrip(c); err != nil {
		t.Fatal(err)
	}
	// Two hops of at least the latency each: a lower bound, not a timing assertion on speed.
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("a round trip took %v with 100 ms latency each way", d)
	}
}
