package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// The change feed: every write appends to the changes table and calls pg_notify in the same
// transaction, so the notification is delivered at commit. A notification is only a
// wake-up: PostgreSQL does not replay notifications after a disconnect, so a subscriber
// always reads the change log from its cursor, on every wake-up and at least once a second.

const changesPage = 500

// Changes returns up to limit change-log entries with ID > after, oldest first
// (limit <= 0: up to 1000).
func (db *DB) Changes(ctx context.Context, after int64, limit int) ([]store.Change, error) {
	if limit <= 0 {
		limit = 1000
	}
	var out []store.Change
	err := db.read(ctx, "read change log", func(q querier) (err error) {
		out, err = queryChanges(ctx, q, "SELECT "+changeColumns+" FROM changes WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
		return err
	})
	return out, err
}

// LastChangeID returns the newest change-log ID (0 when empty).
func (db *DB) LastChangeID(ctx context.Context) (int64, error) {
	var id int64
	err := db.read(ctx, "read change log", func(q querier) error {
		return q.QueryRow(ctx, "SELECT last_id FROM change_counter").Scan(&id)
	})
	return id, err
}

// Subscribe delivers every change with ID > after, in order, until ctx ends or the store is
// closed; then the channel is closed. A dedicated connection LISTENs on this schema's channel; the change log
// is read from the cursor on every notification and at least once a second, and after a lost
// connection the subscriber reconnects with backoff and reads on from its cursor, so no change
// is lost or delivered twice. EUNAVAILABLE when the first connection cannot be made.
func (db *DB) Subscribe(ctx context.Context, after int64) (<-chan store.Change, error) {
	if db.ctx.Err() != nil {
		return nil, store.Errorf(store.EINVALID, "subscribe: the store is closed")
	}
	conn, err := db.listen(ctx)
	if err != nil {
		return nil, err
	}
	ch := make(chan store.Change, 64)
	db.wg.Add(1)
	go func() {
		defer db.wg.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(db.ctx, cancel) // Close ends the subscription
		defer stop()
		db.feed(ctx, conn, after, ch)
	}()
	return ch, nil
}

// listen opens the dedicated LISTEN connection.
func (db *DB) listen(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout+time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, db.listenCfg.Copy())
	if err != nil {
		return nil, store.Errorf(store.EUNAVAILABLE, "subscribe: cannot connect to PostgreSQL at %s: %s", db.where, db.redact(err.Error()))
	}
	if _, err := conn.Exec(cctx, "LISTEN "+ident(db.channel)); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, db.mapErr("subscribe", err)
	}
	return conn, nil
}

func (db *DB) feed(ctx context.Context, conn *pgx.Conn, cursor int64, ch chan<- store.Change) {
	defer close(ch)
	defer func() {
		if conn != nil {
			conn.Close(context.WithoutCancel(ctx))
		}
	}()
	failures := 0
	for ctx.Err() == nil {
		if conn == nil {
			c, err := db.listen(ctx)
			if err != nil {
				failures++
				if sleep(ctx, backoff(failures)) != nil {
					return
				}
				// Read anyway: the pool may work while LISTEN does not.
			} else {
				conn, failures = c, 0
			}
		}
		// Drain the log from the cursor; a notification or timeout only says "look again".
		for ctx.Err() == nil {
			cs, err := db.Changes(ctx, cursor, changesPage)
			if err != nil {
				break // the next round retries from the same cursor
			}
			for _, c := range cs {
				select {
				case ch <- c:
					cursor = c.ID
				case <-ctx.Done():
					return
				}
			}
			if len(cs) < changesPage {
				break
			}
		}
		if conn == nil {
			if sleep(ctx, listenWait) != nil {
				return
			}
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, listenWait)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
			// The connection is gone (or broken by the timeout); start over with a new one.
			conn.Close(context.WithoutCancel(ctx))
			conn = nil
		} else if err != nil && conn.IsClosed() {
			conn = nil
		}
	}
}
