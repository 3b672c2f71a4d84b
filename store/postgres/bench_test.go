package postgres_test

import (
	"fmt"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// BenchmarkHotRow_Keyed is the contention benchmark's relative save on one row: stock += 1
// with a fresh idempotency key, by the system writer (no history version). Its CPU profile
// is the client's cost of a save. Run:
// TANDEM_TEST_POSTGRES=... go test -run '^$' -bench HotRow ./store/postgres/
func BenchmarkHotRow_Keyed(b *testing.B) {
	db, err := postgres.Open(b.Context(), pgtest.DSN(b), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ed := store.WithActor(b.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	p, err := db.CreateRecord(ed, store.KindProduct, store.Values{"sku": "HOT", "name": "hot row"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := store.WithActor(b.Context(), store.Actor{Name: "bench", Role: store.RoleSystem})
	n := 0
	for b.Loop() {
		n++
		u := store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: fmt.Sprintf("k-%d", n)}
		if _, err := db.UpdateRecord(ctx, store.KindProduct, p.ID, u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreate is one editor create in its own transaction: a product (sku check) and a
// document under a parent (tree lock, depth and lease checks). Run:
// TANDEM_TEST_POSTGRES=... go test -run '^$' -bench Create ./store/postgres/
func BenchmarkCreate(b *testing.B) {
	db, err := postgres.Open(b.Context(), pgtest.DSN(b), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := store.WithActor(b.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	n := 0 // skus stay unique however often the sub-benchmark runs
	b.Run("product", func(b *testing.B) {
		for b.Loop() {
			n++
			if _, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("B-%d", n), "name": "bench"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("child_document", func(b *testing.B) {
		root, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "root"})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "child", "parent_id": root.ID}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
