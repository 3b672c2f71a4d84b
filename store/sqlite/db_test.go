package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

func mustOpen(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func editor(t *testing.T, name string) context.Context {
	return store.WithActor(t.Context(), store.Actor{Name: name, Role: store.RoleEditor})
}

func mustProduct(t *testing.T, db *sqlite.DB) *store.Record {
	t.Helper()
	r, err := db.CreateRecord(editor(t, "alice"), store.KindProduct, store.Values{"sku": "P-1", "name": "Hammer", "price": int64(2999), "categories": []string{"garden", "tools"}})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return r
}

func TestOpen(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "t.db")
		db := mustOpen(t, path)
		if got, want := db.SchemaVersion(), sqlite.LatestSchemaVersion(); got != want || got < 1 {
			t.Errorf("schema version = %d, want %d", got, want)
		}
		p := mustProduct(t, db)
		db.Close()
		again := mustOpen(t, path)
		if got, err := again.FindRecord(t.Context(), store.KindProduct, p.ID); err != nil || got.Fields["name"] != "Hammer" {
			t.Errorf("after reopening: %+v, %v", got, err)
		}
	})
	t.Run("OddPath", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "my db #1 ?x=y %20.db")
		mustProduct(t, mustOpen(t, path))
		if _, err := os.Stat(path); err != nil {
			t.Errorf("the database is not at %s: %v", path, err)
		}
	})
	t.Run("ErrMemory", func(t *testing.T) {
		_, err := sqlite.Open(t.Context(), ":memory:", store.Options{})
		if got := store.ErrorCode(err); got != store.EINVALID {
			t.Fatalf("error = %v (%s), want %s", err, got, store.EINVALID)
		}
	})
	t.Run("ErrMissingDirectory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nope")
		_, err := sqlite.Open(t.Context(), filepath.Join(dir, "t.db"), store.Options{})
		if got := store.ErrorCode(err); got != store.EUNAVAILABLE {
			t.Fatalf("error = %v (%s), want %s", err, got, store.EUNAVAILABLE)
		}
		if !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("error %q does not say the directory is missing", err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("directory %s was created (%v)", dir, err)
		}
	})
	t.Run("ErrDirectory", func(t *testing.T) {
		_, err := sqlite.Open(t.Context(), t.TempDir(), store.Options{})
		if got := store.ErrorCode(err); got != store.EINVALID {
			t.Fatalf("error = %v (%s), want %s", err, got, store.EINVALID)
		}
	})
	t.Run("ErrNotADatabase", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "notes.txt")
		want := strings.Repeat("these are notes, not a database\n", 64)
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := sqlite.Open(t.Context(), path, store.Options{})
		if got := store.ErrorCode(err); got != store.EINVALID {
			t.Fatalf("error = %v (%s), want %s", err, got, store.EINVALID)
		}
		if !strings.Contains(err.Error(), "not a tandem (SQLite) database") {
			t.Errorf("error %q does not say what is wrong", err)
		}
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Error("the file was changed")
		}
	})
	t.Run("ErrForeignDatabase", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "other.db")
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec("CREATE TABLE products (id INTEGER PRIMARY KEY, label TEXT)"); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		_, err = sqlite.Open(t.Context(), path, store.Options{})
		if got := store.ErrorCode(err); got != store.EINVALID || !strings.Contains(err.Error(), "another program") {
			t.Fatalf("error = %v (%s), want %s saying the file belongs to another program", err, got, store.EINVALID)
		}
	})
	t.Run("ErrNewerSchema", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "t.db")
		mustOpen(t, path).Close()
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec("PRAGMA user_version = 99"); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		_, err = sqlite.Open(t.Context(), path, store.Options{})
		if got := store.ErrorCode(err); got != store.EINVALID {
			t.Fatalf("error = %v (%s), want %s", err, got, store.EINVALID)
		}
		want := fmt.Sprintf("database schema version 99 is newer than this tandem (%d); upgrade tandem", sqlite.LatestSchemaVersion())
		if err.Error() != want {
			t.Errorf("error = %q, want %q", err, want)
		}
	})
}

// TestDB_Columns checks the schema other programs rely on: real columns, cents, JSON sets,
// sortable UTC times, and lease tokens stored only as hashes.
func TestDB_Columns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db := mustOpen(t, path)
	p := mustProduct(t, db)
	l, err := db.AcquireLease(editor(t, "alice"), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var (
		price                 int64
		cats, at, by, journal string
	)
	if err := raw.QueryRow("SELECT price, categories, updated_at, updated_by FROM products WHERE id = ?", p.ID).Scan(&price, &cats, &at, &by); err != nil {
		t.Fatal(err)
	}
	if price != 2999 || cats != `["garden","tools"]` || by != "alice" {
		t.Errorf("row = price %d categories %s by %s, want 2999 [\"garden\",\"tools\"] alice", price, cats, by)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(at) {
		t.Errorf("updated_at = %q, want UTC with milliseconds", at)
	}
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM leases WHERE token_hash = ? OR holder = ?", l.Token, l.Token).Scan(&n); err != nil || n != 0 {
		t.Errorf("the token itself is stored (%d rows, %v)", n, err)
	}
	if err := raw.QueryRow("PRAGMA journal_mode").Scan(&journal); err != nil || journal != "wal" {
		t.Errorf("journal mode = %q, %v; want wal", journal, err)
	}
}

