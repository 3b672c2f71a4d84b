//go:build !unix

package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// lockClone takes the lock of a clone into a file, at path, without waiting: ok is false
// when another clone holds it. Without flock the lock is the file's existence, so a killed
// clone leaves it behind and the message of the next clone names it.
func lockClone(path string) (unlock func(), ok bool, err error) { return lockFile(path, "clone") }

// lockFile takes the lock named what (for messages) at path, as lockClone does: a tandem
// sync holds one too, next to its working copy.
func lockFile(path, what string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s lock: %w", what, err)
	}
	f.Close()
	return func() { _ = os.Remove(path) }, true, nil
}

// waitLockFile would wait for the lock at path, but without flock a lock is the file's
// existence, which a killed process leaves behind for good: ok is false, and the caller goes
// on without the lock.
func waitLockFile(path, what string) (unlock func(), ok bool, err error) {
	return func() {}, false, nil
}
