// Package storetest is the contract every tandem store must pass (Run, RunConcurrency). The
// suite uses nothing but the store.Store interface, so it runs unchanged against store/memory,
// store/sqlite and store/postgres.
package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Opener returns a fresh, migrated, empty store for one subtest, opened with opts (the suite
// passes a custom field registry where a rule must hold whatever the registry says). The
// suite closes it when the subtest ends.
type Opener func(t *testing.T, opts store.Options) store.Store

// suiteTest is one named entry of the contract: a guarantee and its subtests.
type suiteTest struct {
	name string
	fn   func(t *testing.T, open Opener)
}

// Run runs the contract suite against the store open returns: one named subtest per
// guarantee (TestX/UpdateRecord/ErrConflict), each on a fresh store. It is fast (no heavy
// concurrency; a few waits of about a second for lease and key expiry, run in parallel).
func Run(t *testing.T, open Opener) {
	run(t, open, contract())
}

// RunConcurrency runs the concurrency half of the contract: many goroutines on their own
// connections hammering one store (relative adds, version races, tree moves, leases, keys).
func RunConcurrency(t *testing.T, open Opener) {
	run(t, open, concurrency())
}

func run(t *testing.T, open Opener, tests []suiteTest) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

func contract() []suiteTest {
	return []suiteTest{
		{"CreateRecord", testCreateRecord},
		{"CreateRecord_Options", testCreateOptions},
		{"FindRecords", testFindRecords},
		{"FindRecords_Search", testSearch},
		{"FindRecords_Sort", testSort},
		{"StreamRecords", testStream},
		{"UpdateRecord", testUpdateRecord},
		{"UpdateRecord_Ownership", testOwnership},
		{"ReadOnlyActor", testReadOnlyActor},
		{"Permissions_Kinds", testPermissionsKinds},
		{"Permissions_Subtree", testPermissionsSubtree},
		{"Permissions_Admin", testPermissionsAdmin},
		{"UpdateRecord_Relative", testRelative},
		{"UpdateRecord_RelativeSystem", testRelativeSystemSave},
		{"UpdateRecord_Idempotency", testUpdateIdempotency},
		{"Idempotency_ReplayNamesWhoApplied", testKeyAppliedBy},
		{"LockedUpdate", testLockedUpdate},
		{"History", testHistory},
		{"History_Suppression", testSuppression},
		{"History_Rebuild", testHistoryRebuild},
		{"History_Page", testHistoryPage},
		{"Keys", testKeys},
		{"MoveDocument", testMoveDocument},
		{"DeleteRecord", testDeleteRecord},
		{"RestoreRecord", testRestoreRecord},
		{"Presence", testPresence},
		{"SchemaVersion", testSchemaVersion},
		{"StoreID", testStoreID},
		{"Leases", testLeases},
		{"Leases_Save", testLeaseSave},
		{"Feed", testFeed},
		{"Rules_Tree", testTreeRules},
		{"Rules_Money", testMoneyRules},
		{"Rules_SKU", testSKURules},
		{"Rules_Overflow", testOverflow},
		{"Rules_LeaseBindsEveryWriter", testLeaseBindsEveryWriter},
		{"Rules_ReplayFirst", testReplayFirst},
		{"Rules_SameWords", testSameWords},
		{"Rules_NoEmptyVersions", testNoEmptyVersions},
	}
}

// fresh opens a store for one subtest and closes it when the subtest ends.
func fresh(t *testing.T, open Opener) store.Store {
	t.Helper()
	return freshWith(t, open, store.Options{})
}

// freshWith opens a store with opts for one subtest and closes it when the subtest ends.
func freshWith(t *testing.T, open Opener, opts store.Options) store.Store {
	t.Helper()
	s := open(t, opts)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return s
}

// Actors used throughout the suite.
var (
	actAlice  = store.Actor{Name: "alice", Role: store.RoleEditor}
	actBob    = store.Actor{Name: "bob", Role: store.RoleEditor}
	actWorker = store.Actor{Name: "worker", Role: store.RoleSystem}
)

// actx returns a context whose writes are made by a.
func actx(t *testing.T, a store.Actor) context.Context {
	return store.WithActor(t.Context(), a)
}

func mustCreateProduct(t *testing.T, s store.Store, sku string) *store.Record {
	t.Helper()
	r, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{
		"sku": sku, "name": "Product " + sku, "description": "line one\nline two\n",
		"price": int64(2999), "stock": int64(10), "categories": []string{"tools"},
	})
	if err != nil {
		t.Fatalf("create product %s: %v", sku, err)
	}
	return r
}

