package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// A bulk connection: a clone's load (LoadCopy) writes its hundred thousand rows through
// SQLite's C API (modernc.org/sqlite/lib, the library the driver itself wraps) on a
// connection of its own, not through database/sql and the driver.
//
// What the driver does per argument is right for a statement of a few arguments and is
// most of the cost of a load's statements of four thousand: it copies each text into C
// memory of its own (an allocation and a free per value, each under the allocator's lock),
// asks SQLite each parameter's name, and after the statement binds NULL to every text
// parameter again, each call entering and leaving the connection's mutex. A bulk
// connection copies a statement's texts into one buffer it keeps and binds them where they
// lie (SQLITE_STATIC), and is opened without SQLite's connection mutex (it is used by one
// goroutine at a time, as database/sql uses a driver connection). Measured on a clone of
// 100,000 products: see BENCHMARKS.md, "Clone through SQLite's C API".
//
// It is a connection like any other to the file: the load takes the write lock with BEGIN
// IMMEDIATE (waiting busy_timeout, as the store's writes do), and the store's own
// connections see the load once it commits.

// bulkConn is a connection to a store's file through SQLite's C API, for one goroutine at
// a time.
type bulkConn struct {
	tls   *libc.TLS
	db    uintptr            // sqlite3*
	out   uintptr            // 16 bytes of C memory for the C API's out-parameters
	buf   uintptr            // C memory that a statement's text arguments are copied into
	bufN  int                // its size
	stmts map[string]uintptr // prepared statements, by their text
	ctx   context.Context    // once it ends, no statement starts (query)
	// stop ends the interrupt that the context's end sends (context.AfterFunc); wake is
	// closed once a started interrupt has returned.
	stop func() bool
	wake chan struct{}
}

// bulkError is what SQLite returned to a bulk connection: its extended result code and
// message. It has the driver's Code method, so sqliteCode (and through it mapErr and the
// other checks of errors.go) reads it as it reads the driver's errors.
type bulkError struct {
	code int
	msg  string
}

func (e *bulkError) Error() string { return e.msg }

// Code returns SQLite's extended result code.
func (e *bulkError) Code() int { return e.code }

// openBulk opens a bulk connection to the file of dsn, a DSN of openPools (which names a
// file that exists), with the settings it gives the driver's connections: its _pragma
// parameters are run first, in order, the rest is SQLite's URI. When ctx ends, the
// statement running is interrupted and fails, and no other starts but rollback's.
func openBulk(ctx context.Context, dsn string) (_ *bulkConn, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &bulkConn{tls: libc.NewTLS(), stmts: map[string]uintptr{}, ctx: ctx}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if c.out = libc.Xmalloc(c.tls, 16); c.out == 0 {
		return nil, errors.New("open bulk connection: out of memory")
	}
	uri, pragmas := splitDSN(dsn)
	name, err := libc.CString(uri)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(c.tls, name)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, name, c.out,
		sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_URI|sqlite3.SQLITE_OPEN_NOMUTEX|sqlite3.SQLITE_OPEN_EXRESCODE, 0)
	c.db = *(*uintptr)(cmem(c.out))
	if rc != sqlite3.SQLITE_OK {
		return nil, c.err(rc)
	}
	for _, p := range pragmas {
		if err := c.exec("PRAGMA " + p); err != nil {
			if ctx.Err() != nil {
				return nil, err // ended, not refused: the context says why
			}
			return nil, fmt.Errorf("PRAGMA %s: %w", p, err)
		}
	}
	c.wake = make(chan struct{})
	c.stop = context.AfterFunc(ctx, func() {
		defer close(c.wake)
		// A TLS of its own: the connection's belongs to the goroutine running statements.
		t := libc.NewTLS()
		defer t.Close()
		sqlite3.Xsqlite3_interrupt(t, c.db)
	})
	return c, nil
}

// splitDSN splits a DSN of openPools into SQLite's URI of the file and the settings of its
// _pragma parameters ("name(value)", in order); the driver's other parameters (_txlock)
// are dropped.
func splitDSN(dsn string) (uri string, pragmas []string) {
	base, query, _ := strings.Cut(dsn, "?")
	var keep []string
	for _, kv := range strings.Split(query, "&") {
		switch {
		case strings.HasPrefix(kv, "_pragma="):
			pragmas = append(pragmas, strings.TrimPrefix(kv, "_pragma="))
		case kv != "" && !strings.HasPrefix(kv, "_"):
			keep = append(keep, kv)
		}
	}
	if len(keep) == 0 {
		return base, pragmas
	}
	return base + "?" + strings.Join(keep, "&"), pragmas
}

// close finalizes the statements and closes the connection, after any interrupt of the
// context has returned.
func (c *bulkConn) close() {
	if c.stop != nil && !c.stop() {
		<-c.wake
	}
	for _, s := range c.stmts {
		sqlite3.Xsqlite3_finalize(c.tls, s)
	}
	if c.db != 0 {
		// A connection that fails to close (a statement left unfinalized) is closed by
		// close_v2 once it can be: nothing here is left to wait for it.
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
	}
	if c.buf != 0 {
		libc.Xfree(c.tls, c.buf)
	}
	if c.out != 0 {
		libc.Xfree(c.tls, c.out)
	}
	c.tls.Close()
}

