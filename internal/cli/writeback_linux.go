package cli

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// writebackEvery is how often startWriteback hands the file's new pages to the disk.
const writebackEvery = 50 * time.Millisecond

// startWriteback hands the pages written to the file at path to the disk as they come,
// until stop is called, so that the fsync after a large write (a clone's) waits for the
// last of them only, not for all: sync_file_range(2) with SYNC_FILE_RANGE_WRITE starts the
// writing of the dirty pages and returns, from a goroutine of its own. It promises nothing
// about durability (the fsync still does); a file it cannot open is left to the fsync.
func startWriteback(path string) (stop func()) {
	f, err := os.Open(path)
	if err != nil {
		return func() {}
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(writebackEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE) != nil {
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		f.Close()
	}
}
