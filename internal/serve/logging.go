package serve

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/tandem-editor/tandem/store"
)

// loggedStore is one session's view of the server's store: each write the session makes
// (TUI, CLI command, import) logs one line with what was written (kind, id, what write) and
// its outcome, never a field's value. Reads pass through unlogged, and so do presence
// refreshes and the idempotency bookkeeping inside a write.
type loggedStore struct {
	store.Store
	log *slog.Logger // carries the session's user, key and address
}

// withWriteLog returns st for a session whose lines log gets.
func withWriteLog(st store.Store, log *slog.Logger) store.Store {
	return &loggedStore{Store: st, log: log}
}

// wrote logs one write: its outcome is "ok", "unchanged", "replayed" or the store's error
// code (ECONFLICT, ELEASE …), never the error's text, which may quote a value.
func (l *loggedStore) wrote(ctx context.Context, what string, kind store.Kind, id int64, outcome string, err error) {
	if err != nil {
		outcome = store.ErrorCode(err)
	}
	l.log.LogAttrs(ctx, slog.LevelInfo, "write",
		slog.String("write", what), slog.String("kind", string(kind)), slog.Int64("id", id), slog.String("outcome", outcome))
}

// outcome names how a save ended that returned res without an error.
func outcome(res *store.UpdateResult) string {
	switch {
	case res == nil:
		return "ok"
	case res.Replayed:
		return "replayed"
	case res.Unchanged:
		return "unchanged"
	}
	return "ok"
}

// CreateRecord creates as the store does, and logs it.
func (l *loggedStore) CreateRecord(ctx context.Context, kind store.Kind, vals store.Values, opts ...store.CreateOptions) (*store.Record, error) {
	rec, err := l.Store.CreateRecord(ctx, kind, vals, opts...)
	var id int64
	if rec != nil {
		id = rec.ID
	}
	l.wrote(ctx, "create", kind, id, "ok", err)
	return rec, err
}

// UpdateRecord saves as the store does, and logs it.
func (l *loggedStore) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	res, err := l.Store.UpdateRecord(ctx, kind, id, u)
	l.wrote(ctx, "update", kind, id, outcome(res), err)
	return res, err
}

// LockedUpdate saves as the store does, and logs it.
func (l *loggedStore) LockedUpdate(ctx context.Context, kind store.Kind, id int64, fn func(*store.Record) (store.Update, error)) (*store.UpdateResult, error) {
	res, err := l.Store.LockedUpdate(ctx, kind, id, fn)
	l.wrote(ctx, "update", kind, id, outcome(res), err)
	return res, err
}

// DeleteRecord deletes as the store does, and logs it.
func (l *loggedStore) DeleteRecord(ctx context.Context, kind store.Kind, id int64, d store.Delete) (*store.DeleteResult, error) {
	res, err := l.Store.DeleteRecord(ctx, kind, id, d)
	out := "ok"
	if res != nil && res.Replayed {
		out = "replayed"
	}
	l.wrote(ctx, "delete", kind, id, out, err)
	return res, err
}

// RestoreRecord restores as the store does, and logs it.
func (l *loggedStore) RestoreRecord(ctx context.Context, kind store.Kind, id int64, r store.Restore) (*store.RestoreResult, error) {
	res, err := l.Store.RestoreRecord(ctx, kind, id, r)
	l.wrote(ctx, "restore", kind, id, "ok", err)
	return res, err
}

// MoveRecord moves as the store does, and logs it.
func (l *loggedStore) MoveRecord(ctx context.Context, kind store.Kind, id int64, m store.Move) (*store.UpdateResult, error) {
	res, err := l.Store.MoveRecord(ctx, kind, id, m)
	l.wrote(ctx, "move", kind, id, outcome(res), err)
	return res, err
}

// AcquireLease takes a lease as the store does, and logs it.
func (l *loggedStore) AcquireLease(ctx context.Context, r store.LeaseRequest) (*store.Lease, error) {
	le, err := l.Store.AcquireLease(ctx, r)
	l.wrote(ctx, "lease", r.Kind, r.RecordID, "ok", err)
	return le, err
}

