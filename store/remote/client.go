package remote

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Client is a store.Store whose calls travel over a stream to Serve. It is safe for
// concurrent use. A call whose context ends before its answer returns the context's error;
// the answer, when it comes, is dropped (a write may have been made: the callers' version
// checks and idempotency keys make a repeat harmless, as after any lost connection).
type Client struct {
	conn io.ReadWriteCloser
	user string
	id   string
	migr int

	wmu sync.Mutex // one request written at a time

	mu      sync.Mutex
	reg     *store.Registry
	next    uint64
	pending map[uint64]chan response
	broken  error // set once the stream failed; every call returns it from then on
	done    chan struct{}

	// Poll is how often Subscribe asks for new changes; zero means half a second.
	Poll time.Duration
}

// errClosed is what calls return after Close.
var errClosed = &store.Error{Code: store.EUNAVAILABLE, Message: "the connection to the store was closed"}

// Dial greets the server at the other end of conn and returns a Client on it; the Client
// owns conn from then on, and Close closes it. EUNAVAILABLE when the stream fails before
// the server answers, EINVALID when the server refuses the client (its message says why)
// or speaks another protocol version.
func Dial(ctx context.Context, conn io.ReadWriteCloser) (*Client, error) {
	c := &Client{conn: conn, pending: map[uint64]chan response{}, done: make(chan struct{})}
	var w welcome
	greeted := make(chan error, 1)
	go func() {
		if err := writeFrame(conn, hello{Version: protocolVersion}); err != nil {
			greeted <- err
			return
		}
		greeted <- readFrame(conn, maxResponse, &w)
	}()
	select {
	case err := <-greeted:
		if err != nil {
			conn.Close()
			return nil, unavailable("no answer from the store's server", err)
		}
	case <-ctx.Done():
		conn.Close()
		return nil, unavailable("no answer from the store's server", ctx.Err())
	}
	if w.Err != "" {
		conn.Close()
		return nil, store.Errorf(store.EINVALID, "the store's server refused: %s", w.Err)
	}
	if w.Version != protocolVersion {
		conn.Close()
		return nil, store.Errorf(store.EINVALID, "the store's server speaks protocol version %d, this tandem %d: use the same tandem release on both ends", w.Version, protocolVersion)
	}
	if !utf8.ValidString(w.User) || len(w.User) > 1024 || strings.ContainsFunc(w.User, safe.Unsafe) {
		// The name goes into history, the editor's header and messages: a server's
		// escape sequences in it would reach this terminal and every reader's.
		conn.Close()
		return nil, store.Errorf(store.EINVALID, "the store's server names this client %s, not a user name", store.Quote(safe.Line(w.User[:min(len(w.User), 80)])))
	}
	reg, err := registryOf(w.Schema, w.SchemaVersion)
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.reg, c.id, c.user, c.migr = reg, w.StoreID, w.User, w.Migrations
	go c.read()
	return c, nil
}

// registryOf parses a schema the server sent.
func registryOf(schema []byte, version int64) (*store.Registry, error) {
	reg, err := store.ParseStoredRegistry("the server's schema", schema)
	if err != nil {
		return nil, fmt.Errorf("read the server's schema: %w", err)
	}
	return reg.WithVersion(version), nil
}

func unavailable(what string, err error) error {
	return &store.Error{Code: store.EUNAVAILABLE, Message: what + ": " + err.Error(), Err: err}
}

// User is who the server takes this client to be: the name its writes carry.
func (c *Client) User() string { return c.user }

// read delivers each response to its call until the stream ends, then fails the calls
// still waiting.
func (c *Client) read() {
	var err error
	for {
		var r response
		if err = readFrame(c.conn, maxResponse, &r); err != nil {
			break
		}
		c.mu.Lock()
		ch := c.pending[r.ID]
		delete(c.pending, r.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	c.fail(unavailable("the connection to the store's server ended", err))
}

// fail marks the client broken with err (the first failure wins) and answers every
// waiting call with it.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		c.broken = err
		close(c.done)
	}
	for id, ch := range c.pending {
		ch <- response{ID: id, Err: toWire(c.broken)}
		delete(c.pending, id)
	}
}

// Close ends the stream; calls made after it return EUNAVAILABLE.
func (c *Client) Close() error {
	c.fail(errClosed)
	return c.conn.Close()
}

