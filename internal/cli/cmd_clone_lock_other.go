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
func lockClone(path string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("clone lock: %w", err)
	}
	f.Close()
	return func() { _ = os.Remove(path) }, true, nil
}
