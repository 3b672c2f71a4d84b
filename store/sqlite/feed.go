package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// pollInterval is how often a subscriber checks PRAGMA data_version for commits made by other
// connections (and processes). Commits of this process wake subscribers at once.
const pollInterval = 150 * time.Millisecond

// feedBatch is how many change rows a subscriber reads per query.
const feedBatch = 500

// Changes returns up to limit change-log entries with ID > after, oldest first
// (limit <= 0: up to 1000).
func (db *DB) Changes(ctx context.Context, after int64, limit int) ([]store.Change, error) {
	if limit <= 0 {
		limit = 1000
	}
	out, err := queryChanges(ctx, db.read, "SELECT "+changeColumns+" FROM changes WHERE id > ? ORDER BY id LIMIT ?", after, limit)
	if err != nil {
		return nil, mapErr("read change log", err)
	}
	return out, nil
}

// LastChangeID returns the newest change-log ID, 0 when the log is empty.
func (db *DB) LastChangeID(ctx context.Context) (int64, error) {
	var id int64
	if err := db.read.QueryRowContext(ctx, "SELECT coalesce(max(id), 0) FROM changes").Scan(&id); err != nil {
		return 0, mapErr("read change log", err)
	}
	return id, nil
}

// Subscribe delivers every change with ID > after, in order, until ctx ends or the store is
// closed; then the channel is closed. Each subscriber holds one connection of its own and
// polls PRAGMA data_version on it (the value moves when another connection commits), and is
// woken at once by this process's own commits; either way it reads the change log from its
// cursor, so it never skips an entry.
func (db *DB) Subscribe(ctx context.Context, after int64) (<-chan store.Change, error) {
	conn, err := db.feed.Conn(ctx)
	if err != nil {
		return nil, mapErr("subscribe to changes", err)
	}
	var dv int64
	if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&dv); err != nil {
		conn.Close()
		return nil, mapErr("subscribe to changes", err)
	}
	ch := make(chan store.Change, 16)
	db.wg.Add(1)
	go func() {
		defer db.wg.Done()
		defer close(ch)
		defer conn.Close()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(db.ctx, cancel)
		defer stop()
		db.follow(ctx, conn, ch, after, dv)
	}()
	return ch, nil
}

// follow is a subscriber's loop. Read errors are not fatal: the next wake-up tries again from
// the same cursor.
func (db *DB) follow(ctx context.Context, conn *sql.Conn, ch chan<- store.Change, cursor, dv int64) {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	dirty := true // catch up from the cursor first
	for {
		wake := db.commits.Wait()
		if dirty {
			var err error
			cursor, err = db.deliver(ctx, conn, ch, cursor)
			if ctx.Err() != nil {
				return
			}
			dirty = err != nil // a failed read is retried at the next tick
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
			dirty = true
		case <-tick.C:
			var v int64
			if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
				if ctx.Err() != nil {
					return
				}
				dirty = true
				continue
			}
			if v != dv {
				dv, dirty = v, true
			}
		}
	}
}

// deliver sends every change after cursor and returns the new cursor.
func (db *DB) deliver(ctx context.Context, conn *sql.Conn, ch chan<- store.Change, cursor int64) (int64, error) {
	for {
		cs, err := queryChanges(ctx, conn, "SELECT "+changeColumns+" FROM changes WHERE id > ? ORDER BY id LIMIT ?", cursor, feedBatch)
		if err != nil {
			return cursor, err
		}
		for _, c := range cs {
			select {
			case ch <- c:
				cursor = c.ID
			case <-ctx.Done():
				return cursor, ctx.Err()
			}
		}
		if len(cs) < feedBatch {
			return cursor, nil
		}
	}
}
