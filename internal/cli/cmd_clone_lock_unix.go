//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockClone takes the lock of a clone into a file, at path, without waiting: ok is false
// when another clone holds it. The lock is an flock on the file, which the system lets go
// when its process dies, so a killed clone leaves no lock behind. unlock removes the file
// before it lets the lock go: a process that opened it meanwhile finds, once it has the
// lock, that the file at path is no longer the one it locked, and tries again.
func lockClone(path string) (unlock func(), ok bool, err error) { return lockFile(path, "clone") }

// lockFile takes the lock named what (for messages) at path, as lockClone does: a tandem
// sync holds one too, next to its working copy.
func lockFile(path, what string) (unlock func(), ok bool, err error) {
	return flockFile(path, what, syscall.LOCK_EX|syscall.LOCK_NB)
}

// waitLockFile takes the lock named what at path as lockFile does, but waits while another
// process holds it; ok is always true on success. Where there is no flock (lockFile's other
// build), a lock a killed process left would never be let go, and ok is false: the caller
// goes on without the lock.
func waitLockFile(path, what string) (unlock func(), ok bool, err error) {
	return flockFile(path, what, syscall.LOCK_EX)
}

// flockFile takes the lock at path with flock operation how (waiting or not).
func flockFile(path, what string, how int) (unlock func(), ok bool, err error) {
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("%s lock: %w", what, err)
		}
		if err := syscall.Flock(int(f.Fd()), how); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("%s lock: %w", what, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return func() {
				_ = os.Remove(path)
				f.Close()
			}, true, nil
		}
		f.Close() // the file was replaced since it was opened: take the new one
	}
	return nil, false, fmt.Errorf("%s lock %s keeps changing", what, path)
}
