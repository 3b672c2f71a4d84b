package torture

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Entry is one line of a worker's journal. A worker writes "try" before it sends a write whose
// effect the checks count, and "ok" once the store acknowledged it; a write killed in between
// leaves a "try" alone, which the checks treat as "may or may not have been applied".
//
// Leases are journaled as the holder saw them (Op "lease"), on the holder's own clock, so the
// lease check does not have to trust the store's account: State "acquired" once AcquireLease
// returned a lease, "renewed" once ExtendLease succeeded, "released" just before ReleaseLease
// is sent (the holder stops relying on the lease there), and "lost" when a renewal was
// refused. Sent is when the call was sent, At when it returned (for "released": when the
// holder let go), both Unix nanoseconds of the holder's wall clock.
type Entry struct {
	Op    string `json:"op"` // adjust (stock += Delta with Key), inc (price += 1 cent, version-checked), lease
	State string `json:"state"`
	ID    int64  `json:"id"`
	Key   string `json:"key,omitempty"`
	Delta int64  `json:"delta,omitempty"`

	Holder string        `json:"holder,omitempty"` // lease: the worker's name
	Kind   store.Kind    `json:"kind,omitempty"`   // lease: the record's kind
	Group  string        `json:"group,omitempty"`  // lease: the field group
	Fence  int64         `json:"fence,omitempty"`  // lease: the fencing number of the grant
	TTL    time.Duration `json:"ttl,omitempty"`    // lease: the TTL asked for (acquired, renewed)
	Sent   int64         `json:"sent,omitempty"`   // lease: when the call was sent
	At     int64         `json:"at,omitempty"`     // lease: when it returned, or the holder let go
}

// journal appends entries to a worker's file, one JSON object per line, flushed per entry so a
// SIGKILL loses at most the entry being written.
type journal struct {
	mu sync.Mutex
	f  *os.File
}

func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	return &journal{f: f}, nil
}

func (j *journal) write(e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_, err = j.f.Write(append(b, '\n'))
	return err
}

func (j *journal) Close() error { return j.f.Close() }

// readJournals reads every *.jsonl file in dir. A torn last line (the writer was killed while
// writing it) is skipped: its write was never acknowledged.
func readJournals(dir string) ([]Entry, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		r := bufio.NewReader(f)
		for {
			line, err := r.ReadBytes('\n')
			if errors.Is(err, io.EOF) {
				break // a line without its newline is torn
			}
			if err != nil {
				f.Close()
				return nil, err
			}
			var e Entry
			if json.Unmarshal(line, &e) == nil {
				out = append(out, e)
			}
		}
		f.Close()
	}
	return out, nil
}
