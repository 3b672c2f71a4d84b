//go:build unix

package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tandem-editor/tandem/internal/testfs"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// holdWriteLock takes SQLite's write lock on path from a connection of its own (BEGIN
// IMMEDIATE, as a writer in another process would) until the test ends.
func holdWriteLock(t *testing.T, path string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		raw.Close()
	})
}

// fileSum is the SHA-256 of a file, to show that nothing wrote it.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// seeded makes a closed store at path with one product and returns the product's id.
func seeded(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return mustProduct(t, db).ID
}

// TestOpen_ReadsDoNotWaitForWriters holds the write lock from another connection: opening the
// store (schema up to date) and reading from it do not wait for it.
func TestOpen_ReadsDoNotWaitForWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	id := seeded(t, path)
	holdWriteLock(t, path)
	db, err := sqlite.OpenWith(t.Context(), path, store.Options{}, sqlite.OpenConfig{})
	if err != nil {
		t.Fatalf("open while another connection holds the write lock: %v", err)
	}
	defer db.Close()
	if r, err := db.FindRecord(t.Context(), store.KindProduct, id); err != nil || r.Fields["name"] != "Hammer" {
		t.Fatalf("read while another connection holds the write lock: %+v, %v", r, err)
	}
}

// TestOpen_ReadOnly opens stores that may not be written: on request, an unwritable file and
// an unwritable directory (no -wal or -shm can be made). Each reads, refuses every write with
// EINVALID naming the reason, and leaves the file as it was.
func TestOpen_ReadOnly(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(t *testing.T, path string)
		cfg     sqlite.OpenConfig
		why     string
	}{
		{"Requested", func(*testing.T, string) {}, sqlite.OpenConfig{ReadOnly: true}, "opened read-only"},
		{"File", func(t *testing.T, path string) { testfs.MakeReadOnly(t, path) }, sqlite.OpenConfig{}, "the file is not writable"},
		{"FileWithCreate", func(t *testing.T, path string) { testfs.MakeReadOnly(t, path) }, sqlite.OpenConfig{Create: true}, "the file is not writable"},
		{"Directory", func(t *testing.T, path string) { testfs.MakeReadOnly(t, filepath.Dir(path)) }, sqlite.OpenConfig{}, "its directory is not writable"},
		// Someone else's store in someone else's directory: SQLite answers
		// SQLITE_READONLY_DIRECTORY, not SQLITE_CANTOPEN, when it cannot make the -shm.
		{"FileAndDirectory", func(t *testing.T, path string) {
			testfs.MakeReadOnly(t, path)
			testfs.MakeReadOnly(t, filepath.Dir(path))
		}, sqlite.OpenConfig{}, "its directory is not writable"},
		{"DirectoryRequested", func(t *testing.T, path string) { testfs.MakeReadOnly(t, filepath.Dir(path)) }, sqlite.OpenConfig{ReadOnly: true}, "its directory is not writable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			id := seeded(t, path)
			tc.prepare(t, path)
			before := fileSum(t, path)
			db, err := sqlite.OpenWith(t.Context(), path, store.Options{}, tc.cfg)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer db.Close()
			if db.ReadOnly() != tc.why {
				t.Errorf("ReadOnly() = %q, want %q", db.ReadOnly(), tc.why)
			}
			if db.StoreID() == "" {
				t.Error("no store id")
			}
			r, err := db.FindRecord(t.Context(), store.KindProduct, id)
			if err != nil || r.Fields["name"] != "Hammer" {
				t.Fatalf("read: %+v, %v", r, err)
			}
			if rs, err := db.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct}); err != nil || len(rs) != 1 {
				t.Fatalf("list: %d records, %v", len(rs), err)
			}
			_, err = db.UpdateRecord(editor(t, "bob"), store.KindProduct, id, store.Update{Add: map[string]int64{"stock": 1}})
			if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "is read-only ("+tc.why+")") {
				t.Errorf("write: %v (%s), want %s saying it is read-only (%s)", err, store.ErrorCode(err), store.EINVALID, tc.why)
			}
			if _, err := db.CreateRecord(editor(t, "bob"), store.KindProduct, store.Values{"sku": "RO-2", "name": "x"}); store.ErrorCode(err) != store.EINVALID {
				t.Errorf("create: %v, want %s", err, store.EINVALID)
			}
			db.Close()
			if fileSum(t, path) != before {
				t.Error("the read-only store's file changed")
			}
		})
	}
}

