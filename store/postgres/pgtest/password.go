package pgtest

import (
	"net"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// PasswordServer starts a stand-in PostgreSQL server on 127.0.0.1 that asks every client for
// a cleartext password, records it and refuses it as a server refuses a wrong one (SQLSTATE
// 28P01). It returns the port and a function that returns the passwords received so far, in
// order. The test server trusts every client and never asks, so this is where the tests see
// what a client sends when asked. It stops when the test ends.
func PasswordServer(t testing.TB) (port int, received func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		got  []string
		done sync.WaitGroup
	)
	done.Add(1)
	go func() {
		defer done.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			askPassword(conn, func(pw string) {
				mu.Lock()
				got = append(got, pw)
				mu.Unlock()
			})
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		done.Wait()
	})
	return ln.Addr().(*net.TCPAddr).Port, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// askPassword plays the server's side of one connection's start: it asks for a password,
// reads it, hands it to record and only then refuses it, so a client that has seen the
// refusal knows its password is recorded.
func askPassword(conn net.Conn, record func(string)) {
	defer conn.Close()
	be := pgproto3.NewBackend(conn, conn)
	for {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			return
		}
		if _, ok := msg.(*pgproto3.StartupMessage); ok {
			break
		}
		if _, err := conn.Write([]byte("N")); err != nil { // no TLS, no GSS encryption
			return
		}
	}
	be.Send(&pgproto3.AuthenticationCleartextPassword{})
	if err := be.Flush(); err != nil {
		return
	}
	if err := be.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
		return
	}
	msg, err := be.Receive()
	if err != nil {
		return
	}
	pm, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return
	}
	record(pm.Password)
	be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: "password authentication failed"})
	_ = be.Flush() // the client may be gone already; what it sent is recorded
}
