package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// The hot-row benchmarks compare a store save (lease check, version, history or operation
// log, change log, all in one BEGIN IMMEDIATE transaction) with the bare UPDATE on the same
// database file. Run: go test -run '^$' -bench HotRow ./store/sqlite/

func benchStore(b *testing.B) (*sqlite.DB, string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.db")
	db, err := sqlite.Open(b.Context(), path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ctx := store.WithActor(b.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	p, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "HOT", "name": "hot row"})
	if err != nil {
		b.Fatal(err)
	}
	return db, path, p.ID
}

func BenchmarkHotRow_Store(b *testing.B) {
	for _, role := range []store.Role{store.RoleEditor, store.RoleSystem} {
		b.Run(string(role), func(b *testing.B) {
			db, _, id := benchStore(b)
			ctx := store.WithActor(b.Context(), store.Actor{Name: "bench", Role: role})
			u := store.Update{Add: map[string]int64{"stock": 1}}
			for b.Loop() {
				if _, err := db.UpdateRecord(ctx, store.KindProduct, id, u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHotRow_RawSQL(b *testing.B) {
	_, path, id := benchStore(b)
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	for b.Loop() {
		if _, err := raw.Exec("UPDATE products SET stock = stock + 1, version = version + 1 WHERE id = ?", id); err != nil {
			b.Fatal(err)
		}
	}
}
