//go:build unix

package cli

import (
	"io"
	"os/exec"
	"strings"
	"testing"
)

// When the team server ends a store session (the user removed from its users file, the
// server stopping), the client's error says what the server said on stderr, not only that
// the stream ended; escape sequences in it are shown as escapes.
func TestSSHConn_EndSaysWhy(t *testing.T) {
	cmd := exec.Command("sh", "-c", `printf 'tandem: your access to this server was removed\033[2J\n' >&2; exit 1`)
	stderr := &capped{max: 4 << 10}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := newSSHConn(cmd, in, out, errPipe, stderr)
	defer c.Close()
	_, err = io.ReadFull(c, make([]byte, 4))
	if err == nil || !strings.Contains(err.Error(), "your access to this server was removed") {
		t.Fatalf("read after the server ended the session: %v, want what it said", err)
	}
	if strings.Contains(err.Error(), "\x1b") {
		t.Errorf("the server's words came through raw: %q", err)
	}
}
