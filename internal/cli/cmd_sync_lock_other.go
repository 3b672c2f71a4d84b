//go:build !unix

package cli

import "github.com/tandem-editor/tandem/internal/safe"

// syncLockNote is what the refusal of a second sync adds about the lock: without flock the
// lock is the file's existence, which a killed sync leaves behind.
func syncLockNote(path string) string {
	return " (a sync that was killed leaves " + safe.Line(path) + " behind: remove it only when no sync is running)"
}
