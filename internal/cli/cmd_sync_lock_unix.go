//go:build unix

package cli

// syncLockNote is what the refusal of a second sync adds about the lock: nothing to do by
// hand, since the system lets an flock go when its holder dies. Removing the lock file
// while a sync runs would let a second one start.
func syncLockNote(string) string {
	return " (the lock goes with that sync, also when its process is killed)"
}
