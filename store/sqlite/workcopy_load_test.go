package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// loadSource returns n products as a source would hand them over, with values that give
// every index and search fold something to hold.
func loadSource(n int) []*store.Record {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	words := []string{"Lamp", "Straße", "chair", "ÉCRAN", "desk"}
	out := make([]*store.Record, n)
	for i := range out {
		out[i] = &store.Record{Kind: store.KindProduct, ID: int64(3*i + 5), Version: int64(i%7 + 1), UpdatedBy: fmt.Sprintf("user%d", i%3),
			UpdatedAt: at.Add(time.Duration(i) * time.Second), Fields: store.Values{
				"sku": fmt.Sprintf("SKU-%05d", i), "name": fmt.Sprintf("%s %d", words[i%len(words)], i),
				"description": strings.Repeat(words[(i+1)%len(words)]+" ", i%4+1), "price": int64(100 + i), "stock": int64(i % 50),
				"categories": []string{words[i%2], words[2+i%3]}}}
	}
	return out
}

// newCopy opens a fresh working copy of kinds, at feed position pos of a source named "src",
// as the file name in a temporary directory; it is closed when the test ends.
func newCopy(t *testing.T, name string, pos int64, kinds ...store.Kind) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	db, err := sqlite.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.StartCopy(context.Background(), store.CopyState{SourceID: "src", Source: "somewhere", Kinds: kinds, Position: pos}); err != nil {
		t.Fatal(err)
	}
	return db, path
}

// batches hands recs over in batches of size, as sync's clone does.
func batches(recs []*store.Record, size int) func() ([]*store.Record, error) {
	return func() ([]*store.Record, error) {
		n := min(size, len(recs))
		b := recs[:n]
		recs = recs[n:]
		return b, nil
	}
}

