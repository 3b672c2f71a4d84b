package remote

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tandem-editor/tandem/store"
)

// Options say whom a served stream belongs to.
type Options struct {
	// Actor, when set, writes every call of the stream: the user the stream belongs to (a
	// team server's session). Of the actor a call carries, only where a replayed edit came
	// from is kept (Via, EditedAt, Resolved), so a client cannot write as anyone else or
	// in another role. Nil takes each call's actor as the client sent it: for a stream
	// that is trusted as a whole (tests).
	Actor *store.Actor
	// MaxInFlight bounds the calls served at once; zero means 4. Further requests wait
	// unread, so a client that sends without reading cannot grow the server's memory
	// past that many requests (each at most 32 MiB) and their answers.
	MaxInFlight int
}

// Serve answers the calls of a Client at the other end of conn from st, until the stream
// ends (nil), fails (its error) or ctx ends (ctx's error). It returns once every call it
// started has answered; the caller closes conn.
func Serve(ctx context.Context, st store.Store, conn io.ReadWriter, o Options) error {
	var h hello
	if err := readFrame(conn, maxRequest, &h); err != nil {
		return fmt.Errorf("read the client's hello: %w", err)
	}
	w := welcome{Version: protocolVersion, StoreID: st.StoreID()}
	if h.Version != protocolVersion {
		w.Err = fmt.Sprintf("this server speaks protocol version %d, the client %d: use the same tandem release on both ends", protocolVersion, h.Version)
	} else if reg, err := currentSchema(ctx, st); err != nil {
		w.Err = fmt.Sprintf("the store's schema: %v", err)
	} else {
		w.Schema, w.SchemaVersion = reg.YAML(), reg.Version()
		if m, ok := st.(interface{ SchemaVersion() int }); ok {
			w.Migrations = m.SchemaVersion()
		}
		if o.Actor != nil {
			w.User = o.Actor.Name
		}
	}
	if err := writeFrame(conn, w); err != nil || w.Err != "" {
		return err
	}
	limit := o.MaxInFlight
	if limit <= 0 {
		limit = 4
	}
	var (
		wmu   sync.Mutex
		calls sync.WaitGroup
		slots = make(chan struct{}, limit)
	)
	defer calls.Wait()
	reqs, readErr := readRequests(ctx, conn)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		var req request
		select {
		case req = <-reqs:
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil // the client ended the stream between requests
			}
			return fmt.Errorf("read a request: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		}
		calls.Add(1)
		go func() {
			defer calls.Done()
			defer func() { <-slots }()
			resp := answer(o.callContext(ctx, req), st, req)
			wmu.Lock()
			defer wmu.Unlock()
			_ = writeFrame(conn, resp) // a failed write ends the stream, which the loop notices
		}()
	}
}

// readRequests reads requests from conn, one at a time as they are taken, until the stream
// fails (its error on the second channel) or ctx ends: so Serve ends when ctx does (a user
// removed from a team server) though the client sends nothing. The reading goroutine
// itself ends when conn is closed.
func readRequests(ctx context.Context, conn io.Reader) (<-chan request, <-chan error) {
	reqs, failed := make(chan request), make(chan error, 1)
	go func() {
		for {
			var req request
			if err := readFrame(conn, maxRequest, &req); err != nil {
				failed <- err
				return
			}
			select {
			case reqs <- req:
			case <-ctx.Done():
				return
			}
		}
	}()
	return reqs, failed
}

// replayVia is the one Via a client may give a write (sync.Via: the replay of an offline
// copy's edit). History shows Via beside the stream's user's name, so free text from the
// client would let it write a provenance of its choosing ("alice (offline copy, edited …)
// and bob (…") into every reader's history.
const replayVia = "offline copy"

// knownVia reports whether via is a Via a served stream keeps: none, or replayVia.
func knownVia(via string) bool { return via == "" || via == replayVia }

// callContext is ctx with the actor and history scope a call runs with. Of the call's own
// actor only a known Via (knownVia) and its time are kept; any other Via is dropped with
// them, so the write is history's plain "alice".
func (o Options) callContext(ctx context.Context, req request) context.Context {
	switch {
	case o.Actor != nil:
		a := *o.Actor
		if req.Actor != nil && knownVia(req.Actor.Via) {
			a.Via, a.EditedAt, a.Resolved = req.Actor.Via, req.Actor.EditedAt, req.Actor.Resolved
		}
		ctx = store.WithActor(ctx, a)
	case req.Actor != nil:
		ctx = store.WithActor(ctx, *req.Actor)
	}
	if req.NoHistory {
		ctx = store.WithoutHistory(ctx)
	}
	return ctx
}

