package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// sampleChanged returns the sample schema with the edits (pairs of old and new text of its
// file form) applied, at version v.
func sampleChanged(t *testing.T, v int64, edits ...string) *store.Registry {
	t.Helper()
	text := string(store.DefaultRegistry().YAML())
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("the sample schema has no %q", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	reg, err := store.ParseRegistry("sample (changed)", []byte(text))
	if err != nil {
		t.Fatalf("changed sample schema: %v", err)
	}
	return reg.WithVersion(v)
}

// testCopyTakeSchema: a copy takes its source's newer schema: its records get the new field's
// default, the pending edit of a renamed field follows it to its new name, an edit that no
// longer fits (an enum value removed) stays in the outbox with its value, and later local
// writes are queued with the new fields. The same version again changes nothing; a person's
// own schema change is refused; a dropped entry leaves the record to be read again.
func testCopyTakeSchema(t *testing.T, open CopyOpener) {
	ctx := context.Background()
	db := newCopy(t, open, 7, store.KindProduct, store.KindDocument)
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := func(id int64, sku string) *store.Record {
		return &store.Record{Kind: store.KindProduct, ID: id, Version: 2, UpdatedBy: "bob", UpdatedAt: now,
			Fields: store.Values{"sku": sku, "name": sku, "availability": "in_stock"}}
	}
	if err := db.ApplySource(ctx, []*store.Record{p(42, "A-1"), p(43, "A-2")}, store.FeedPoint{ID: 9}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(copyEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: 2, Set: store.Values{"description": "mine"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(copyEditor("alice"), store.KindProduct, 43, store.Update{BaseVersion: 2, Set: store.Values{"availability": "discontinued"}}); err != nil {
		t.Fatal(err)
	}
	v := db.Registry().Version() + 3
	next := sampleChanged(t, v,
		"{name: description, label: description,", "{name: notes, rename_from: description, label: description,",
		"values: [in_stock, backorder, discontinued]}", "values: [in_stock, backorder]}\n      - {name: colour, type: string, owner: editor, rule: scalar, default: grey}")
	d, err := db.TakeSchema(ctx, next)
	if err != nil {
		t.Fatalf("take schema: %v", err)
	}
	if d == nil || d.Empty() {
		t.Fatalf("take schema changed nothing")
	}
	if got := db.Registry().Version(); got != v {
		t.Errorf("schema version after take = %d, want the source's %d", got, v)
	}
	r, err := db.FindRecord(ctx, store.KindProduct, 42)
	if err != nil {
		t.Fatal(err)
	}
	if r.Fields["colour"] != "grey" || r.Fields["notes"] != "mine" {
		t.Errorf("product 42 after take = %v, want colour grey, notes mine", r.Fields)
	}
	es := mustOutbox(t, db)
	if len(es) != 2 {
		t.Fatalf("outbox after take: %+v, want the 2 edits", es)
	}
	if es[0].After["notes"] != "mine" || es[0].After["description"] != nil {
		t.Errorf("the renamed field's edit = %v, want notes: mine", es[0].After)
	}
	if es[1].After["availability"] != "discontinued" {
		t.Errorf("the unfit edit lost its value: %v", es[1].After)
	}
	if why := db.Registry().Unfit(&es[1]); len(why) != 1 || !strings.Contains(why[0], `"discontinued" is not one of`) {
		t.Errorf("Unfit of the removed enum value = %q", why)
	}
	if why := db.Registry().Unfit(&es[0]); why != nil {
		t.Errorf("Unfit of the renamed field's edit = %q, want none", why)
	}
	if d, err := db.TakeSchema(ctx, next); err != nil || d != nil {
		t.Errorf("take of the same version again: %v, %v; want nothing", d, err)
	}
	if _, err := db.UpdateRecord(copyEditor("alice"), store.KindProduct, 42, store.Update{BaseVersion: r.Version, Set: store.Values{"colour": "red"}}); err != nil {
		t.Fatal(err)
	}
	es = mustOutbox(t, db)
	if last := es[len(es)-1]; last.After["colour"] != "red" {
		t.Errorf("a local write of the new field queued %v", last.After)
	}
	if ap, ok := db.(store.SchemaApplier); ok {
		if _, err := ap.ApplySchema(copyEditor("alice"), next, store.ApplyOptions{}); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "apply the change to the source") {
			t.Errorf("a schema apply on the copy: %v, want EINVALID naming the source", err)
		}
	}
	if err := db.DropEntry(ctx, es[1].Seq); err != nil {
		t.Fatal(err)
	}
	if es := mustOutbox(t, db); slices.ContainsFunc(es, func(e store.OutboxEntry) bool { return e.ID == 43 }) {
		t.Errorf("the dropped entry is still there: %+v", es)
	}
	stale, err := db.Stale(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(stale[store.KindProduct], 43) {
		t.Errorf("stale after the drop = %v, want product 43 read again", stale)
	}
	if err := db.DropEntry(ctx, es[1].Seq); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("drop of a dropped entry: %v, want ENOTFOUND", err)
	}
}
