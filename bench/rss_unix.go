//go:build unix

package bench

import (
	"os/exec"
	"runtime"
	"syscall"
)

// maxRSS returns the peak resident memory of the ended process cmd in bytes, 0 when the
// system does not say.
func maxRSS(cmd *exec.Cmd) int64 {
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss // bytes there
	}
	return ru.Maxrss << 10 // kilobytes on Linux and the BSDs
}
