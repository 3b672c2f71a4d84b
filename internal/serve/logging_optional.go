package serve

import (
	"context"

	"github.com/tandem-editor/tandem/store"
)

// The optional interfaces of the store underneath pass through a session's loggedStore, so
// that what a session may do (an admin's schema apply and lease break, an import's batches
// and bulk creates, an export's stream) does not depend on the log. Each answers EINVALID
// when the store underneath lacks it, as a caller that asserts the interface on that store
// would have found; the writes among them log a line as the others do.

// unsupported is the refusal of an optional call the store underneath lacks.
func unsupported(what string) error {
	return store.Errorf(store.EINVALID, "this store cannot %s", what)
}

// BreakLease ends another's lease as the store does, and logs it.
func (l *loggedStore) BreakLease(ctx context.Context, kind store.Kind, id int64, group string) (*store.LeaseRelease, error) {
	b, ok := l.Store.(store.LeaseBreaker)
	if !ok {
		return nil, unsupported("end another's lease")
	}
	rel, err := b.BreakLease(ctx, kind, id, group)
	l.wrote(ctx, "lease break", kind, id, "ok", err)
	return rel, err
}

// ApplySchema changes the schema as the store does, and logs it (kind and id empty).
func (l *loggedStore) ApplySchema(ctx context.Context, next *store.Registry, o store.ApplyOptions) (*store.ApplyResult, error) {
	a, ok := l.Store.(store.SchemaApplier)
	if !ok {
		return nil, unsupported("change its schema")
	}
	res, err := a.ApplySchema(ctx, next, o)
	l.wrote(ctx, "schema apply", "", 0, "ok", err)
	return res, err
}

// WriteBatch runs fn's writes in one of the store's batches; each write logs its own line.
func (l *loggedStore) WriteBatch(ctx context.Context, fn func(ctx context.Context) error) error {
	b, ok := l.Store.(store.Batcher)
	if !ok {
		return fn(ctx) // a write at a time, as a caller without a Batcher does
	}
	return b.WriteBatch(ctx, fn)
}

// ListKeys says which keys the store holds, as the store does.
func (l *loggedStore) ListKeys(ctx context.Context, scope string, keys []string) (map[string]bool, error) {
	k, ok := l.Store.(store.KeyLister)
	if !ok {
		return nil, unsupported("list its keys")
	}
	return k.ListKeys(ctx, scope, keys)
}

// CreateRecords creates records in bulk as the store does, and logs a line for each made.
func (l *loggedStore) CreateRecords(ctx context.Context, recs []store.NewRecord) ([]*store.Record, error) {
	b, ok := l.Store.(store.BulkCreator)
	if !ok {
		return nil, nil // none made in bulk: the caller creates them one by one
	}
	made, err := b.CreateRecords(ctx, recs)
	for _, r := range made {
		l.wrote(ctx, "create", r.Kind, r.ID, "ok", nil)
	}
	return made, err
}

// StreamRecords streams records as the store does.
func (l *loggedStore) StreamRecords(ctx context.Context, f store.Filter, fields []string, fn func(*store.Record) error) error {
	s, ok := l.Store.(store.RecordStreamer)
	if !ok {
		return unsupported("stream records")
	}
	return s.StreamRecords(ctx, f, fields, fn)
}

var (
	_ store.LeaseBreaker   = (*loggedStore)(nil)
	_ store.SchemaApplier  = (*loggedStore)(nil)
	_ store.Batcher        = (*loggedStore)(nil)
	_ store.KeyLister      = (*loggedStore)(nil)
	_ store.BulkCreator    = (*loggedStore)(nil)
	_ store.RecordStreamer = (*loggedStore)(nil)
)