// TestOpen_OldSchema has a store made before schema version 2 (no store id): opened with
// write access it is migrated and gets an id, which it keeps; opened read-only it is refused
// with the way out, and not changed.
func TestOpen_OldSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	// A store as tandem 1 made it: the first migration only, and one record.
	const id = 1
	mustVersion1(t, path,
		`INSERT INTO products (id, sku, name, updated_at, updated_by) VALUES (1, 'H-1', 'Hammer', '2026-01-01T00:00:00.000Z', 'old')`)

	before := fileSum(t, path)
	_, err := sqlite.OpenWith(t.Context(), path, store.Options{}, sqlite.OpenConfig{ReadOnly: true})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "open it once with write access") {
		t.Fatalf("read-only open of an old store: %v, want %s telling how to upgrade it", err, store.EINVALID)
	}
	if fileSum(t, path) != before {
		t.Error("the refused read-only open changed the file")
	}

	db, err := sqlite.OpenWith(t.Context(), path, store.Options{}, sqlite.OpenConfig{})
	if err != nil {
		t.Fatalf("open with write access: %v", err)
	}
	sid := db.StoreID()
	if db.SchemaVersion() != sqlite.LatestSchemaVersion() || len(sid) != 32 {
		t.Errorf("after migration: schema %d, store id %q", db.SchemaVersion(), sid)
	}
	if r, err := db.FindRecord(t.Context(), store.KindProduct, id); err != nil || r.Fields["name"] != "Hammer" {
		t.Errorf("the old store's record after migration: %+v, %v", r, err)
	}
	db.Close()
	again, err := sqlite.OpenWith(t.Context(), path, store.Options{}, sqlite.OpenConfig{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.StoreID() != sid {
		t.Errorf("store id %q after reopening, was %q", again.StoreID(), sid)
	}
}

// TestOpen_StoreIDMoves shows that the store id lives in the file: a renamed file keeps it,
// a new store next to it gets another one.
func TestOpen_StoreIDMoves(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	seeded(t, a)
	db := mustOpen(t, a)
	sid := db.StoreID()
	db.Close()
	b := filepath.Join(dir, "moved", "b.db")
	if err := os.Mkdir(filepath.Dir(b), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	if got := mustOpen(t, b).StoreID(); got != sid {
		t.Errorf("moved store's id = %q, want %q", got, sid)
	}
	if other := mustOpen(t, a).StoreID(); other == sid {
		t.Errorf("a new store at the old path has the moved store's id %q", sid)
	}
}

// TestOpen_NoCreate checks that without Create nothing is made: a missing file and an empty
// database file are ENOTFOUND, and the directory is left as it was.
func TestOpen_NoCreate(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	_, err := sqlite.OpenWith(t.Context(), missing, store.Options{}, sqlite.OpenConfig{})
	if store.ErrorCode(err) != store.ENOTFOUND || err.Error() != "no store at "+missing {
		t.Errorf("missing file: %v (%s), want %s \"no store at %s\"", err, store.ErrorCode(err), store.ENOTFOUND, missing)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = sqlite.OpenWith(t.Context(), empty, store.Options{}, sqlite.OpenConfig{})
	if store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("empty file: %v (%s), want %s", err, store.ErrorCode(err), store.ENOTFOUND)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("the empty file was written: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only empty.db", names)
	}
}

// TestOpen_CreateMode creates a store with the umask at 0: the file and the -wal and -shm
// SQLite makes beside it are 0600 all the same.
func TestOpen_CreateMode(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "t.db")
	db := mustOpen(t, path)
	mustProduct(t, db) // the -wal and -shm exist while the store is open
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("stat %s: %v", p, err)
			continue
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s has mode %o, want 600", filepath.Base(p), got)
		}
	}
}

