package memory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// TestCustomSchema: a store made with a schema of its own (suppliers, parts, areas; no
// product or document) holds its kinds and keeps their rules: a unique code, a ref checked
// on save and on delete, a default, a tree move.
func TestCustomSchema(t *testing.T) {
	reg, err := store.LoadRegistry("../testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db := memory.New(store.Options{Registry: reg})
	ctx := store.WithActor(context.Background(), store.Actor{Name: "alice", Role: store.RoleEditor})
	if got := reg.Kinds(); len(got) != 3 || got[0] != "supplier" || reg.Has(store.KindProduct) {
		t.Fatalf("kinds = %v, want supplier, part, area and no product", got)
	}
	acme, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "ACME", "name": "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRecord(ctx, "supplier", store.Values{"code": " acme", "name": "Other"}); err == nil ||
		!strings.Contains(err.Error(), "code") || !strings.Contains(err.Error(), "supplier 1") {
		t.Errorf("duplicate code = %v, want a refusal naming code and supplier 1", err)
	}
	if _, err := db.CreateRecord(ctx, "part", store.Values{"label": "Bolt", "supplier": int64(99)}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "supplier 99 does not exist") {
		t.Errorf("part with a missing supplier = %v, want EINVALID naming supplier 99", err)
	}
	bolt, err := db.CreateRecord(ctx, "part", store.Values{"label": "Bolt", "supplier": acme.ID})
	if err != nil {
		t.Fatal(err)
	}
	if bolt.Fields["status"] != "draft" {
		t.Errorf("status = %v, want the default draft", bolt.Fields["status"])
	}
	if _, err := db.UpdateRecord(ctx, "part", bolt.ID, store.Update{BaseVersion: 1, Set: store.Values{"supplier": int64(7)}}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("save of a missing supplier = %v, want EINVALID", err)
	}
	_, err = db.DeleteRecord(ctx, "supplier", acme.ID, store.Delete{ExpectVersion: 1})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "part 1 (supplier)") {
		t.Errorf("delete of a referenced supplier = %v, want EINVALID naming part 1", err)
	}
	top, _ := db.CreateRecord(ctx, "area", store.Values{"name": "Top"})
	sub, _ := db.CreateRecord(ctx, "area", store.Values{"name": "Sub", "parent_id": top.ID})
	if _, err := db.MoveRecord(ctx, "area", top.ID, store.Move{Parent: &sub.ID}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "cycle") {
		t.Errorf("move into its own subtree = %v, want a cycle refusal", err)
	}
	if _, err := db.MoveRecord(ctx, "part", bolt.ID, store.Move{Parent: &sub.ID}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("move of a part = %v, want EINVALID: parts are not a tree", err)
	}
	// A part whose supplier was deleted after it does not come back referring to nothing.
	gone, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "GONE", "name": "Gone"})
	if err != nil {
		t.Fatal(err)
	}
	nut, err := db.CreateRecord(ctx, "part", store.Values{"label": "Nut", "supplier": gone.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*store.Record{nut, gone} {
		if _, err := db.DeleteRecord(ctx, r.Kind, r.ID, store.Delete{ExpectVersion: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.RestoreRecord(ctx, "part", nut.ID, store.Restore{}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "does not exist") {
		t.Errorf("restore of a part whose supplier is deleted = %v, want EINVALID naming the supplier", err)
	}
	if again, err := store.ParseRegistry("shown", reg.YAML()); err != nil || !again.Same(reg) {
		t.Errorf("the schema's YAML does not read back as itself: %v\n%s", err, reg.YAML())
	}
}