// roundTrip sends req and waits for its response or ctx's end.
func (c *Client) roundTrip(ctx context.Context, req request) (response, error) {
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.broken != nil {
		c.mu.Unlock()
		return response{}, c.broken
	}
	c.next++
	req.ID = c.next
	c.pending[req.ID] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	err := writeFrame(c.conn, req)
	c.wmu.Unlock()
	if err != nil {
		c.fail(unavailable("send to the store's server", err))
		return response{}, c.brokenErr()
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, req.ID)
		c.mu.Unlock()
		return response{}, ctx.Err()
	}
}

func (c *Client) brokenErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken
}

// result is the envelope of every call's result: gob sends no nil pointer on its own.
type result[R any] struct{ V R }

// call runs method on the server with args and decodes its result.
func call[R any](ctx context.Context, c *Client, method string, args any) (R, error) {
	var zero R
	req := request{Method: method, NoHistory: !store.KeepsHistory(ctx, store.Actor{Role: store.RoleEditor})}
	if a, err := store.ActorFrom(ctx); err == nil {
		req.Actor = &a
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(args); err != nil {
		return zero, fmt.Errorf("remote %s: encode: %w", method, err)
	}
	req.Args = buf.Bytes()
	resp, err := c.roundTrip(ctx, req)
	if err != nil {
		return zero, err
	}
	if resp.Err != nil {
		return zero, resp.Err.err()
	}
	var r result[R]
	if err := gob.NewDecoder(bytes.NewReader(resp.Result)).Decode(&r); err != nil {
		return zero, fmt.Errorf("remote %s: decode: %w", method, err)
	}
	if v := reflect.ValueOf(&r.V).Elem(); v.Kind() == reflect.Pointer && v.IsNil() {
		// Every store call that returns a pointer returns a value or an error; a server
		// that answers neither (broken, or not tandem) would crash the caller that reads it.
		return zero, store.Errorf(store.EUNAVAILABLE, "the store's server answered %s with nothing", method)
	}
	return r.V, nil
}

// StoreID returns the served store's id.
func (c *Client) StoreID() string { return c.id }

// SchemaVersion returns the served store's migration level, as the server read it at the
// hello.
func (c *Client) SchemaVersion() int { return c.migr }

// Registry returns the schema the server's store ran when the client connected, or as
// ReloadSchema last read it.
func (c *Client) Registry() *store.Registry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reg
}

// ReloadSchema asks the server for its store's schema and runs it from then on.
func (c *Client) ReloadSchema(ctx context.Context) (*store.Registry, error) {
	s, err := call[schemaResult](ctx, c, "Schema", noArgs{})
	if err != nil {
		return nil, err
	}
	reg, err := registryOf(s.YAML, s.Version)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.reg = reg
	c.mu.Unlock()
	return reg, nil
}

// FindRecord returns one record (see store.Records).
func (c *Client) FindRecord(ctx context.Context, kind store.Kind, id int64) (*store.Record, error) {
	return call[*store.Record](ctx, c, "FindRecord", kindID{Kind: kind, ID: id})
}

// FindRecords returns the records f matches (see store.Records).
func (c *Client) FindRecords(ctx context.Context, f store.Filter) ([]*store.Record, error) {
	return call[[]*store.Record](ctx, c, "FindRecords", f)
}

// CountRecords counts a kind's records (see store.Records).
func (c *Client) CountRecords(ctx context.Context, kind store.Kind) (int, error) {
	return call[int](ctx, c, "CountRecords", kindID{Kind: kind})
}

// CreateRecord creates a record (see store.Records).
func (c *Client) CreateRecord(ctx context.Context, kind store.Kind, vals store.Values, opts ...store.CreateOptions) (*store.Record, error) {
	a := createArgs{Kind: kind, Vals: vals}
	if len(opts) > 0 {
		a.Opts = &opts[0]
	}
	return call[*store.Record](ctx, c, "CreateRecord", a)
}

// UpdateRecord saves a change (see store.Records).
func (c *Client) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	return call[*store.UpdateResult](ctx, c, "UpdateRecord", updateArgs{Kind: kind, ID: id, U: u})
}

// lockedUpdateAttempts bounds how often LockedUpdate reads a record again that changed
// under it before it gives up with EBUSY.
const lockedUpdateAttempts = 100