// err returns SQLite's error for result code rc.
func (c *bulkConn) err(rc int32) error {
	code := int(rc)
	msg := libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	if c.db != 0 {
		// The connection's own message names the table or constraint, as the driver's do.
		if ext := int(sqlite3.Xsqlite3_extended_errcode(c.tls, c.db)); ext&0xff == code&0xff {
			code = ext
			msg = libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))
		}
	}
	return &bulkError{code: code, msg: fmt.Sprintf("%s (%d)", msg, code)}
}

// stmt returns the prepared statement of q, preparing it on its first use. q must be one
// statement.
func (c *bulkConn) stmt(q string) (uintptr, error) {
	if s, ok := c.stmts[q]; ok {
		return s, nil
	}
	z, err := libc.CString(q)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, z)
	pStmt, pTail := c.out, c.out+8
	if rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, pStmt, pTail); rc != sqlite3.SQLITE_OK {
		return 0, c.err(rc)
	}
	s := *(*uintptr)(cmem(pStmt))
	if rest := strings.TrimSpace(libc.GoString(*(*uintptr)(cmem(pTail)))); rest != "" && rest != ";" {
		sqlite3.Xsqlite3_finalize(c.tls, s)
		return 0, fmt.Errorf("bulk connection: more than one statement in %.60q", q)
	}
	if s == 0 {
		return 0, fmt.Errorf("bulk connection: no statement in %.60q", q)
	}
	c.stmts[q] = s
	return s, nil
}

// bulkValue is one argument of a statement on a bulk connection, held as itself rather
// than boxed in an interface: a load hands over two million of them, and boxing each
// text (an allocation) was a sixth of what the load's encoder spent.
type bulkValue struct {
	kind bulkKind
	i    int64  // bulkInt; bulkFloat's bits (math.Float64bits)
	s    string // bulkText
	b    []byte // bulkBlob
}

// bulkKind is the SQLite type a bulkValue is bound as.
type bulkKind uint8

const (
	bulkNull bulkKind = iota
	bulkInt
	bulkFloat
	bulkText
	bulkBlob
)

// textValue and intValue make the bulkValues of a text and of an integer.
func textValue(s string) bulkValue { return bulkValue{kind: bulkText, s: s} }
func intValue(i int64) bulkValue   { return bulkValue{kind: bulkInt, i: i} }

// appendBulkValues appends args to vals as bulkValues: each taken as the type SQLite binds
// it as, converted first as database/sql converts an argument
// (driver.DefaultParameterConverter) when it is not such a value already.
func appendBulkValues(vals []bulkValue, args ...any) ([]bulkValue, error) {
	for _, a := range args {
		v, ok := bulkValueOf(a)
		if !ok && !driver.IsValue(a) {
			c, err := driver.DefaultParameterConverter.ConvertValue(a)
			if err != nil {
				return vals, fmt.Errorf("argument %d: %w", len(vals)+1, err)
			}
			a = c
			v, ok = bulkValueOf(a)
		}
		if !ok {
			// A driver value SQLite has no type for (a time: tandem stores times as text).
			return vals, fmt.Errorf("argument %d: a %T", len(vals)+1, a)
		}
		vals = append(vals, v)
	}
	return vals, nil
}

// bulkValueOf returns a as a bulkValue, if it is a value of a type SQLite binds.
func bulkValueOf(a any) (bulkValue, bool) {
	switch x := a.(type) {
	case nil:
		return bulkValue{}, true
	case int64:
		return intValue(x), true
	case string:
		return textValue(x), true
	case float64:
		return bulkValue{kind: bulkFloat, i: int64(math.Float64bits(x))}, true
	case bool:
		if x {
			return intValue(1), true
		}
		return intValue(0), true
	case []byte:
		return bulkValue{kind: bulkBlob, b: x}, true
	}
	return bulkValue{}, false
}