func mustCreateDoc(t *testing.T, s store.Store, title string, parent *int64) *store.Record {
	t.Helper()
	vals := store.Values{"title": title, "body": "Some text about " + title + ".\n"}
	if parent != nil {
		vals["parent_id"] = *parent
	}
	r, err := s.CreateRecord(actx(t, actAlice), store.KindDocument, vals)
	if err != nil {
		t.Fatalf("create document %q: %v", title, err)
	}
	return r
}

func mustSave(t *testing.T, s store.Store, ctx context.Context, kind store.Kind, id int64, u store.Update) *store.UpdateResult {
	t.Helper()
	res, err := s.UpdateRecord(ctx, kind, id, u)
	if err != nil {
		t.Fatalf("update %s %d: %v", kind, id, err)
	}
	return res
}

func mustFind(t *testing.T, s store.Store, kind store.Kind, id int64) *store.Record {
	t.Helper()
	r, err := s.FindRecord(t.Context(), kind, id)
	if err != nil {
		t.Fatalf("find %s %d: %v", kind, id, err)
	}
	return r
}

func mustAcquire(t *testing.T, s store.Store, a store.Actor, kind store.Kind, id int64, group string, ttl time.Duration) *store.Lease {
	t.Helper()
	l, err := s.AcquireLease(actx(t, a), store.LeaseRequest{Kind: kind, RecordID: id, Group: group, TTL: ttl})
	if err != nil {
		t.Fatalf("%s acquires %s %d (%s): %v", a.Name, kind, id, group, err)
	}
	return l
}

// requireCode fails unless err carries the store error code want.
func requireCode(t *testing.T, err error, want string) {
	t.Helper()
	if got := store.ErrorCode(err); got != want {
		t.Fatalf("error code = %q (%v), want %q", got, err, want)
	}
}

// requireMessage fails unless err's message contains every part.
func requireMessage(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("error = nil, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err.Error(), p)
		}
	}
}

func asLeaseError(t *testing.T, err error) *store.LeaseError {
	t.Helper()
	var le *store.LeaseError
	if !errors.As(err, &le) {
		t.Fatalf("error = %v (%T), want a *store.LeaseError", err, err)
	}
	return le
}

func asConflict(t *testing.T, err error) *store.ConflictError {
	t.Helper()
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want a *store.ConflictError", err, err)
	}
	return ce
}

// lastChanges returns the change log after id, oldest first.
func mustChanges(t *testing.T, s store.Store, after int64) []store.Change {
	t.Helper()
	cs, err := s.Changes(t.Context(), after, 0)
	if err != nil {
		t.Fatalf("changes after %d: %v", after, err)
	}
	return cs
}

func mustLastChangeID(t *testing.T, s store.Store) int64 {
	t.Helper()
	id, err := s.LastChangeID(t.Context())
	if err != nil {
		t.Fatalf("last change id: %v", err)
	}
	return id
}

func ptr[T any](v T) *T { return &v }

// waitPast sleeps until d has passed: used to let a short lease or key lifetime end on the
// database clock. It waits for a state; it asserts nothing about timing.
func waitPast(d time.Duration) { time.Sleep(d + 300*time.Millisecond) }

// waitsBeside marks a suite entry whose subtests wait out a lease, key or presence lifetime
// (a second at the least, the stores' minimum), each on stores of its own: it runs in
// parallel with the other such entries, after the rest of the suite, so that their waits
// overlap instead of adding up (about 8 s a store otherwise).
func waitsBeside(t *testing.T) { t.Parallel() }
