//go:build !unix

package sqlite

import "os"

// writable reports whether the file at path may be written, by its mode bits (SQLite itself
// falls back to reading a file it cannot open for writing, and inTx reports that).
func writable(path string) bool {
	fi, err := os.Stat(path)
	return err != nil || fi.Mode().Perm()&0o200 != 0
}
