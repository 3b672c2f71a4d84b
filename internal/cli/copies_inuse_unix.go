//go:build unix

package cli

import (
	"os"
	"syscall"
)

// sqliteShared is the byte range of a database file on which SQLite takes its shared
// lock (the "shared" bytes after the pending and reserved bytes at 1 GiB): a connection in
// WAL mode holds a read lock on it for as long as it is open.
const (
	sqliteSharedFirst = 0x40000002
	sqliteSharedSize  = 510
)

// openedBy returns the id of another process that has the SQLite database at path open
// (a read lock on its shared bytes), or 0 when none has, or the file cannot be asked.
func openedBy(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: sqliteSharedFirst, Len: sqliteSharedSize}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil || lk.Type == syscall.F_UNLCK {
		return 0
	}
	return int(lk.Pid)
}
