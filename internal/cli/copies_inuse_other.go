//go:build !unix

package cli

// openedBy would return the id of another process that has the SQLite database at path
// open; without fcntl locks to ask, it returns 0.
func openedBy(string) int { return 0 }
