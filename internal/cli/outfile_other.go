//go:build !unix

package cli

import (
	"errors"
	"os"
)

// dupDescriptor is not available here: -o names a descriptor only on Unix.
func dupDescriptor(n int, name string) (*os.File, error) {
	return nil, &os.PathError{Op: "dup", Path: name, Err: errors.ErrUnsupported}
}
