//go:build unix

package cli

import (
	"io"
	"os"

	"github.com/charmbracelet/x/term"
)

// needTerminal returns a usage error unless the TUI has a terminal to run on: standard input,
// or else the process's controlling terminal, which the TUI opens (/dev/tty) when its input
// is piped.
func needTerminal(stdin io.Reader) error {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(f.Fd()) {
		return nil
	}
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return usagef("the TUI needs a terminal and there is none (standard input is not one, and %v); give a command, such as 'tandem list products' (tandem --help lists them)", err)
	}
	return tty.Close()
}