// currentSchema is the schema st holds now: reloaded where st can (another process may
// have applied a newer one since st opened), so a client is never handed an old one.
func currentSchema(ctx context.Context, st store.Store) (*store.Registry, error) {
	if r, ok := st.(store.SchemaReloader); ok {
		return r.ReloadSchema(ctx)
	}
	return st.Registry(), nil
}

// answer runs one call on st.
func answer(ctx context.Context, st store.Store, req request) (resp response) {
	resp.ID = req.ID
	defer func() {
		if p := recover(); p != nil {
			resp.Result, resp.Err = nil, toWire(store.Errorf(store.EINTERNAL, "%s failed on the server: %v", req.Method, p))
		}
	}()
	h, ok := handlers[req.Method]
	if !ok {
		resp.Err = toWire(store.Errorf(store.EINVALID, "the server knows no call %s: use the same tandem release on both ends", store.Quote(req.Method)))
		return resp
	}
	v, err := h(ctx, st, req.Args)
	if err != nil {
		resp.Err = toWire(err)
		return resp
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		resp.Err = toWire(store.Errorf(store.EINTERNAL, "%s: encode the result: %v", req.Method, err))
		return resp
	}
	resp.Result = buf.Bytes()
	return resp
}

// handler runs one kind of call: its arguments decoded, its result in an envelope.
type handler func(ctx context.Context, st store.Store, args []byte) (any, error)

// handle makes the handler of a call with arguments A and result R.
func handle[A, R any](fn func(context.Context, store.Store, A) (R, error)) handler {
	return func(ctx context.Context, st store.Store, args []byte) (any, error) {
		var a A
		if err := gob.NewDecoder(bytes.NewReader(args)).Decode(&a); err != nil {
			return nil, store.Errorf(store.EINVALID, "malformed arguments: %v", err)
		}
		r, err := fn(ctx, st, a)
		if err != nil {
			return nil, err
		}
		return result[R]{V: r}, nil
	}
}

// writing is handle for a call that writes outside the record writes (which check their
// actor themselves): an actor who may only read is refused it (EFORBIDDEN); a call
// without an actor (the store's keys need none) goes ahead.
func writing[A, R any](what string, fn func(context.Context, store.Store, A) (R, error)) handler {
	return handle(func(ctx context.Context, st store.Store, a A) (R, error) {
		if a, err := store.ActorFrom(ctx); err == nil {
			if err := a.CheckWrite(what); err != nil {
				var zero R
				return zero, err
			}
		}
		return fn(ctx, st, a)
	})
}

// keyOf is writing for a call on an idempotency key: besides, the keys of the system's
// jobs are refused (EFORBIDDEN) to an actor other than the system, since a job's key is
// guessable and claiming it keeps the workers from the record.
func keyOf[R any](what string, fn func(context.Context, store.Store, keyArgs) (R, error)) handler {
	return writing(what, func(ctx context.Context, st store.Store, a keyArgs) (R, error) {
		if who, err := store.ActorFrom(ctx); err == nil && a.Scope == store.ScopeJob && who.Role != store.RoleSystem {
			var zero R
			return zero, store.Errorf(store.EFORBIDDEN, "%s: %s is not the system: the keys of jobs are the workers'", what, store.Quote(who.Name))
		}
		return fn(ctx, st, a)
	})
}

// done adapts a call that returns only an error.
func done(err error) (bool, error) { return err == nil, err }

