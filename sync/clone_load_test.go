package sync_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

// cutStream is a source whose stream of records breaks after `after` records, as a
// connection cut in the middle of a clone would.
type cutStream struct {
	*sqlite.DB
	after int
	err   error
}

func (c *cutStream) StreamRecords(ctx context.Context, f store.Filter, names []string, fn func(*store.Record) error) error {
	n := 0
	return c.DB.StreamRecords(ctx, f, names, func(r *store.Record) error {
		if n++; n > c.after {
			return c.err
		}
		return fn(r)
	})
}

// fillProducts creates n products in src in one batch through the store's bulk create (what
// a first import uses): these tests need a source of a few pages of products, not n saves,
// which under the race detector took most of the sync package's time.
func fillProducts(t *testing.T, src *sqlite.DB, n int) {
	t.Helper()
	recs := make([]store.NewRecord, n)
	for i := range recs {
		recs[i] = store.NewRecord{Kind: store.KindProduct, Values: store.Values{"sku": fmt.Sprintf("L-%05d", i),
			"name": fmt.Sprintf("Leuchte %d", i), "categories": []string{"licht"}}}
	}
	err := src.WriteBatch(as("filler"), func(ctx context.Context) error {
		for rest := recs; len(rest) > 0; {
			made, err := src.CreateRecords(ctx, rest)
			if err != nil {
				return err
			}
			rest = rest[len(made):]
			if len(rest) > 0 { // one the bulk create leaves to CreateRecord
				if _, err := src.CreateRecord(ctx, rest[0].Kind, rest[0].Values, rest[0].Options); err != nil {
					return err
				}
				rest = rest[1:]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fill %d products: %v", n, err)
	}
}

// TestClone_LoadAllOrNothing: a clone whose source stream breaks after a page has gone into
// the copy fails with the source's error and leaves the copy without products; an unbroken
// clone reports progress up to the total and holds every product, searchable.
func TestClone_LoadAllOrNothing(t *testing.T) {
	ctx := context.Background()
	src := sources["sqlite"](t).(*sqlite.DB)
	const n = 2600 // more than one page of the stream
	fillProducts(t, src, n)

	cut := errors.New("connection cut")
	wc := mustOpen(t, "cut")
	var seen []int
	_, err := tsync.Clone(ctx, &cutStream{DB: src, after: n - 100, err: cut}, wc, tsync.CloneOptions{
		Kinds: []store.Kind{store.KindProduct}, Progress: func(done, _ int) { seen = append(seen, done) }})
	if !errors.Is(err, cut) {
		t.Fatalf("clone of a source whose stream broke: %v, want the stream's error", err)
	}
	if len(seen) == 0 {
		t.Fatal("no page reached the copy before the cut: the test cuts too early")
	}
	if got, err := wc.CountRecords(ctx, store.KindProduct); err != nil || got != 0 {
		t.Fatalf("after a broken clone the copy holds %d products (%v), want none", got, err)
	}

	whole := mustOpen(t, "whole")
	var last, total int
	if _, err := tsync.Clone(ctx, src, whole, tsync.CloneOptions{Kinds: []store.Kind{store.KindProduct},
		Progress: func(done, tot int) { last, total = done, tot }}); err != nil {
		t.Fatal(err)
	}
	if last != n || total != n {
		t.Fatalf("progress ended at %d of %d, want %d of %d", last, total, n, n)
	}
	if got, err := whole.CountRecords(ctx, store.KindProduct); err != nil || got != n {
		t.Fatalf("clone holds %d products (%v), want %d", got, err, n)
	}
	if recs, err := whole.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: "leuchte 2599"}); err != nil || len(recs) != 1 {
		t.Fatalf("search in the clone: %d records (%v), want 1", len(recs), err)
	}
}

// mustOpen opens a new, empty SQLite store.
func mustOpen(t *testing.T, name string) *sqlite.DB {
	t.Helper()
	db := openNew(t, filepath.Join(t.TempDir(), name+".db"))
	t.Cleanup(func() { db.Close() })
	return db
}

// pagedOnly is a source that cannot stream (no store.RecordStreamer): the clone reads it
// page by page with FindRecords. failAt, when set, makes the page after that id fail.
type pagedOnly struct {
	store.Store
	failAt int64
	err    error
}

func (p *pagedOnly) FindRecords(ctx context.Context, f store.Filter) ([]*store.Record, error) {
	if p.failAt != 0 && f.AfterID >= p.failAt {
		return nil, p.err
	}
	return p.Store.FindRecords(ctx, f)
}

// TestClone_LoadFromPages: a source that only pages (FindRecords) is loaded in one go as a
// streaming one is, every product with its values and progress up to the total; a page
// that fails mid-way fails the clone with the source's error and leaves no product.
func TestClone_LoadFromPages(t *testing.T) {
	ctx := context.Background()
	src := sources["sqlite"](t).(*sqlite.DB)
	const n = 2600 // more than one page
	fillProducts(t, src, n)

	cut := errors.New("page refused")
	broken := mustOpen(t, "broken")
	if _, err := tsync.Clone(ctx, &pagedOnly{Store: src, failAt: 1, err: cut}, broken,
		tsync.CloneOptions{Kinds: []store.Kind{store.KindProduct}}); !errors.Is(err, cut) {
		t.Fatalf("clone of a source whose second page failed: %v, want the source's error", err)
	}
	if got, err := broken.CountRecords(ctx, store.KindProduct); err != nil || got != 0 {
		t.Fatalf("after a failed clone the copy holds %d products (%v), want none", got, err)
	}

	wc := mustOpen(t, "paged")
	var last, total int
	if _, err := tsync.Clone(ctx, &pagedOnly{Store: src}, wc, tsync.CloneOptions{Kinds: []store.Kind{store.KindProduct},
		Progress: func(done, tot int) { last, total = done, tot }}); err != nil {
		t.Fatal(err)
	}
	if last != n || total != n {
		t.Fatalf("progress ended at %d of %d, want %d of %d", last, total, n, n)
	}
	want, err := src.FindRecords(ctx, store.Filter{Kind: store.KindProduct})
	if err != nil {
		t.Fatal(err)
	}
	got, err := wc.FindRecords(ctx, store.Filter{Kind: store.KindProduct})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("clone holds %d products, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Version != want[i].Version || got[i].Fields["sku"] != want[i].Fields["sku"] ||
			got[i].Fields["name"] != want[i].Fields["name"] {
			t.Fatalf("product %d in the clone: %+v, want %+v", want[i].ID, got[i], want[i])
		}
	}
}
