//go:build !unix

package cli

import "io"

// needTerminal lets the TUI look for its terminal itself: on this system it opens the
// console (CONIN$), which needs no check here.
func needTerminal(io.Reader) error { return nil }
