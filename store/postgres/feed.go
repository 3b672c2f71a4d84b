package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// The change feed. Writers never wait for each other to log a change: a change row takes its
// id from a sequence in the write's last statement, and nothing serializes the commits. Ids
// are therefore not handed out in commit order, and a reader that delivered every visible id
// in order could step over an id whose transaction commits a moment later. So a reader
// delivers an id only once it is settled: once every id up to it is committed and visible,
// or rolled back, for good. Why readers can know that, without waiting for anyone but this
// store's own writers:
//
//  1. A writer's transaction takes the change log's writer lock before it takes its id, and
//     holds it until it ends (hold_change_log(), migration 0011: a shared advisory lock
//     named after this schema's sequence; next_change_id() takes it, and a relative save's
//     change row before its nextval, see relativeSave). It takes the id after the write it
//     logs holds its row locks. PostgreSQL lets a lock go only after the transaction's end
//     is visible to every new snapshot.
//  2. The reader reads the newest visible id M, and in the same statement, after its
//     snapshot, the set W of transactions that hold the writer lock (pg_locks).
//  3. An id g < M that the reader could not see belongs to a transaction T still running
//     when the snapshot was taken: T took g before M was taken (a sequence with CACHE 1
//     hands out values in time order), M's transaction committed before the snapshot, and
//     T held the writer lock before it took g (1.). So T is in W, or it has ended by the
//     time pg_locks was read and its end is visible to every later statement.
//  4. A later look that finds none of W holding the lock: each has committed (and is
//     visible from then on) or rolled back. Every id <= M is settled. When W is empty,
//     every id <= M is settled at once.
//
// So ids are delivered in id order and no id is ever delivered below one already delivered:
// a subscriber's cursor (the last id it delivered) never steps over a change, and nothing is
// delivered twice. Id order is commit order wherever order means something: two writes of
// one record or one lease are serialized by its row lock, and the later one takes its id
// after the earlier one committed (1.). The order of unrelated writes that committed at the
// same moment is the order they finished their work in.
//
// What it costs: a look that sees new ids, or waits for writers, reads pg_locks (the
// server's lock table, a copy taken under its partition locks); a look that sees none of
// this store's writers in flight settles at once, and otherwise settling needs a second
// look, normally a millisecond later. Only a write to this store that stays open holds
// settling back; transactions in other databases and schemas, and this database's
// transactions that do not log a change, hold nothing back. tandem's own transactions are
// bounded by idle_in_transaction_session_timeout and statement_timeout.
//
// Notifications only wake subscribers: the DB sends one NOTIFY after commits (committed),
// outside the write transactions, and PostgreSQL does not replay them after a disconnect, so
// a subscriber reads the change log from its cursor on every wake-up and at least once a
// second.

const (
	changesPage   = 500
	settleBudget  = 30 * time.Second       // how long Changes and LastChangeID wait for a settled log
	settleFirst   = time.Millisecond       // the first wait for writers in flight to end
	settleMax     = 100 * time.Millisecond // the longest wait between two looks
	maxMarks      = 64
	notifyGap     = 20 * time.Millisecond  // at most one NOTIFY per gap from one store
	listenerCheck = 250 * time.Millisecond // how long wake trusts what it saw of the listeners
	listenerStale = 5 * time.Second        // how long it may trust it while no connection is idle
)

// horizon tracks how far the change log is settled, across looks at the server.
type horizon struct {
	settled int64  // every id <= settled is settled
	marks   []mark // ids seen, oldest first, waiting for the writers then in flight
}

// mark says: every id <= id is settled once none of writers holds the writer lock.
type mark struct {
	id      int64
	writers []string // pg_locks' virtualtransaction of each
}

// known is the newest id the horizon has seen.
func (h *horizon) known() int64 {
	if n := len(h.marks); n > 0 {
		return h.marks[n-1].id
	}
	return h.settled
}

// lookSQL reads the newest id and, when there are new ids or marks to settle ($2), the
// transactions that hold this store's writer lock (migration 0011).
const lookSQL = `SELECT m, CASE WHEN m > $1 OR $2 THEN ARRAY(
		SELECT virtualtransaction FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 1
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND classid = 1952542308 AND objid = 'changes_id_seq'::regclass::oid) END
	FROM (SELECT coalesce(max(id), 0) AS m FROM changes) AS c`

