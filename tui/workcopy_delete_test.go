package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestResolveCopy_Delete: the merge view of a delete made in a working copy that met a
// source change: saving it with the source's values keeps the source's record, which the next
// sync brings back; other values are refused with the command that deletes it there too.
func TestResolveCopy_Delete(t *testing.T) {
	ctx := store.WithActor(context.Background(), store.Actor{Name: "erin", Role: store.RoleEditor})
	dir := t.TempDir()
	src, err := sqlite.Open(ctx, filepath.Join(dir, "src.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	wc, err := sqlite.Open(ctx, filepath.Join(dir, "wc.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	rec, err := src.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "A-1", "name": "lamp", "price": int64(100)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tsync.Clone(ctx, src, wc, tsync.CloneOptions{Source: "src"}); err != nil {
		t.Fatal(err)
	}
	if _, err := wc.DeleteRecord(ctx, store.KindProduct, rec.ID, store.Delete{ExpectVersion: rec.Version}); err != nil {
		t.Fatal(err)
	}
	// The header counts the pending delete.
	st, err := wc.CopyState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hw := &workCopy{c: &common{reg: wc.Registry(), width: 200, opts: Options{Now: time.Now}}, state: st}
	if h := hw.header(); !strings.Contains(h, "1 pending (1 delete)") {
		t.Errorf("header %q does not count the pending delete", h)
	}
	if _, err := src.UpdateRecord(ctx, store.KindProduct, rec.ID, store.Update{BaseVersion: rec.Version, Set: store.Values{"name": "lamp, new"}}); err != nil {
		t.Fatal(err)
	}
	rep, err := tsync.Sync(ctx, src, wc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].Op != store.CopyDelete {
		t.Fatalf("conflicts %+v, want the delete's", rep.Conflicts)
	}
	cf := rep.Conflicts[0]
	w := &workCopy{c: &common{reg: wc.Registry()}}
	m := w.mergeScreen(cf).m
	if m == nil {
		t.Fatal("no merge view for a delete's conflict")
	}

	mine := store.Values{"name": cf.Mine["name"]}
	if err := resolveCopy(ctx, wc, cf, mine); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "tandem resolve product") {
		t.Fatalf("merge view saved with the deleted values: %v, want a refusal naming tandem resolve", err)
	}
	vals := store.Values{}
	for _, f := range tsync.Merge(wc.Registry(), &cf).Fields {
		if v, ok := f.Value(); ok {
			vals[f.Field.Name] = v
		}
	}
	if err := resolveCopy(ctx, wc, cf, vals); err != nil {
		t.Fatalf("merge view saved with the merge's values: %v", err)
	}
	if _, err := tsync.Sync(ctx, src, wc); err != nil {
		t.Fatal(err)
	}
	got, err := wc.FindRecord(ctx, store.KindProduct, rec.ID)
	if err != nil || got.Fields["name"] != "lamp, new" {
		t.Fatalf("after theirs and a sync the copy has %v, %v; want the source's record", got, err)
	}
}