// TestOpen_CreateConcurrent has several goroutines, each with its own pools, create and fill
// one new path at once: exactly one creates it, the others open that store, and the store
// holds one fill, not several mixed together. Nothing is left beside it.
func TestOpen_CreateConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.db")
	const openers, products = 6, 10
	fill := func(ctx context.Context, st store.Store) error {
		for i := range products {
			if _, err := st.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("C-%d", i), "name": "n"}); err != nil {
				return err
			}
		}
		return nil
	}
	ctx := editor(t, "alice")
	dbs := make([]*sqlite.DB, openers)
	errs := make([]error, openers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range openers {
		wg.Go(func() {
			<-start
			dbs[i], errs[i] = sqlite.OpenWith(ctx, path, store.Options{}, sqlite.OpenConfig{Create: true, Fill: fill})
		})
	}
	close(start)
	wg.Wait()
	created, ids := 0, map[string]bool{}
	for i, db := range dbs {
		if errs[i] != nil {
			t.Errorf("opener %d: %v", i, errs[i])
			continue
		}
		defer db.Close()
		if db.Created() {
			created++
		}
		ids[db.StoreID()] = true
		n, err := db.CountRecords(t.Context(), store.KindProduct)
		if err != nil || n != products {
			t.Errorf("opener %d sees %d products (%v), want %d", i, n, err, products)
		}
	}
	if created != 1 || len(ids) != 1 {
		t.Errorf("%d openers created the store, %d store ids; want 1 and 1", created, len(ids))
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != "t.db" && n != "t.db-wal" && n != "t.db-shm" {
			t.Errorf("left beside the store: %s", n)
		}
	}
}

// TestOpen_FillFails checks that a store whose filling fails never appears at its path.
func TestOpen_FillFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.db")
	boom := errors.New("boom")
	_, err := sqlite.OpenWith(editor(t, "alice"), path, store.Options{}, sqlite.OpenConfig{Create: true,
		Fill: func(ctx context.Context, st store.Store) error {
			if _, err := st.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "F-1", "name": "n"}); err != nil {
				return err
			}
			return boom
		}})
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want the fill's", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed creation left %d files, the first %s", len(entries), entries[0].Name())
	}
}

// TestOpen_UnreadableWAL copies a store whose -wal holds a commit not yet in the file into a
// directory that may not be written: with no -shm SQLite cannot read the -wal, and reading the
// file alone would lose that commit, so the open is refused with EUNAVAILABLE naming what is
// missing: the directory that cannot hold a -shm, or a -shm this user may not read.
func TestOpen_UnreadableWAL(t *testing.T) {
	for _, tc := range []struct {
		name string
		shm  bool // copy the -shm too, unreadable
		want string
	}{
		{"NoSHM", false, "the directory is not writable, so SQLite cannot make "},
		{"UnreadableSHM", true, "SQLite may not open "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.shm && os.Geteuid() == 0 {
				t.Skip("root reads any -shm")
			}
			src := filepath.Join(t.TempDir(), "t.db")
			id := seeded(t, src)
			raw, err := sql.Open("sqlite", src+"?_pragma=wal_autocheckpoint(0)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.ExecContext(t.Context(), "UPDATE products SET name = 'Saw' WHERE id = ?", id); err != nil {
				t.Fatal(err)
			}
			// Copied while raw holds the store open: the -wal still holds the update.
			dst := filepath.Join(t.TempDir(), "t.db")
			suffixes := []string{"", "-wal"}
			if tc.shm {
				suffixes = append(suffixes, "-shm")
			}
			for _, suffix := range suffixes {
				b, err := os.ReadFile(src + suffix)
				if err != nil {
					t.Fatal(err)
				}
				if suffix == "-wal" && len(b) == 0 {
					t.Fatal("the -wal is empty: the test needs a commit in it")
				}
				if err := os.WriteFile(dst+suffix, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.shm {
				if err := os.Chmod(dst+"-shm", 0); err != nil {
					t.Fatal(err)
				}
			}
			testfs.MakeReadOnly(t, filepath.Dir(dst))
			before := fileSum(t, dst)
			db, err := sqlite.OpenWith(t.Context(), dst, store.Options{}, sqlite.OpenConfig{})
			if err == nil {
				db.Close()
				t.Fatal("opened a store whose -wal it cannot read")
			}
			if store.ErrorCode(err) != store.EUNAVAILABLE || !strings.Contains(err.Error(), "-wal holds changes not yet in the file") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("open: %v (%s), want %s saying %q", err, store.ErrorCode(err), store.EUNAVAILABLE, tc.want)
			}
			if fileSum(t, dst) != before {
				t.Error("the refused open changed the file")
			}
		})
	}
}