// look reads the newest id and the writers in flight, settles the marks whose writers have
// all ended, and adds a mark for ids not seen before (or settles them at once when no
// writer is in flight).
func (h *horizon) look(ctx context.Context, q querier) error {
	var newest int64
	var writers []string
	if err := q.QueryRow(ctx, lookSQL, h.known(), len(h.marks) > 0).Scan(&newest, &writers); err != nil {
		return err
	}
	running := make(map[string]bool, len(writers))
	for _, w := range writers {
		running[w] = true
	}
	// A mark that settles settles every mark before it too (their ids are lower).
	for i := len(h.marks) - 1; i >= 0; i-- {
		if !slices.ContainsFunc(h.marks[i].writers, func(w string) bool { return running[w] }) {
			h.settled = h.marks[i].id
			h.marks = h.marks[i+1:]
			break
		}
	}
	if newest > h.known() {
		switch {
		case len(writers) == 0:
			h.settled, h.marks = newest, nil
		case len(h.marks) == maxMarks:
			h.marks[maxMarks-1] = mark{newest, writers} // a later mark settles everything an earlier one would
		default:
			h.marks = append(h.marks, mark{newest, writers})
		}
	}
	return nil
}

// settle looks until every id the first look saw is settled and returns the settled id.
// Nothing newer than after: after, at once. EBUSY when writers of this store that were in
// flight keep it waiting past settleBudget.
func (db *DB) settle(ctx context.Context, after int64) (int64, error) {
	h := horizon{settled: after}
	start := time.Now()
	for wait := settleFirst; ; wait = min(2*wait, settleMax) {
		if err := db.read(ctx, "read change log", func(q querier) error { return h.look(ctx, q) }); err != nil {
			return 0, err
		}
		if len(h.marks) == 0 {
			return h.settled, nil
		}
		if time.Since(start) > settleBudget {
			return 0, store.Errorf(store.EBUSY, "read change log: a write to this store that stays open has held the change log back for %s; try again", settleBudget)
		}
		if err := sleep(ctx, wait); err != nil {
			return 0, db.mapErr("read change log", err)
		}
	}
}

// Changes returns up to limit change-log entries with ID > after, oldest first
// (limit <= 0: up to 1000). It waits until the ids it returns are settled, so a caller that
// pages on from the last id it got never misses a change that commits later.
func (db *DB) Changes(ctx context.Context, after int64, limit int) ([]store.Change, error) {
	if limit <= 0 {
		limit = 1000
	}
	upTo, err := db.settle(ctx, after)
	if err != nil || upTo <= after {
		return nil, err
	}
	return db.changesUpTo(ctx, after, upTo, limit)
}

func (db *DB) changesUpTo(ctx context.Context, after, upTo int64, limit int) ([]store.Change, error) {
	var out []store.Change
	err := db.read(ctx, "read change log", func(q querier) (err error) {
		out, err = queryChanges(ctx, q, "SELECT "+changeColumns+" FROM changes WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3",
			after, upTo, limit)
		return err
	})
	return out, err
}

// LastChangeID returns the newest settled change-log ID (0 when empty): a subscriber that
// starts there gets every change that was not yet visible when LastChangeID returned.
func (db *DB) LastChangeID(ctx context.Context) (int64, error) {
	return db.settle(ctx, 0)
}

// committed is called after every committed write transaction: it wakes this process's
// subscribers at once and asks the waker to NOTIFY the others.
func (db *DB) committed() {
	db.commits.Broadcast()
	select {
	case db.poke <- struct{}{}:
	default: // a notification is already due; it covers this commit too
	}
}

