package remote

import (
	"time"

	"github.com/tandem-editor/tandem/store"
)

// The arguments of the calls, one struct a call; gob sends each as it is.

// noArgs is the argument of a call that takes none (gob sends no struct without fields).
type noArgs struct{ None bool }

type kindID struct {
	Kind store.Kind
	ID   int64
	V    int64
}

type createArgs struct {
	Kind store.Kind
	Vals store.Values
	Opts *store.CreateOptions
}

type updateArgs struct {
	Kind store.Kind
	ID   int64
	U    store.Update
}

type deleteArgs struct {
	Kind store.Kind
	ID   int64
	D    store.Delete
}

type restoreArgs struct {
	Kind store.Kind
	ID   int64
	R    store.Restore
}

type moveArgs struct {
	Kind store.Kind
	ID   int64
	M    store.Move
}

type historyArgs struct {
	Kind store.Kind
	ID   int64
	Q    store.HistoryQuery
}

type keyArgs struct {
	Scope, Key, Hash string
	Result           []byte
	TTL              time.Duration
}

type tokenArgs struct {
	Token string
	TTL   time.Duration
}

type changesArgs struct {
	After int64
	Limit int
}

type leasesResult struct {
	Leases []store.Lease
	Now    time.Time
}

type schemaResult struct {
	YAML    []byte
	Version int64
}
