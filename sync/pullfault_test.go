package sync_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// mustFaultProducts makes every write of a product row in the SQLite file at path fail, inside
// the writing transaction, while the table fault_on holds a row: a disk or constraint fault
// in the middle of a pull, after the pull's first statements ran. It returns the call that
// clears the fault.
func mustFaultProducts(t *testing.T, path string) (clear func()) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	for _, q := range []string{
		`CREATE TABLE fault_on (x INTEGER)`,
		`INSERT INTO fault_on VALUES (1)`,
		`CREATE TRIGGER fault_insert BEFORE INSERT ON products WHEN EXISTS (SELECT 1 FROM fault_on)
			BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
		`CREATE TRIGGER fault_update BEFORE UPDATE ON products WHEN EXISTS (SELECT 1 FROM fault_on)
			BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("inject the fault: %v", err)
		}
	}
	return func() {
		t.Helper()
		if _, err := raw.Exec(`DELETE FROM fault_on`); err != nil {
			t.Fatalf("clear the fault: %v", err)
		}
	}
}

// TestSync_PullFailsOnce: a pull whose write into the copy fails once leaves the copy's
// position where it was, so the next sync reads the change again and the copy has the
// record. A position moved ahead of the records it names would skip that change for good.
func TestSync_PullFailsOnce(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "copy")
			before, err := wc.CopyState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mustSet(t, src, "carol", store.KindProduct, f.disjoint, store.Values{"name": "renamed on the source"})
			mustSet(t, src, "carol", store.KindDocument, f.text, store.Values{"title": "retitled on the source"})
			clear := mustFaultProducts(t, wc.Path())

			_, err = tsync.Sync(ctx, src, wc)
			if err == nil || !strings.Contains(err.Error(), "injected fault") {
				t.Fatalf("sync with a failing write: %v, want the injected fault", err)
			}
			after, err := wc.CopyState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.Position != before.Position {
				t.Errorf("a failed pull moved the position from %d to %d", before.Position, after.Position)
			}
			if got := mustGet(t, wc, store.KindProduct, f.disjoint).Fields["name"]; got == "renamed on the source" {
				t.Fatalf("the failed pull wrote the product anyway")
			}

			clear()
			rep := mustSync(t, src, wc)
			if !rep.InSync() {
				t.Errorf("second sync: %+v", rep)
			}
			if got := mustGet(t, wc, store.KindProduct, f.disjoint).Fields["name"]; got != "renamed on the source" {
				t.Errorf("after the second sync the copy's product is named %q, want the source's rename", got)
			}
			if got := mustGet(t, wc, store.KindDocument, f.text).Fields["title"]; got != "retitled on the source" {
				t.Errorf("after the second sync the copy's document is titled %q, want the source's", got)
			}
			assertConverged(t, src, wc, nil)
		})
	}
}
