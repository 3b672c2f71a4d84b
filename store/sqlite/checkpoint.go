package sqlite

import "time"

// A commit in WAL mode appends to the -wal file; a checkpoint copies the pages back into
// the database file and lets the WAL start over. SQLite's default runs the checkpoint in the
// commit that takes the WAL past 1,000 pages, so one save in a few hundred waits for it
// (and its fsync): that save is the p99 of a working copy's saves, several milliseconds
// where the rest take a fraction of one. Here a goroutine of the store checkpoints after
// commits instead, off every save's path, on a reading connection (a PASSIVE checkpoint
// waits for no writer and no writer waits for it); the commit runs one itself only past
// backstopPages, when writes outrun the goroutine.

const (
	// checkpointEvery is how often the goroutine looks for commits to checkpoint.
	checkpointEvery = 100 * time.Millisecond
	// backstopPages is the WAL's size, in pages, past which a commit checkpoints itself.
	backstopPages = 2000
)

// committed tells the store's subscribers and its checkpoints that a transaction committed.
func (db *DB) committed() {
	db.dirty.Store(true)
	db.commits.Broadcast()
}

// startCheckpoints runs the background checkpoints until Close.
func (db *DB) startCheckpoints() {
	db.wg.Add(1)
	go func() {
		defer db.wg.Done()
		tick := time.NewTicker(checkpointEvery)
		defer tick.Stop()
		for {
			select {
			case <-db.ctx.Done():
				return
			case <-tick.C:
			}
			if db.dirty.Swap(false) {
				// Busy or not, the next commit marks the store dirty again; the last
				// connection's close checkpoints what is left.
				_, _ = db.read.ExecContext(db.ctx, "PRAGMA wal_checkpoint(PASSIVE)")
			}
		}
	}()
}
