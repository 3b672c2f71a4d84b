package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/internal/wake"
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
// closed; then the channel is closed. The subscribers of this process share one reader of
// the change log (feedReader): it holds one connection, polls PRAGMA data_version on it (the
// value moves when another connection commits), is woken at once by this process's own
// commits, and keeps the newest changes it read for every subscriber to take from its own
// cursor. A subscriber behind what the reader keeps reads the log itself until it is not;
// either way none skips an entry. One commit costs one query, not one per subscriber.
func (db *DB) Subscribe(ctx context.Context, after int64) (<-chan store.Change, error) {
	r, err := db.joinFeed(ctx)
	if err != nil {
		return nil, mapErr("subscribe to changes", err)
	}
	ch := make(chan store.Change, 16)
	db.wg.Add(1)
	go func() {
		defer db.wg.Done()
		defer close(ch)
		defer db.leaveFeed(r)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(db.ctx, cancel)
		defer stop()
		db.follow(ctx, r, ch, after)
	}()
	return ch, nil
}

// feedKeep is how many of the newest changes the shared reader keeps for its subscribers.
const feedKeep = 2 * feedBatch

// feedHub is the store's shared reader of the change log while it has subscribers.
type feedHub struct {
	mu     sync.Mutex
	reader *feedReader // nil while no one subscribes
	subs   int
}

// feedReader is one run of the shared reader: it reads the changes after head as they are
// committed and keeps the newest of them, those after base.
type feedReader struct {
	stop context.CancelFunc
	more wake.Signal // broadcast after recent grew

	mu     sync.Mutex
	base   int64          // recent holds every change with ID in (base, head]
	head   int64          // the last change read
	recent []store.Change // ascending by ID
}

// joinFeed counts a subscriber in, starting the shared reader for the first one.
func (db *DB) joinFeed(ctx context.Context) (*feedReader, error) {
	h := &db.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := db.ctx.Err(); err != nil {
		return nil, err
	}
	if h.reader == nil {
		conn, err := db.feed.Conn(ctx)
		if err != nil {
			return nil, err
		}
		var dv, head int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&dv); err != nil {
			conn.Close()
			return nil, err
		}
		if err := conn.QueryRowContext(ctx, "SELECT coalesce(max(id), 0) FROM changes").Scan(&head); err != nil {
			conn.Close()
			return nil, err
		}
		rctx, stop := context.WithCancel(db.ctx)
		r := &feedReader{stop: stop, base: head, head: head}
		h.reader = r
		db.wg.Add(1)
		go func() {
			defer db.wg.Done()
			defer conn.Close()
			db.readFeed(rctx, conn, r, dv)
		}()
	}
	h.subs++
	return h.reader, nil
}

// leaveFeed counts a subscriber of r out, stopping the shared reader after the last one.
func (db *DB) leaveFeed(r *feedReader) {
	h := &db.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs--
	if h.subs == 0 && h.reader == r {
		r.stop()
		h.reader = nil
	}
}

// readFeed is the shared reader's loop. Read errors are not fatal: the next wake-up tries
// again from the same head.
func (db *DB) readFeed(ctx context.Context, conn *sql.Conn, r *feedReader, dv int64) {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	dirty := true // a commit may have come between the head's read and the first wait
	for {
		wake := db.commits.Wait()
		if dirty {
			err := r.read(ctx, conn)
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

// read reads the changes after head into recent, dropping the oldest past feedKeep, and
// wakes the subscribers.
func (r *feedReader) read(ctx context.Context, conn *sql.Conn) error {
	for {
		r.mu.Lock()
		head := r.head
		r.mu.Unlock()
		cs, err := queryChanges(ctx, conn, "SELECT "+changeColumns+" FROM changes WHERE id > ? ORDER BY id LIMIT ?", head, feedBatch)
		if err != nil {
			return err
		}
		if len(cs) > 0 {
			r.mu.Lock()
			r.recent = append(r.recent, cs...)
			r.head = cs[len(cs)-1].ID
			if over := len(r.recent) - feedKeep; over > 0 {
				// A new array: subscribers may still be sending from the old one.
				r.base = r.recent[over-1].ID
				r.recent = slices.Clone(r.recent[over:])
			}
			r.mu.Unlock()
			r.more.Broadcast()
		}
		if len(cs) < feedBatch {
			return nil
		}
	}
}

// after returns the changes the reader keeps after cursor (shared: not to be changed), and
// the cursor they start after; behind says cursor is older than what it keeps.
func (r *feedReader) after(cursor int64) (cs []store.Change, base int64, behind bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cursor < r.base {
		return nil, r.base, true
	}
	i, _ := slices.BinarySearchFunc(r.recent, cursor, func(c store.Change, id int64) int { return cmp.Compare(c.ID, id) })
	if i < len(r.recent) && r.recent[i].ID == cursor {
		i++
	}
	return r.recent[i:len(r.recent):len(r.recent)], r.base, false
}

// follow is a subscriber's loop: it sends the changes after its cursor from the shared
// reader, or from the log while it is behind what the reader keeps. Read errors are not
// fatal: it tries again after pollInterval from the same cursor.
func (db *DB) follow(ctx context.Context, r *feedReader, ch chan<- store.Change, cursor int64) {
	for {
		wake := r.more.Wait()
		cs, base, behind := r.after(cursor)
		upTo := cursor
		if behind {
			var err error
			cs, err = queryChanges(ctx, db.read, "SELECT "+changeColumns+" FROM changes WHERE id > ? AND id <= ? ORDER BY id LIMIT ?", cursor, base, feedBatch)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(pollInterval):
				}
				continue
			}
			if len(cs) < feedBatch {
				upTo = base // every change up to base is in cs
			}
		}
		for _, c := range cs {
			c.Fields, c.Deltas = slices.Clone(c.Fields), maps.Clone(c.Deltas) // each subscriber its own
			select {
			case ch <- c:
				cursor = c.ID
			case <-ctx.Done():
				return
			}
		}
		cursor = max(cursor, upTo)
		if behind || len(cs) > 0 {
			continue // more may have come meanwhile
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
	}
}
