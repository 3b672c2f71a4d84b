//go:build unix

package sqlite

import "syscall"

// writable reports whether this process may write the file at path. access(2) knows what
// the mode bits do not show: ACLs, read-only mounts and immutable files (which refuse even
// root). It never opens the file: closing any descriptor of a database file would drop this
// process's POSIX locks on it, including SQLite's.
func writable(path string) bool {
	const wOK = 2 // W_OK
	return syscall.Access(path, wOK) == nil
}