// schemaOf returns the DDL of everything in the file's schema, by name.
func schemaOf(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, coalesce(sql, '') FROM sqlite_master`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		out[name] = ddl
	}
	return out
}

// TestDB_LoadCopyAsApplySource: products loaded in bulk are in the copy exactly as
// ApplySource writes them (values, versions, authors, bases), search finds the same ones,
// the schema is the same afterwards (indexes and triggers back), and a local save after
// the load goes to the outbox.
func TestDB_LoadCopyAsApplySource(t *testing.T) {
	ctx := context.Background()
	recs := loadSource(1000) // several INSERTs, the last one short
	loaded, loadedPath := newCopy(t, "loaded.db", 3, store.KindProduct)
	applied, appliedPath := newCopy(t, "applied.db", 3, store.KindProduct)
	before := schemaOf(t, loadedPath)
	if err := loaded.LoadCopy(ctx, store.KindProduct, batches(recs, 300)); err != nil {
		t.Fatal(err)
	}
	if err := applied.ApplySource(ctx, recs, 0); err != nil {
		t.Fatal(err)
	}
	if after := schemaOf(t, loadedPath); !reflect.DeepEqual(after, before) {
		t.Fatalf("the load changed the schema:\nbefore %v\nafter  %v", before, after)
	}
	if a, b := schemaOf(t, loadedPath), schemaOf(t, appliedPath); !reflect.DeepEqual(a, b) {
		t.Fatalf("loaded and applied copies differ in schema")
	}
	for _, f := range []store.Filter{{Kind: store.KindProduct}, {Kind: store.KindProduct, Search: "strasse"},
		{Kind: store.KindProduct, Search: "écran 1"}, {Kind: store.KindProduct, Search: "SKU-0099"},
		{Kind: store.KindProduct, Sort: "price", Limit: 50}, {Kind: store.KindProduct, Sort: "name", Limit: 50}} {
		want, err := applied.FindRecords(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := loaded.FindRecords(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("%+v finds nothing in the applied copy: the test data is wrong", f)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v: the loaded copy has %d records, the applied one %d (or they differ)", f, len(got), len(want))
		}
	}
	if _, err := loaded.CreateRecord(wcEditor("alice"), store.KindProduct, store.Values{"sku": "sku-00042", "name": "dup"}); store.ErrorCode(err) != store.EINVALID && store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("a second product with the sku key of a loaded one: %v, want it refused", err)
	}
	r := recs[10]
	if _, err := loaded.UpdateRecord(wcEditor("alice"), store.KindProduct, r.ID, store.Update{BaseVersion: r.Version, Set: store.Values{"name": "renamed"}}); err != nil {
		t.Fatal(err)
	}
	es := mustOutbox(t, loaded)
	if len(es) != 1 || es[0].ID != r.ID || es[0].BaseVersion != r.Version {
		t.Fatalf("outbox after a local save on a loaded copy: %+v, want one save of %d on base %d", es, r.ID, r.Version)
	}
	if got, err := loaded.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: "renamed"}); err != nil || len(got) != 1 {
		t.Fatalf("search after a local save on a loaded copy: %d records, %v; want 1", len(got), err)
	}
}

// TestDB_LoadCopyAllOrNothing: a load that fails (the reading of the source, or records
// that break the store's sku rule) leaves the copy without products and with its schema,
// and a load after it works.
func TestDB_LoadCopyAllOrNothing(t *testing.T) {
	ctx := context.Background()
	db, path := newCopy(t, "wc.db", 3, store.KindProduct)
	before := schemaOf(t, path)
	cut := errors.New("connection cut")
	recs := loadSource(700)
	calls := 0
	err := db.LoadCopy(ctx, store.KindProduct, func() ([]*store.Record, error) {
		if calls++; calls == 3 {
			return nil, cut
		}
		return recs[(calls-1)*300 : calls*300], nil
	})
	if !errors.Is(err, cut) {
		t.Fatalf("load whose reading failed: %v, want the reading's error", err)
	}
	dup := loadSource(10)
	dup[9].Fields = dup[9].Fields.Clone()
	dup[9].Fields["sku"] = "sku-00003" // the same sku key as dup[3]'s SKU-00003
	if err := db.LoadCopy(ctx, store.KindProduct, batches(dup, 4)); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("load of two products with one sku key: %v, want EINVALID", err)
	}
	for _, what := range []string{"failed", "refused"} {
		if n, err := db.CountRecords(ctx, store.KindProduct); err != nil || n != 0 {
			t.Fatalf("after the %s load the copy holds %d products (%v), want none", what, n, err)
		}
	}
	if after := schemaOf(t, path); !reflect.DeepEqual(after, before) {
		t.Fatalf("a failed load changed the schema")
	}
	if err := db.LoadCopy(ctx, store.KindProduct, batches(recs, 300)); err != nil {
		t.Fatal(err)
	}
	if n, err := db.CountRecords(ctx, store.KindProduct); err != nil || n != len(recs) {
		t.Fatalf("load after a failed one: %d products (%v), want %d", n, err, len(recs))
	}
}

// TestDB_LoadCopyRefuses: a load goes only into a fresh copy, and only of products.
func TestDB_LoadCopyRefuses(t *testing.T) {
	ctx := context.Background()
	db, _ := newCopy(t, "wc.db", 3, store.KindProduct)
	if err := db.LoadCopy(ctx, store.KindDocument, batches(nil, 1)); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("load of documents: %v, want EINVALID", err)
	}
	recs := loadSource(3)
	if err := db.ApplySource(ctx, recs[:1], 0); err != nil {
		t.Fatal(err)
	}
	if err := db.LoadCopy(ctx, store.KindProduct, batches(recs[1:], 5)); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("load into a copy that holds products: %v, want EINVALID", err)
	}
	plain, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "plain.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.LoadCopy(ctx, store.KindProduct, batches(recs, 5)); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("load into a store that is not a working copy: %v, want ENOTFOUND", err)
	}
}
