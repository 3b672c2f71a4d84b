//go:build unix

package cli

import (
	"os"
	"syscall"
)

// dupDescriptor returns a copy of this process's descriptor n as a file named name; closing
// it leaves n open.
func dupDescriptor(n int, name string) (*os.File, error) {
	syscall.ForkLock.RLock()
	d, err := syscall.Dup(n)
	if err == nil {
		syscall.CloseOnExec(d)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: name, Err: err}
	}
	return os.NewFile(uintptr(d), name), nil
}