var handlers = map[string]handler{
	"Schema": handle(func(ctx context.Context, st store.Store, _ noArgs) (schemaResult, error) {
		reg, err := currentSchema(ctx, st)
		if err != nil {
			return schemaResult{}, err
		}
		return schemaResult{YAML: reg.YAML(), Version: reg.Version()}, nil
	}),
	"FindRecord": handle(func(ctx context.Context, st store.Store, a kindID) (*store.Record, error) {
		return st.FindRecord(ctx, a.Kind, a.ID)
	}),
	"FindRecords": handle(func(ctx context.Context, st store.Store, f store.Filter) ([]*store.Record, error) {
		return st.FindRecords(ctx, f)
	}),
	"CountRecords": handle(func(ctx context.Context, st store.Store, a kindID) (int, error) {
		return st.CountRecords(ctx, a.Kind)
	}),
	"CreateRecord": handle(func(ctx context.Context, st store.Store, a createArgs) (*store.Record, error) {
		if a.Opts != nil {
			return st.CreateRecord(ctx, a.Kind, a.Vals, *a.Opts)
		}
		return st.CreateRecord(ctx, a.Kind, a.Vals)
	}),
	"UpdateRecord": handle(func(ctx context.Context, st store.Store, a updateArgs) (*store.UpdateResult, error) {
		return st.UpdateRecord(ctx, a.Kind, a.ID, a.U)
	}),
	"DeleteRecord": handle(func(ctx context.Context, st store.Store, a deleteArgs) (*store.DeleteResult, error) {
		return st.DeleteRecord(ctx, a.Kind, a.ID, a.D)
	}),
	"RestoreRecord": handle(func(ctx context.Context, st store.Store, a restoreArgs) (*store.RestoreResult, error) {
		return st.RestoreRecord(ctx, a.Kind, a.ID, a.R)
	}),
	"MoveRecord": handle(func(ctx context.Context, st store.Store, a moveArgs) (*store.UpdateResult, error) {
		return st.MoveRecord(ctx, a.Kind, a.ID, a.M)
	}),
	"FindHistory": handle(func(ctx context.Context, st store.Store, a kindID) ([]store.Version, error) {
		return st.FindHistory(ctx, a.Kind, a.ID)
	}),
	"FindHistoryPage": handle(func(ctx context.Context, st store.Store, a historyArgs) ([]store.Version, error) {
		return st.FindHistoryPage(ctx, a.Kind, a.ID, a.Q)
	}),
	"FindVersion": handle(func(ctx context.Context, st store.Store, a kindID) (*store.Version, error) {
		return st.FindVersion(ctx, a.Kind, a.ID, a.V)
	}),
	"FindOps": handle(func(ctx context.Context, st store.Store, a kindID) ([]store.Change, error) {
		return st.FindOps(ctx, a.Kind, a.ID)
	}),
	"FindOpsPage": handle(func(ctx context.Context, st store.Store, a historyArgs) ([]store.Change, error) {
		return st.FindOpsPage(ctx, a.Kind, a.ID, a.Q)
	}),
	"ClaimKey": keyOf("claim an idempotency key", func(ctx context.Context, st store.Store, a keyArgs) (*store.Claim, error) {
		return st.ClaimKey(ctx, a.Scope, a.Key, a.Hash, a.TTL)
	}),
	"CompleteKey": keyOf("complete an idempotency key", func(ctx context.Context, st store.Store, a keyArgs) (bool, error) {
		return done(st.CompleteKey(ctx, a.Scope, a.Key, a.Result, a.TTL))
	}),
	"FailKey": keyOf("fail an idempotency key", func(ctx context.Context, st store.Store, a keyArgs) (bool, error) {
		return done(st.FailKey(ctx, a.Scope, a.Key))
	}),
	"FindKey": handle(func(ctx context.Context, st store.Store, a keyArgs) (*store.KeyRecord, error) {
		return st.FindKey(ctx, a.Scope, a.Key)
	}),
	"PurgeKeys": writing("purge idempotency keys", func(ctx context.Context, st store.Store, _ noArgs) (int, error) {
		return st.PurgeKeys(ctx)
	}),
	"AcquireLease": handle(func(ctx context.Context, st store.Store, r store.LeaseRequest) (*store.Lease, error) {
		return st.AcquireLease(ctx, r)
	}),
	"ExtendLease": handle(func(ctx context.Context, st store.Store, a tokenArgs) (*store.Lease, error) {
		return st.ExtendLease(ctx, a.Token, a.TTL)
	}),
	"ReleaseLease": handle(func(ctx context.Context, st store.Store, a tokenArgs) (*store.LeaseRelease, error) {
		return st.ReleaseLease(ctx, a.Token)
	}),
	"BreakLease": handle(func(ctx context.Context, st store.Store, a breakArgs) (*store.LeaseRelease, error) {
		b, ok := st.(store.LeaseBreaker)
		if !ok {
			return nil, store.Errorf(store.EINVALID, "the server's store cannot break leases")
		}
		return b.BreakLease(ctx, a.Kind, a.ID, a.Group)
	}),
	"FindLeases": handle(func(ctx context.Context, st store.Store, f store.LeaseFilter) (leasesResult, error) {
		ls, now, err := st.FindLeases(ctx, f)
		return leasesResult{Leases: ls, Now: now}, err
	}),
	"Changes": handle(func(ctx context.Context, st store.Store, a changesArgs) ([]store.Change, error) {
		return st.Changes(ctx, a.After, a.Limit)
	}),
	"LastChangeID": handle(func(ctx context.Context, st store.Store, _ noArgs) (int64, error) {
		return st.LastChangeID(ctx)
	}),
	"Announce": handle(func(ctx context.Context, st store.Store, r store.PresenceRequest) (bool, error) {
		return done(st.Announce(ctx, r))
	}),
	"Leave": handle(func(ctx context.Context, st store.Store, a tokenArgs) (bool, error) {
		return done(st.Leave(ctx, a.Token))
	}),
	"FindPresence": handle(func(ctx context.Context, st store.Store, f store.PresenceFilter) ([]store.Presence, error) {
		return st.FindPresence(ctx, f)
	}),
}
