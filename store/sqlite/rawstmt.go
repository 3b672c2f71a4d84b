package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	modernc "modernc.org/sqlite"
)

// The write connection, and statements below database/sql for the save that runs most
// often (relativeSave).
//
// Every write transaction of a process on a file runs on one connection (writeConn), which
// the file's fileWriter holds while a DB of the process has the file open: the leader of
// each group (commit.go) runs the group on it, whichever DB the leader belongs to. A
// connection keeps the pages it has read in its cache only while no other connection
// writes the file; when the groups ran on the connection of each leader's own DB, every
// group began on a connection whose cache the previous group (another connection) had made
// stale, and read its pages again.
//
// Under group commit the leader runs every save in turn while it holds the write lock:
// what each statement costs in Go is paid in turn by every writer. Through database/sql a
// statement pays for its bookkeeping on top of the driver's work: the statement's
// per-connection lookup, a lock per call, the conversion of every argument and of every
// column read (by reflection), a Rows and a Row. Inside a transaction on the write
// connection the relative save reaches the driver's connection through sql.Conn.Raw and
// runs its three statements from driver statements prepared once on the connection, with
// arguments that are already driver values. The transaction, its commit and its rollback
// stay database/sql's.

// writeConn is the connection the write transactions of the process on one file run on,
// and its statements. Only the leader of a group uses conn and raw (one group at a time
// runs on a file); the fileWriter opens it for the first group and closes it when the last
// DB of the process on the file closes.
type writeConn struct {
	pool  *sql.DB    // conn, and a connection to prepare statements on (stmtCache)
	conn  *sql.Conn  // the transactions' connection
	raw   *rawConn   // conn's driver connection and its statements, once used
	stmts *stmtCache // prepared on pool; database/sql prepares each on conn once used
}

// rawConn is a driver connection and its prepared statements, used inside sql.Conn.Raw.
type rawConn struct {
	ci    driver.Conn
	stmts map[string]driver.Stmt
}

// acquire counts a DB of the process that has the file open.
func (w *fileWriter) acquire() {
	w.mu.Lock()
	w.refs++
	w.mu.Unlock()
}

// release counts a DB closing; the last one closes the write connection.
func (w *fileWriter) release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refs--; w.refs > 0 || w.wc == nil {
		return nil
	}
	wc := w.wc
	w.wc = nil
	wc.stmts.close()
	var errs []error
	if wc.conn != nil {
		if wc.raw != nil {
			errs = append(errs, wc.conn.Raw(func(any) error { return wc.raw.close() }))
		}
		errs = append(errs, wc.conn.Close())
	}
	errs = append(errs, wc.pool.Close())
	return errors.Join(errs...)
}

// writeConn returns the file's write connection, opening it (as db opens its write pool)
// when there is none. Only the leader calls it.
func (w *fileWriter) writeConn(ctx context.Context, db *DB) (*writeConn, error) {
	if w.wc == nil {
		pool, err := sql.Open("sqlite", db.wdsn)
		if err != nil {
			return nil, err
		}
		pool.SetMaxOpenConns(2) // the transactions' and the one statements are prepared on
		w.wc = &writeConn{pool: pool, stmts: newStmtCache(pool)}
	}
	if w.wc.conn == nil {
		c, err := w.wc.pool.Conn(ctx)
		if err != nil {
			return nil, err
		}
		if err := MarkAsTandem(ctx, c); err != nil {
			c.Close()
			return nil, err
		}
		w.wc.conn = c
	}
	return w.wc, nil
}

// MarkAsTandem makes c's writes tandem's own in the eyes of the outside-write triggers
// (outside.go): it attaches the mark the triggers test and gives c the authorizer that
// ends them at their gate, before c prepares anything (installing an authorizer expires
// the statements prepared). It is tandem's write connection's setting, and bench
// contention's baseline's. It returns the driver's error when either fails.
func MarkAsTandem(ctx context.Context, c *sql.Conn) error {
	if _, err := c.ExecContext(ctx, "ATTACH DATABASE ':memory:' AS "+writerMark); err != nil {
		return fmt.Errorf("attach the writer mark: %w", err)
	}
	if err := c.Raw(func(dc any) error {
		a, ok := dc.(modernc.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("driver connection %T takes no authorizer", dc)
		}
		return a.RegisterAuthorizer(writerGate)
	}); err != nil {
		return fmt.Errorf("gate the outside-write triggers: %w", err)
	}
	return nil
}

// dropConn lets the write connection go after it failed in a way that may have ended it
// (the driver reported it bad): the next transaction opens another.
func (wc *writeConn) dropConn(err error) {
	if wc.conn == nil || !(errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn)) {
		return
	}
	// database/sql has closed the driver connection already, or will: its statements died
	// with it, so they are forgotten, not finalized.
	wc.raw = nil
	_ = wc.conn.Close()
	wc.conn = nil
}