// bind binds vals to the parameters of s, in order. Texts and blobs are copied into the
// connection's buffer and bound where they lie: they stay valid until the next bind.
func (c *bulkConn) bind(s uintptr, vals []bulkValue) error {
	if n := int(sqlite3.Xsqlite3_bind_parameter_count(c.tls, s)); n != len(vals) {
		return fmt.Errorf("bulk connection: %d arguments for %d parameters", len(vals), n)
	}
	size := 0
	for i := range vals {
		size += len(vals[i].s) + len(vals[i].b)
	}
	if size > math.MaxInt32 {
		return fmt.Errorf("bulk connection: %d bytes of arguments in one statement", size)
	}
	if size > c.bufN || c.buf == 0 {
		n := max(size, 2*c.bufN, 1<<16)
		p := libc.Xrealloc(c.tls, c.buf, types.Size_t(n))
		if p == 0 {
			return errors.New("bulk connection: out of memory")
		}
		c.buf, c.bufN = p, n
	}
	mem := unsafe.Slice((*byte)(cmem(c.buf)), c.bufN)
	off := 0
	for i := range vals {
		v := &vals[i]
		idx := int32(i + 1)
		var rc int32
		switch v.kind {
		case bulkNull:
			rc = sqlite3.Xsqlite3_bind_null(c.tls, s, idx)
		case bulkInt:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, s, idx, v.i)
		case bulkFloat:
			rc = sqlite3.Xsqlite3_bind_double(c.tls, s, idx, math.Float64frombits(uint64(v.i)))
		case bulkText:
			// A pointer into the buffer even for an empty text: SQLite binds a null
			// pointer as NULL.
			copy(mem[off:], v.s)
			rc = sqlite3.Xsqlite3_bind_text(c.tls, s, idx, c.buf+uintptr(off), int32(len(v.s)), 0)
			off += len(v.s)
		case bulkBlob:
			copy(mem[off:], v.b)
			rc = sqlite3.Xsqlite3_bind_blob(c.tls, s, idx, c.buf+uintptr(off), int32(len(v.b)), 0)
			off += len(v.b)
		}
		if rc != sqlite3.SQLITE_OK {
			return c.err(rc)
		}
	}
	return nil
}

// run steps s until it is done, calling row (when not nil) for each row it returns with
// the row's values (int64, float64, string, []byte or nil), and resets it.
func (c *bulkConn) run(s uintptr, row func([]any) error) error {
	defer sqlite3.Xsqlite3_reset(c.tls, s)
	var vals []any
	for {
		switch rc := sqlite3.Xsqlite3_step(c.tls, s); rc {
		case sqlite3.SQLITE_DONE:
			return nil
		case sqlite3.SQLITE_ROW:
			if row == nil {
				continue
			}
			n := int(sqlite3.Xsqlite3_column_count(c.tls, s))
			vals = vals[:0]
			for i := int32(0); i < int32(n); i++ {
				vals = append(vals, c.column(s, i))
			}
			if err := row(vals); err != nil {
				return err
			}
		default:
			// reset returns the statement's error too; step's code is the one to tell.
			return c.err(rc)
		}
	}
}

// column returns column i of s's current row as a Go value.
func (c *bulkConn) column(s uintptr, i int32) any {
	switch sqlite3.Xsqlite3_column_type(c.tls, s, i) {
	case sqlite3.SQLITE_INTEGER:
		return int64(sqlite3.Xsqlite3_column_int64(c.tls, s, i))
	case sqlite3.SQLITE_FLOAT:
		return sqlite3.Xsqlite3_column_double(c.tls, s, i)
	case sqlite3.SQLITE_TEXT:
		p := sqlite3.Xsqlite3_column_text(c.tls, s, i)
		n := sqlite3.Xsqlite3_column_bytes(c.tls, s, i)
		return string(unsafe.Slice((*byte)(cmem(p)), n))
	case sqlite3.SQLITE_BLOB:
		p := sqlite3.Xsqlite3_column_blob(c.tls, s, i)
		n := sqlite3.Xsqlite3_column_bytes(c.tls, s, i)
		return append([]byte(nil), unsafe.Slice((*byte)(cmem(p)), n)...)
	}
	return nil
}

// exec runs q with args.
func (c *bulkConn) exec(q string, args ...any) error {
	return c.query(q, args, nil)
}

// query runs q with args and calls row for each row it returns (see run), unless the
// connection's context has ended.
func (c *bulkConn) query(q string, args []any, row func([]any) error) error {
	vals, err := appendBulkValues(nil, args...)
	if err != nil {
		return err
	}
	return c.queryValues(q, vals, row)
}

// queryValues is query with its arguments as bulkValues.
func (c *bulkConn) queryValues(q string, vals []bulkValue, row func([]any) error) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	return c.do(q, vals, row)
}

// rollback rolls back the transaction open on the connection, if there is one (SQLite
// may have rolled it back itself: an interrupt, a full disk), whether or not the
// context has ended.
func (c *bulkConn) rollback() error {
	if sqlite3.Xsqlite3_get_autocommit(c.tls, c.db) != 0 {
		return nil
	}
	return c.do("ROLLBACK", nil, nil)
}

// do is queryValues without the context's check.
func (c *bulkConn) do(q string, vals []bulkValue, row func([]any) error) error {
	s, err := c.stmt(q)
	if err != nil {
		return err
	}
	if err := c.bind(s, vals); err != nil {
		return err
	}
	err = c.run(s, row)
	// No argument is left pointing into the buffer the next statement overwrites.
	sqlite3.Xsqlite3_clear_bindings(c.tls, s)
	return err
}

// cmem returns a pointer to the C memory at address p: memory of SQLite's or of libc's
// allocator, which lies outside the Go heap, so the collector neither moves nor frees it
// and the address stays good until the C side frees it. (go vet's unsafeptr check flags
// every unsafe.Pointer(uintptr): it cannot tell such memory from the Go heap's.)
func cmem(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