// wake sends NOTIFYs for this process's commits, until the store is closed. A NOTIFY inside
// the write transactions would make every commit of the server queue for the notification
// lock, which is held until the commit is durable; here it is a short transaction of its own
// with an asynchronous commit. Still, it is a transaction per wake-up, so it is paid only
// when someone listens (a subscriber of this schema is connected: its LISTEN connection's
// application_name, which pg_stat_activity shows to every role, says so), and at most once
// per notifyGap: the commits in between share it. A missed wake-up (a subscriber that just
// connected, or one whose DSN spells the search_path differently) costs it at most its
// one-second poll.
//
// Whether someone listens is asked on a pooled connection that is idle at the time, never
// on a new one while the writers hold them all: a connection of its own would be a server
// backend started for this question alone, which a short-lived writer (a script, a worker
// process) pays for in full. The answer is kept until an idle connection is there to ask
// again, or for listenerStale at most. Open asks first (listening is its answer), on the
// connection it opened with. (A writer that wants a connection during the question, a round
// trip every listenerCheck at most, still gets a new one; the pool keeps it from then on.)
func (db *DB) wake(listening bool) {
	defer db.wg.Done()
	checked := time.Now()
	defer func() {
		// A commit just before Close (a command that saves and exits) is still owed its
		// NOTIFY: without it the other processes' subscribers see it only at their poll.
		select {
		case <-db.poke:
			if listening {
				db.notify()
			}
		default:
		}
	}()
	for {
		select {
		case <-db.ctx.Done():
			return
		case <-db.poke:
		}
		if since := time.Since(checked); since > listenerCheck {
			if l, ok := db.listening(since > listenerStale); ok {
				listening, checked = l, time.Now()
			}
		}
		if listening {
			db.notify()
		}
		if sleep(db.ctx, notifyGap) != nil {
			return
		}
	}
}

// notify sends one NOTIFY on this schema's channel. Close does not cut it short (it waits
// for it, a second at most): the commit it announces has happened.
func (db *DB) notify() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(db.ctx), time.Second)
	defer cancel()
	_, _ = db.pool.Exec(ctx, `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')`, db.channel)
}

// listening says whether a subscriber of this schema is connected, asked on an idle pooled
// connection; ok is false when none is idle, unless wait allows the pool to open one. An
// error counts as listening (unsure: notify).
func (db *DB) listening(wait bool) (listening, ok bool) {
	var q querier = db.pool
	if !wait {
		idle := db.pool.AcquireAllIdle(db.ctx)
		if len(idle) == 0 {
			return false, false
		}
		for _, c := range idle[1:] {
			c.Release()
		}
		defer idle[0].Release()
		q = idle[0]
	}
	err := q.QueryRow(db.ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1)`, db.listenCfg.RuntimeParams["application_name"]).Scan(&listening)
	return listening || err != nil, true
}

// Subscribe delivers every change with ID > after, in order, until ctx ends or the store is
// closed; then the channel is closed. A dedicated connection LISTENs on this schema's
// channel; the change log is read from the cursor on every notification, on every commit of
// this process, and at least once a second, and only settled ids are delivered, so no change
// is lost or delivered twice. After a lost connection the subscriber reconnects with backoff
// and reads on from its cursor. EUNAVAILABLE when the first connection cannot be made.
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
	h := horizon{settled: cursor}
	failures := 0
	soon := settleFirst
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
		local := db.commits.Wait() // armed before reading: a commit after the read wakes us
		err := db.catchUp(ctx, &h, &cursor, ch)
		if ctx.Err() != nil {
			return
		}
		// Ids seen but not settled yet settle as soon as the transactions running when they
		// were seen end: look again shortly rather than in a second.
		wait := listenWait
		if err == nil && len(h.marks) > 0 {
			wait, soon = soon, min(2*soon, settleMax)
		} else {
			soon = settleFirst
		}
		if conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-local:
			case <-time.After(wait):
			}
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		go func() {
			select {
			case <-local:
				cancel()
			case <-wctx.Done():
			}
		}()
		_, err = conn.WaitForNotification(wctx)
		woken := wctx.Err() != nil // our own timeout or a local commit, not a broken connection
		cancel()
		if err != nil && ctx.Err() == nil && !woken {
			// The connection is gone; start over with a new one.
			conn.Close(context.WithoutCancel(ctx))
			conn = nil
		} else if err != nil && conn.IsClosed() {
			conn = nil
		}
	}
}

// catchUp looks at the horizon and sends every settled change after the cursor. A failed
// read is not fatal: the next round tries again from the same cursor.
func (db *DB) catchUp(ctx context.Context, h *horizon, cursor *int64, ch chan<- store.Change) error {
	if err := db.read(ctx, "read change log", func(q querier) error { return h.look(ctx, q) }); err != nil {
		return err
	}
	for *cursor < h.settled {
		cs, err := db.changesUpTo(ctx, *cursor, h.settled, changesPage)
		if err != nil {
			return err
		}
		for _, c := range cs {
			select {
			case ch <- c:
				*cursor = c.ID
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if len(cs) < changesPage {
			return nil
		}
	}
	return nil
}