// TestDB_TwoHandles runs read-modify-write transactions from two handles (two pools, as two
// processes would have) on one file: BEGIN IMMEDIATE and the busy timeout make every one of
// them wait its turn instead of failing or losing an update.
func TestDB_TwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	dbs := []*sqlite.DB{mustOpen(t, path), mustOpen(t, path)}
	d, err := dbs[0].CreateRecord(editor(t, "alice"), store.KindDocument, store.Values{"title": "d"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := store.WithActor(t.Context(), store.Actor{Name: "worker", Role: store.RoleSystem})
	const goroutines, each = 6, 25
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		db := dbs[g%2]
		wg.Go(func() {
			for range each {
				_, err := db.LockedUpdate(ctx, store.KindDocument, d.ID, func(r *store.Record) (store.Update, error) {
					return store.Update{Set: store.Values{"word_count": r.Fields["word_count"].(int64) + 1}}, nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := dbs[1].FindRecord(t.Context(), store.KindDocument, d.ID)
	if err != nil || got.Fields["word_count"] != int64(goroutines*each) {
		t.Errorf("word_count = %v, %v; want %d", got.Fields["word_count"], err, goroutines*each)
	}
}

// TestDB_SubscribeOtherHandle shows the data_version path: a commit made through another
// handle (another process, in real life) wakes the subscriber.
func TestDB_SubscribeOtherHandle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	watcher, writer := mustOpen(t, path), mustOpen(t, path)
	p := mustProduct(t, writer)
	from, err := watcher.LastChangeID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ch, err := watcher.Subscribe(t.Context(), from)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.UpdateRecord(editor(t, "bob"), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 3}}); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-ch:
		if c.Event != store.EventSaved || c.Actor != "bob" || c.Deltas["stock"] != 3 {
			t.Errorf("change = %+v, want bob's stock +3", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the subscriber never saw the other handle's commit")
	}
}

// TestDB_CloseStopsSubscribers checks that Close ends every subscriber and closes its channel.
func TestDB_CloseStopsSubscribers(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var chans []<-chan store.Change
	for range 3 {
		ch, err := db.Subscribe(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for i, ch := range chans {
		select {
		case _, ok := <-ch:
			if ok {
				t.Errorf("subscriber %d got a change from an empty store", i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("subscriber %d still open after Close", i)
		}
	}
}

// TestOpenWith_PageSize: a store OpenWith makes has the page size asked for, made as a new
// store or in place as a scratch file; an existing store keeps its own; a size SQLite
// cannot have is refused before anything is made.
func TestOpenWith_PageSize(t *testing.T) {
	ctx := context.Background()
	pageSize := func(path string) int {
		t.Helper()
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRow("PRAGMA page_size").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	dir := t.TempDir()
	for _, cfg := range []sqlite.OpenConfig{{Create: true, PageSize: 16384}, {Create: true, Scratch: true, PageSize: 16384}} {
		path := filepath.Join(dir, fmt.Sprintf("scratch-%v.db", cfg.Scratch))
		db, err := sqlite.OpenWith(ctx, path, store.Options{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateRecord(store.WithActor(ctx, store.Actor{Name: "t", Role: store.RoleEditor}), store.KindProduct,
			store.Values{"sku": "P-1", "name": "one"}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if n := pageSize(path); n != 16384 {
			t.Errorf("store made with %+v: page size %d, want 16384", cfg, n)
		}
		again, err := sqlite.OpenWith(ctx, path, store.Options{}, sqlite.OpenConfig{PageSize: 4096})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := again.CountRecords(ctx, store.KindProduct); err != nil || n != 1 {
			t.Errorf("reopened with another page size: %d products (%v), want 1", n, err)
		}
		again.Close()
		if n := pageSize(path); n != 16384 {
			t.Errorf("existing store reopened with page size 4096: page size %d, want its own 16384", n)
		}
	}
	bad := filepath.Join(dir, "bad.db")
	if _, err := sqlite.OpenWith(ctx, bad, store.Options{}, sqlite.OpenConfig{Create: true, PageSize: 1000}); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("page size 1000: %v, want EINVALID", err)
	}
	if _, err := os.Stat(bad); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused page size left a file behind: %v", err)
	}
}
