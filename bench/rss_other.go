//go:build !unix

package bench

import "os/exec"

// maxRSS returns 0: this system reports no resident memory of a child process here.
func maxRSS(*exec.Cmd) int64 { return 0 }
