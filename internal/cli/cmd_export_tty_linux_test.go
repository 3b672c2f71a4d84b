package cli

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a new pseudo-terminal and returns its master and the path of its slave
// (/dev/pts/N); both are closed at the end of the test.
func openPTY(t *testing.T) (master *os.File, slave string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here (%v): the terminal cases of -o need one", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("number of the pseudo-terminal: %v", err)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n)
}

// TestCLI_ExportToTerminalSanitised: an export whose -o reaches a terminal by any path
// (the terminal's own /dev/pts/N, /dev/tty, /dev/stdout or /dev/stderr when they are one)
// goes through the same sanitiser as stdout on a terminal: the OSC planted in a description
// (which would set the pane's title) arrives as the visible text \x1b]0;…, never raw.
func TestCLI_ExportToTerminalSanitised(t *testing.T) {
	dsn := newSQLiteStore(t)
	p := mustCreate(t, dsn, "product", "sku=TTY-1", "name=Terminal")
	planted := "osc \x1b]0;pwned\x07 csi \u009b31m end"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("UPDATE products SET description = ? WHERE id = ?", planted, p.ID)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, out string
		// how the process is started: its stdout and stderr on the terminal, or the
		// terminal its controlling one
		stdout, stderr, ctty bool
	}{
		{name: "the terminal's path"},
		{name: "/dev/tty", out: "/dev/tty", ctty: true},
		{name: "/dev/stdout", out: "/dev/stdout", stdout: true},
		{name: "/dev/stderr", out: "/dev/stderr", stderr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			master, path := openPTY(t)
			slave, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer slave.Close()
			out := c.out
			if out == "" {
				out = path
			}
			args := []string{"export", "products", "--fields", "sku,description", "--format", "csv", "-o", out}
			cmd := tandemCmd(dsn, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if c.stdout {
				cmd.Stdout = slave
			}
			if c.stderr {
				cmd.Stderr = slave
			}
			if c.ctty {
				cmd.Stdin = slave
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			}
			read := make(chan string, 1)
			go func() {
				var b bytes.Buffer
				_, _ = io.Copy(&b, master) // ends with EIO once every slave is closed
				read <- b.String()
			}()
			err = cmd.Run()
			slave.Close()
			screen := <-read
			if err != nil {
				t.Fatalf("tandem %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
			}
			if strings.Contains(screen, "\x1b]") || strings.Contains(screen, "\u009b") {
				t.Errorf("-o %s wrote the planted escape sequences raw to the terminal:\n%q", out, screen)
			}
			if !strings.Contains(screen, `\x1b]0;pwned\x07`) || !strings.Contains(screen, "TTY-1") {
				t.Errorf("-o %s: the terminal showed %q; want the record with its escapes visible", out, screen)
			}
		})
	}
}