// raw runs fn with the driver connection of the transaction, below database/sql.
func (t *tx) raw(fn func(*rawConn) error) error {
	if t.wc == nil || t.txCtx == nil {
		return errors.New("raw statements outside a transaction of the write connection")
	}
	return t.wc.conn.Raw(func(dc any) error {
		// database/sql rolls the transaction back when the context it began with ends, on
		// this connection, without telling these statements, which would then run and
		// commit on their own. It needs the connection for that, which is held here, so
		// the context's state now is the transaction's until fn returns.
		if err := t.txCtx.Err(); err != nil {
			return err
		}
		ci, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("driver connection %T is not a driver.Conn", dc)
		}
		if t.wc.raw == nil || t.wc.raw.ci != ci {
			t.wc.raw = &rawConn{ci: ci, stmts: map[string]driver.Stmt{}}
		}
		return fn(t.wc.raw)
	})
}

// stmt returns the prepared statement of q, preparing it on the first use. Past
// maxCachedStmts statements, q is prepared for this call only (done closes it).
func (c *rawConn) stmt(ctx context.Context, q string) (s driver.Stmt, done func(), err error) {
	if s, ok := c.stmts[q]; ok {
		return s, func() {}, nil
	}
	if p, ok := c.ci.(driver.ConnPrepareContext); ok {
		s, err = p.PrepareContext(ctx, q)
	} else {
		s, err = c.ci.Prepare(q)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(c.stmts) >= maxCachedStmts {
		return s, func() { _ = s.Close() }, nil
	}
	c.stmts[q] = s
	return s, func() {}, nil
}

// queryRow runs q with args and reads its first row into dest, reporting whether there was
// one. The rest of the rows are not read.
func (c *rawConn) queryRow(ctx context.Context, q string, args []driver.NamedValue, dest []driver.Value) (bool, error) {
	ctx = stmtCtx(ctx)
	s, done, err := c.stmt(ctx, q)
	if err != nil {
		return false, err
	}
	defer done()
	sq, ok := s.(driver.StmtQueryContext)
	if !ok {
		return false, fmt.Errorf("driver statement %T cannot query with a context", s)
	}
	rows, err := sq.QueryContext(ctx, args)
	if err != nil {
		return false, err
	}
	err = rows.Next(dest)
	cerr := rows.Close()
	switch {
	case err == io.EOF:
		return false, cerr
	case err != nil:
		return false, err
	}
	return true, cerr
}

// exec runs q with args.
func (c *rawConn) exec(ctx context.Context, q string, args []driver.NamedValue) error {
	ctx = stmtCtx(ctx)
	s, done, err := c.stmt(ctx, q)
	if err != nil {
		return err
	}
	defer done()
	se, ok := s.(driver.StmtExecContext)
	if !ok {
		return fmt.Errorf("driver statement %T cannot exec with a context", s)
	}
	_, err = se.ExecContext(ctx, args)
	return err
}

// close finalizes the prepared statements.
func (c *rawConn) close() error {
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.Close())
		delete(c.stmts, q)
	}
	return errors.Join(errs...)
}

// rawRow is a row read by rawConn.queryRow, scanned as database/sql would scan it into the
// destinations scanRecord uses: *int64, *string and *any.
type rawRow []driver.Value

// Scan copies the row's values into dest.
func (r rawRow) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return fmt.Errorf("scan: %d destinations for %d columns", len(dest), len(r))
	}
	for i, d := range dest {
		v := r[i]
		switch d := d.(type) {
		case *any:
			if b, ok := v.([]byte); ok {
				v = string(b) // the driver's buffer is not the caller's to keep
			}
			*d = v
		case *int64:
			n, ok := v.(int64)
			if !ok {
				return fmt.Errorf("scan column %d: %T is not an integer", i, v)
			}
			*d = n
		case *string:
			switch v := v.(type) {
			case string:
				*d = v
			case []byte:
				*d = string(v)
			default:
				return fmt.Errorf("scan column %d: %T is not text", i, v)
			}
		default:
			return fmt.Errorf("scan column %d: cannot scan into %T", i, d)
		}
	}
	return nil
}

// checkpointTruncate moves everything from the write-ahead log into the database file and
// empties the log, on the write connection (withWriteConn). busy reports that a connection
// of another process still read the log, so it could not be emptied.
func (db *DB) checkpointTruncate(ctx context.Context) (busy bool, err error) {
	err = db.withWriteConn(ctx, func(ctx context.Context, c *sql.Conn) error {
		const q = "PRAGMA wal_checkpoint(TRUNCATE)"
		var row *sql.Row
		if c != nil {
			row = c.QueryRowContext(ctx, q)
		} else {
			row = db.write.QueryRowContext(ctx, q)
		}
		var b, logged, moved int
		if err := row.Scan(&b, &logged, &moved); err != nil {
			return err
		}
		busy = b != 0
		return nil
	})
	return busy, err
}
