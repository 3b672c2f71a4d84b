package memory

import (
	"context"
	"maps"
	"slices"

	"github.com/tandem-editor/tandem/store"
)

// appendChange adds c to the change log with the next ID and wakes the subscribers.
func (db *DB) appendChange(c store.Change) {
	c.ID = int64(len(db.changes)) + 1
	db.changes = append(db.changes, c)
	close(db.notify)
	db.notify = make(chan struct{})
}

func cloneChange(c store.Change) store.Change {
	c.Fields = slices.Clone(c.Fields)
	c.Deltas = maps.Clone(c.Deltas)
	return c
}

// Changes returns up to limit change-log entries with ID > after, oldest first (all of them
// when limit <= 0).
func (db *DB) Changes(ctx context.Context, after int64, limit int) ([]store.Change, error) {
	if err := db.begin(ctx, "Changes"); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	return db.since(after, limit), nil
}

func (db *DB) since(after int64, limit int) []store.Change {
	out := []store.Change{}
	for i := max(after, 0); i < int64(len(db.changes)); i++ {
		out = append(out, cloneChange(db.changes[i]))
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// LastChangeID returns the newest change-log ID, 0 when the log is empty.
func (db *DB) LastChangeID(ctx context.Context) (int64, error) {
	if err := db.begin(ctx, "LastChangeID"); err != nil {
		return 0, err
	}
	defer db.mu.Unlock()
	return int64(len(db.changes)), nil
}

// Subscribe delivers every change with ID > after, in order, until ctx ends or the store is
// closed; then the channel is closed. Delivery is immediate: the goroutine wakes on every
// appended change.
func (db *DB) Subscribe(ctx context.Context, after int64) (<-chan store.Change, error) {
	if err := db.begin(ctx, "Subscribe"); err != nil {
		return nil, err
	}
	db.subsWG.Add(1)
	db.mu.Unlock()
	ch := make(chan store.Change)
	go func() {
		defer db.subsWG.Done()
		defer close(ch)
		cursor := after
		for {
			db.mu.Lock()
			batch := db.since(cursor, 0)
			wake := db.notify
			db.mu.Unlock()
			for _, c := range batch {
				select {
				case ch <- c:
					cursor = c.ID
				case <-ctx.Done():
					return
				case <-db.closedCh:
					return
				}
			}
			if len(batch) > 0 {
				continue
			}
			select {
			case <-wake:
			case <-ctx.Done():
				return
			case <-db.closedCh:
				return
			}
		}
	}()
	return ch, nil
}
