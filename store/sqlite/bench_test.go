package sqlite_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
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

// BenchmarkHotRow_Keyed is the contention benchmark's relative save: stock += 1 with a
// fresh idempotency key, by the system writer (no history version).
func BenchmarkHotRow_Keyed(b *testing.B) {
	db, _, id := benchStore(b)
	ctx := store.WithActor(b.Context(), store.Actor{Name: "bench", Role: store.RoleSystem})
	n := 0
	for b.Loop() {
		n++
		u := store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: fmt.Sprintf("k-%d", n)}
		if _, err := db.UpdateRecord(ctx, store.KindProduct, id, u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHotRow_Contended runs the keyed save from goroutines on four DBs of one file,
// as tandem bench contention does: the process's writers commit in groups (commit.go).
func BenchmarkHotRow_Contended(b *testing.B) {
	_, path, id := benchStore(b)
	var dbs []*sqlite.DB
	for range 4 {
		db, err := sqlite.Open(b.Context(), path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		dbs = append(dbs, db)
	}
	ctx := store.WithActor(b.Context(), store.Actor{Name: "bench", Role: store.RoleSystem})
	var n atomic.Int64
	var i atomic.Int64
	b.SetParallelism(2)
	b.RunParallel(func(pb *testing.PB) {
		db := dbs[i.Add(1)%4]
		for pb.Next() {
			u := store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: fmt.Sprintf("k-%d", n.Add(1))}
			if _, err := db.UpdateRecord(ctx, store.KindProduct, id, u); err != nil {
				b.Fatal(err)
			}
		}
	})
}