// LockedUpdate runs fn on the record as it is and saves what fn returns on the version fn
// saw, reading again when another write came between (the store's transaction is on the
// server, out of fn's reach): the outcome is the one a locked read would give (see
// store.Records). EBUSY when the record kept changing.
func (c *Client) LockedUpdate(ctx context.Context, kind store.Kind, id int64, fn func(*store.Record) (store.Update, error)) (*store.UpdateResult, error) {
	if _, err := store.ActorFrom(ctx); err != nil {
		return nil, err
	}
	for range lockedUpdateAttempts {
		r, err := c.FindRecord(ctx, kind, id)
		if err != nil {
			return nil, err
		}
		u, err := fn(r.Clone())
		if err != nil {
			return nil, fmt.Errorf("locked update of %s %d: %w", kind, id, err)
		}
		if len(u.Set) == 0 && len(u.Add) == 0 {
			return nil, nil
		}
		u.BaseVersion = r.Version
		res, err := c.UpdateRecord(ctx, kind, id, u)
		var ce *store.ConflictError
		if errors.As(err, &ce) {
			continue
		}
		return res, err
	}
	return nil, store.Errorf(store.EBUSY, "%s %d kept changing during a locked update; try again later", kind, id)
}

// DeleteRecord deletes a record (see store.Records).
func (c *Client) DeleteRecord(ctx context.Context, kind store.Kind, id int64, d store.Delete) (*store.DeleteResult, error) {
	return call[*store.DeleteResult](ctx, c, "DeleteRecord", deleteArgs{Kind: kind, ID: id, D: d})
}

// RestoreRecord restores a deleted record (see store.Records).
func (c *Client) RestoreRecord(ctx context.Context, kind store.Kind, id int64, r store.Restore) (*store.RestoreResult, error) {
	return call[*store.RestoreResult](ctx, c, "RestoreRecord", restoreArgs{Kind: kind, ID: id, R: r})
}

// MoveRecord moves a record of a tree kind (see store.Documents).
func (c *Client) MoveRecord(ctx context.Context, kind store.Kind, id int64, m store.Move) (*store.UpdateResult, error) {
	return call[*store.UpdateResult](ctx, c, "MoveRecord", moveArgs{Kind: kind, ID: id, M: m})
}

// FindHistory returns a record's history (see store.History).
func (c *Client) FindHistory(ctx context.Context, kind store.Kind, id int64) ([]store.Version, error) {
	return call[[]store.Version](ctx, c, "FindHistory", kindID{Kind: kind, ID: id})
}

// FindHistoryPage returns a page of a record's history (see store.History).
func (c *Client) FindHistoryPage(ctx context.Context, kind store.Kind, id int64, q store.HistoryQuery) ([]store.Version, error) {
	return call[[]store.Version](ctx, c, "FindHistoryPage", historyArgs{Kind: kind, ID: id, Q: q})
}

// FindVersion returns one history version (see store.History).
func (c *Client) FindVersion(ctx context.Context, kind store.Kind, id, v int64) (*store.Version, error) {
	return call[*store.Version](ctx, c, "FindVersion", kindID{Kind: kind, ID: id, V: v})
}

// FindOps returns a record's operation log (see store.History).
func (c *Client) FindOps(ctx context.Context, kind store.Kind, id int64) ([]store.Change, error) {
	return call[[]store.Change](ctx, c, "FindOps", kindID{Kind: kind, ID: id})
}

// FindOpsPage returns a page of a record's operation log (see store.History).
func (c *Client) FindOpsPage(ctx context.Context, kind store.Kind, id int64, q store.HistoryQuery) ([]store.Change, error) {
	return call[[]store.Change](ctx, c, "FindOpsPage", historyArgs{Kind: kind, ID: id, Q: q})
}

// ClaimKey claims an idempotency key (see store.Idempotency).
func (c *Client) ClaimKey(ctx context.Context, scope, key, requestHash string, pendingTTL time.Duration) (*store.Claim, error) {
	return call[*store.Claim](ctx, c, "ClaimKey", keyArgs{Scope: scope, Key: key, Hash: requestHash, TTL: pendingTTL})
}

// CompleteKey completes a claimed key (see store.Idempotency).
func (c *Client) CompleteKey(ctx context.Context, scope, key string, res []byte, keep time.Duration) error {
	_, err := call[bool](ctx, c, "CompleteKey", keyArgs{Scope: scope, Key: key, Result: res, TTL: keep})
	return err
}