// ExtendLease renews a lease as the store does, and logs it.
func (l *loggedStore) ExtendLease(ctx context.Context, token string, ttl time.Duration) (*store.Lease, error) {
	le, err := l.Store.ExtendLease(ctx, token, ttl)
	var kind store.Kind
	var id int64
	if le != nil {
		kind, id = le.Kind, le.RecordID
	}
	l.wrote(ctx, "lease extend", kind, id, "ok", err)
	return le, err
}

// ReleaseLease releases a lease as the store does, and logs it; "ended before" when the
// lease had already ended (released, expired or taken over).
func (l *loggedStore) ReleaseLease(ctx context.Context, token string) (*store.LeaseRelease, error) {
	rel, err := l.Store.ReleaseLease(ctx, token)
	var kind store.Kind
	var id int64
	out := "ok"
	if rel != nil {
		kind, id = rel.Lease.Kind, rel.Lease.RecordID
		if rel.Ended != "" {
			out = "ended before"
		}
	}
	l.wrote(ctx, "lease release", kind, id, out, err)
	return rel, err
}

// ReloadSchema reloads the schema of the store underneath, which every session shares.
// EUNAVAILABLE when that store cannot reload its schema.
func (l *loggedStore) ReloadSchema(ctx context.Context) (*store.Registry, error) {
	sr, ok := l.Store.(store.SchemaReloader)
	if !ok {
		return nil, store.Errorf(store.EUNAVAILABLE, "this store does not reload its schema")
	}
	return sr.ReloadSchema(ctx)
}

// SchemaVersion is the migration version of the store underneath (0 when it does not say):
// a remote store's client is told it.
func (l *loggedStore) SchemaVersion() int {
	if m, ok := l.Store.(interface{ SchemaVersion() int }); ok {
		return m.SchemaVersion()
	}
	return 0
}

// connLog is what the line logged when a connection closes says: who (once a key is
// accepted), from where, how it ended and how long it lasted.
type connLog struct {
	start time.Time
	addr  string

	mu       sync.Mutex
	user     string
	key      string // the accepted key's fingerprint, or the last refused one
	refusal  string // why the connection was refused; "" when a key was accepted
	sessions int
}

// connOf returns the log state of ctx's connection (nil outside one).
func connOf(ctx ssh.Context) *connLog {
	c, _ := ctx.Value(connKey).(*connLog)
	return c
}

// accepted notes that key proved user.
func (c *connLog) accepted(user string, key gossh.PublicKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.user, c.key, c.refusal = user, gossh.FingerprintSHA256(key), ""
}

// refused notes a key refused, and why.
func (c *connLog) refused(why string, key gossh.PublicKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refusal = why
	if key != nil {
		c.key = gossh.FingerprintSHA256(key)
	}
}

// sessionOpened counts a session of the connection.
func (c *connLog) sessionOpened() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions++
}

// logConnections starts a connection's log state and logs its line when it closes.
func (s *Server) logConnections(ctx ssh.Context, conn net.Conn) net.Conn {
	c := &connLog{start: time.Now(), addr: conn.RemoteAddr().String(), refusal: "no key accepted"}
	ctx.SetValue(connKey, c)
	if s.authLimit.Blocked(conn.RemoteAddr()) {
		s.cfg.Log.Info("connection", "addr", c.addr, "outcome", "refused",
			"reason", "too many refused keys from this address this minute", "duration", time.Duration(0).String())
		return nil
	}
	go func() {
		<-ctx.Done()
		c.mu.Lock()
		defer c.mu.Unlock()
		attrs := []any{"user", c.user, "key", c.key, "addr", c.addr}
		if c.refusal != "" {
			attrs = append(attrs, "outcome", "refused", "reason", c.refusal)
		} else {
			attrs = append(attrs, "outcome", "closed", "sessions", c.sessions)
		}
		s.cfg.Log.Info("connection", append(attrs, "duration", time.Since(c.start).Round(time.Millisecond).String())...)
	}()
	return conn
}
