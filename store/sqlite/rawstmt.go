package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// Statements below database/sql, for the save that runs most often (relativeSave).
//
// Under group commit one goroutine, the leader, runs every save of the process on its
// connection, one after the other, while it holds SQLite's write lock: what each statement
// costs in Go is paid in turn by every writer. Through database/sql a statement pays for
// its bookkeeping on top of the driver's work: the statement's per-connection lookup, a lock
// per call, the conversion of every argument and of every column read (by reflection), a
// Rows and a Row. Here the leader's connection is its own (DB.wconn, a *sql.Conn held for
// the life of the DB), its write transactions run on it, and inside one the relative save
// reaches the driver's connection through sql.Conn.Raw and runs its three statements from
// driver statements prepared once per connection, with arguments that are already driver
// values. The transaction, its commit and its rollback stay database/sql's.

// rawConn is the driver connection of DB.wconn and its prepared statements. Only the
// leader uses it (one group at a time runs on a DB), inside sql.Conn.Raw.
type rawConn struct {
	ci    driver.Conn
	stmts map[string]driver.Stmt
}

// writeConn returns the connection the DB's write transactions run on, opening it on the
// first call.
func (db *DB) writeConn(ctx context.Context) (*sql.Conn, error) {
	if db.wconn != nil {
		return db.wconn, nil
	}
	c, err := db.write.Conn(ctx)
	if err != nil {
		return nil, err
	}
	db.wconn = c
	return c, nil
}

// dropWriteConn lets the write connection go after it failed in a way that may have ended
// it (the driver reported it bad): the next transaction opens another.
func (db *DB) dropWriteConn(err error) {
	if db.wconn == nil || !(errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn)) {
		return
	}
	// database/sql has closed the driver connection already, or will: its statements died
	// with it, so they are forgotten, not finalized.
	db.raw = nil
	_ = db.wconn.Close()
	db.wconn = nil
}

// closeWriteConn finalizes the driver statements and returns the write connection to the
// pool, which Close then closes.
func (db *DB) closeWriteConn() error {
	if db.wconn == nil {
		return nil
	}
	var errs []error
	if db.raw != nil {
		errs = append(errs, db.wconn.Raw(func(any) error { return db.raw.close() }))
		db.raw = nil
	}
	errs = append(errs, db.wconn.Close())
	db.wconn = nil
	return errors.Join(errs...)
}

// raw runs fn with the driver connection of the transaction, below database/sql. The
// transaction must run on the DB's write connection (runGroup's).
func (t *tx) raw(fn func(*rawConn) error) error {
	if t.conn == nil || t.txCtx == nil {
		return errors.New("raw statements outside the write connection's transaction")
	}
	return t.conn.Raw(func(dc any) error {
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
		db := t.db
		if db.raw == nil || db.raw.ci != ci {
			db.raw = &rawConn{ci: ci, stmts: map[string]driver.Stmt{}}
		}
		return fn(db.raw)
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
// destinations scanRecord and withClock use: *int64, *string and *any.
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
