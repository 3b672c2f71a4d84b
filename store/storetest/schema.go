package storetest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// RunSchema runs the contract on a schema of the store's own with no product or document in
// it: store/testdata/parts.yaml (suppliers with a unique code and a rating counter, parts
// that refer to a supplier and have a status enum with a default, areas in a tree). Every
// subtest opens a fresh store with open(t, store.Options{Registry: PartsRegistry(t)}). Its
// races are small (two to eight goroutines, a few rounds), so it runs with the fast suite;
// on the in-memory store they pass by its one lock, on the SQL stores they test the
// transactions.
func RunSchema(t *testing.T, open Opener) {
	run(t, open, schemaContract())
}

func schemaContract() []suiteTest {
	return []suiteTest{
		{"UnknownKind", testSchemaUnknownKind},
		{"Defaults", testSchemaDefaults},
		{"PartialSaves", testSchemaPartialSaves},
		{"RelativeRace", testSchemaRelativeRace},
		{"UniqueRace", testSchemaUniqueRace},
		{"Refs", testSchemaRefs},
		{"RefsRace", testSchemaRefsRace},
		{"TreeMoves", testSchemaTreeMoves},
		{"TreeMoveRace", testSchemaTreeMoveRace},
		{"Keys", testSchemaKeys},
		{"Leases", testSchemaLeases},
		{"LeaseGroups", testSchemaLeaseGroups},
		{"HistoryAndFeed", testSchemaHistoryAndFeed},
		{"DeleteRestore", testSchemaDeleteRestore},
		{"DeletedValues", testSchemaDeletedValues},
		{"Search", testSchemaSearch},
		{"Sort", testSchemaSort},
	}
}

// The kinds of parts.yaml.
const (
	kindSupplier store.Kind = "supplier"
	kindPart     store.Kind = "part"
	kindArea     store.Kind = "area"
)

var parts struct {
	once sync.Once
	text []byte
	reg  *store.Registry
	err  error
}

// PartsRegistry returns the schema of store/testdata/parts.yaml, read once per test binary:
// what RunSchema opens its stores with, for a backend's test that must know it (to make the
// tables before the suite runs, or to tell whether it can hold the schema at all).
func PartsRegistry(t testing.TB) *store.Registry {
	t.Helper()
	parts.once.Do(func() {
		// The file is found beside this source file, wherever the test binary runs: the
		// stores' tests run in their own package directories.
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			parts.err = errNoSource
			return
		}
		path := filepath.Join(filepath.Dir(file), "..", "testdata", "parts.yaml")
		if parts.text, parts.err = os.ReadFile(path); parts.err == nil {
			parts.reg, parts.err = store.ParseRegistry(path, parts.text)
		}
	})
	if parts.err != nil {
		t.Fatalf("parts schema: %v", parts.err)
	}
	return parts.reg
}

// partsWith returns the parts schema with old replaced by new in its file: the same tables
// and columns with, say, a field in a lease group of its own.
func partsWith(t *testing.T, old, new string) *store.Registry {
	t.Helper()
	PartsRegistry(t)
	text := strings.Replace(string(parts.text), old, new, 1)
	if text == string(parts.text) {
		t.Fatalf("parts.yaml has no %q", old)
	}
	r, err := store.ParseRegistry("parts.yaml (changed)", []byte(text))
	if err != nil {
		t.Fatalf("changed parts schema: %v", err)
	}
	return r
}

var errNoSource = store.Errorf(store.EINTERNAL, "cannot locate store/testdata/parts.yaml: no caller information")

// freshParts opens a store with the parts schema for one subtest and closes it when the
// subtest ends.
func freshParts(t *testing.T, open Opener) store.Store {
	t.Helper()
	return freshWith(t, open, store.Options{Registry: PartsRegistry(t)})
}

func mustCreate(t *testing.T, s store.Store, a store.Actor, kind store.Kind, vals store.Values) *store.Record {
	t.Helper()
	r, err := s.CreateRecord(actx(t, a), kind, vals)
	if err != nil {
		t.Fatalf("%s creates %s %v: %v", a.Name, kind, vals, err)
	}
	return r
}

func mustSupplier(t *testing.T, s store.Store, code, name string) *store.Record {
	t.Helper()
	return mustCreate(t, s, actAlice, kindSupplier, store.Values{"code": code, "name": name})
}

func mustArea(t *testing.T, s store.Store, name string, parent *int64) *store.Record {
	t.Helper()
	vals := store.Values{"name": name}
	if parent != nil {
		vals[store.ParentField] = *parent
	}
	return mustCreate(t, s, actAlice, kindArea, vals)
}

// startTogether runs fns in goroutines released at once, and returns their errors in the
// order of fns: the shape of every two-sided race below.
func startTogether(fns ...func() error) []error {
	errs := make([]error, len(fns))
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for i, fn := range fns {
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-start
			errs[i] = fn()
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
	return errs
}

// SkipUnlessSchema skips t when a store cannot hold the parts schema: when open refuses it,
// or a store it opens cannot count the suppliers. It is for a backend whose support of
// schemas of their own is still being written; the backend's test drops the call once the
// store holds them, so that from then on a failure fails.
func SkipUnlessSchema(t *testing.T, open func(store.Options) (store.Store, error)) {
	t.Helper()
	s, err := open(store.Options{Registry: PartsRegistry(t)})
	if err != nil {
		t.Skipf("the store refuses a schema of its own at open (store/testdata/parts.yaml): %v", err)
	}
	_, err = s.CountRecords(t.Context(), kindSupplier)
	if cerr := s.Close(); cerr != nil {
		t.Fatalf("close store: %v", cerr)
	}
	if err != nil {
		t.Skipf("the store cannot hold a schema of its own yet: counting the suppliers of store/testdata/parts.yaml: %v", err)
	}
}
