package memory_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// TestApplySchema: the in-memory store changes its schema as the PostgreSQL store does: a
// destructive change is refused with its count, then applied with the lost values
// exported; a rename keeps values and history under the new name; a new field has its
// default; the feed carries the schema event.
func TestApplySchema(t *testing.T) {
	b, err := os.ReadFile("../testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := store.ParseRegistry("parts", b)
	if err != nil {
		t.Fatal(err)
	}
	db := memory.New(store.Options{Registry: cur})
	ctx := store.WithActor(context.Background(), store.Actor{Name: "alice", Role: store.RoleEditor})
	p, err := db.CreateRecord(ctx, "part", store.Values{"label": "Bolt", "status": "retired"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(ctx, "part", p.ID, store.Update{BaseVersion: 1, Set: store.Values{"label": "Bolt M6"}}); err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "{name: label,    type: string,", "{name: name, rename_from: label, type: string,", 1)
	s = strings.Replace(s, "    title: label\n", "    title: name\n", 1)
	s = strings.Replace(s, "[draft, active, retired]", "[draft, active]", 1)
	s = strings.Replace(s, "      - {name: notes,", "      - {name: country, type: string, owner: editor, rule: scalar, default: DE}\n      - {name: notes,", 1)
	next, err := store.ParseRegistry("parts edited", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := db.LastChangeID(ctx)
	_, err = db.ApplySchema(ctx, next, store.ApplyOptions{})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "remove enum value retired from part.status") ||
		!strings.Contains(err.Error(), "1 record uses it") {
		t.Fatalf("apply = %v, want the removed value refused with its count", err)
	}
	var out bytes.Buffer
	res, err := db.ApplySchema(ctx, next, store.ApplyOptions{AllowDestructive: true, ExportTo: &out})
	if err != nil || !res.Applied || res.Exported != 1 {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	if got := strings.TrimSpace(out.String()); got != `{"kind":"part","id":1,"field":"status","value":"retired"}` {
		t.Errorf("export = %s", got)
	}
	r, err := db.FindRecord(ctx, "part", p.ID)
	if err != nil || r.Fields["name"] != "Bolt M6" || r.Fields["status"] != "draft" || r.Version != 3 {
		t.Fatalf("part = %+v, %v", r, err)
	}
	if _, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "A", "name": "Acme"}); err != nil {
		t.Fatal(err)
	}
	sup, err := db.FindRecord(ctx, "supplier", 1)
	if err != nil || sup.Fields["country"] != "DE" {
		t.Errorf("supplier = %v, %v; want country DE", sup, err)
	}
	hist, err := db.FindHistory(ctx, "part", p.ID)
	if err != nil || len(hist) != 2 {
		t.Fatalf("history = %v, %v", hist, err)
	}
	for _, v := range hist {
		if v.Snapshot["name"] != "Bolt" && v.Snapshot["name"] != "Bolt M6" {
			t.Errorf("history version %d = %v, want its label under name", v.Version, v.Snapshot)
		}
	}
	chs, _ := db.Changes(ctx, after, 0)
	var events []store.Change
	for _, c := range chs {
		if c.Event == store.EventSchemaChanged {
			events = append(events, c)
		}
	}
	if len(events) != 1 || events[0].Version != db.Registry().Version() || !db.Registry().Same(next) {
		t.Errorf("changes = %+v, want one schema event at the registry's version", chs)
	}
}