// FailKey fails a claimed key (see store.Idempotency).
func (c *Client) FailKey(ctx context.Context, scope, key string) error {
	_, err := call[bool](ctx, c, "FailKey", keyArgs{Scope: scope, Key: key})
	return err
}

// FindKey returns a key's state (see store.Idempotency).
func (c *Client) FindKey(ctx context.Context, scope, key string) (*store.KeyRecord, error) {
	return call[*store.KeyRecord](ctx, c, "FindKey", keyArgs{Scope: scope, Key: key})
}

// PurgeKeys purges ended keys (see store.Idempotency).
func (c *Client) PurgeKeys(ctx context.Context) (int, error) {
	return call[int](ctx, c, "PurgeKeys", noArgs{})
}

// AcquireLease takes a lease (see store.Leases).
func (c *Client) AcquireLease(ctx context.Context, r store.LeaseRequest) (*store.Lease, error) {
	return call[*store.Lease](ctx, c, "AcquireLease", r)
}

// ExtendLease extends a lease (see store.Leases).
func (c *Client) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	return call[*store.Lease](ctx, c, "ExtendLease", tokenArgs{Token: token, TTL: ttl})
}

// ReleaseLease releases a lease (see store.Leases).
func (c *Client) ReleaseLease(ctx context.Context, token string) (*store.LeaseRelease, error) {
	return call[*store.LeaseRelease](ctx, c, "ReleaseLease", tokenArgs{Token: token})
}

// BreakLease ends another's lease, for an admin (see store.LeaseBreaker).
func (c *Client) BreakLease(ctx context.Context, kind store.Kind, id int64, group string) (*store.LeaseRelease, error) {
	return call[*store.LeaseRelease](ctx, c, "BreakLease", breakArgs{Kind: kind, ID: id, Group: group})
}

// FindLeases returns the live leases f matches and the store's clock (see store.Leases).
func (c *Client) FindLeases(ctx context.Context, f store.LeaseFilter) ([]store.Lease, time.Time, error) {
	r, err := call[leasesResult](ctx, c, "FindLeases", f)
	return r.Leases, r.Now, err
}

// Changes returns the feed's changes after a point (see store.Feed).
func (c *Client) Changes(ctx context.Context, after int64, limit int) ([]store.Change, error) {
	return call[[]store.Change](ctx, c, "Changes", changesArgs{After: after, Limit: limit})
}

// LastChangeID returns the feed's last change id (see store.Feed).
func (c *Client) LastChangeID(ctx context.Context) (int64, error) {
	return call[int64](ctx, c, "LastChangeID", noArgs{})
}

// Subscribe delivers the changes after a point as the server's feed has them, asking every
// Poll, until ctx ends or the stream fails (the channel is closed then).
func (c *Client) Subscribe(ctx context.Context, after int64) (<-chan store.Change, error) {
	if err := c.brokenErr(); err != nil {
		return nil, err
	}
	poll := c.Poll
	if poll == 0 {
		poll = 500 * time.Millisecond
	}
	ch := make(chan store.Change)
	go func() {
		defer close(ch)
		for {
			chs, err := c.Changes(ctx, after, 500)
			if err != nil {
				return
			}
			for _, x := range chs {
				select {
				case ch <- x:
					after = x.ID
				case <-ctx.Done():
					return
				}
			}
			if len(chs) > 0 {
				continue
			}
			select {
			case <-time.After(poll):
			case <-ctx.Done():
				return
			case <-c.done:
				return
			}
		}
	}()
	return ch, nil
}

// Announce records a presence (see store.Presences).
func (c *Client) Announce(ctx context.Context, r store.PresenceRequest) error {
	_, err := call[bool](ctx, c, "Announce", r)
	return err
}

// Leave removes a presence (see store.Presences).
func (c *Client) Leave(ctx context.Context, session string) error {
	_, err := call[bool](ctx, c, "Leave", tokenArgs{Token: session})
	return err
}

// FindPresence returns the presences f matches (see store.Presences).
func (c *Client) FindPresence(ctx context.Context, f store.PresenceFilter) ([]store.Presence, error) {
	return call[[]store.Presence](ctx, c, "FindPresence", f)
}

var (
	_ store.Store          = (*Client)(nil)
	_ store.SchemaReloader = (*Client)(nil)
	_ store.LeaseBreaker   = (*Client)(nil)
)
