package storetest

import (
	"io"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// ClientsOpener opens a fresh store made with store/testdata/parts.yaml and returns it with
// another, which opens another client of the same store (as another process would); both
// are closed when the test ends.
type ClientsOpener func(t *testing.T) (st store.Store, another func(t *testing.T) store.Store)

// reloadMessage is what a write made with an older schema says when the store's refuses it.
const reloadMessage = "the store's schema changed since this client opened it"

// partsEdited returns the parts schema with each edits[i] replaced by edits[i+1] in its file.
func partsEdited(t *testing.T, edits ...string) *store.Registry {
	t.Helper()
	PartsRegistry(t)
	text := string(parts.text)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("parts.yaml has no %q", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	r, err := store.ParseRegistry("parts.yaml (changed)", []byte(text))
	if err != nil {
		t.Fatalf("changed parts schema: %v", err)
	}
	return r
}

// RunOldClient checks the writes of a client that opened the store before a schema change
// another client applies (store/stale.go): each is checked against the store's schema too,
// in its transaction. A value a narrowed limit, a shorter enum list or a changed rule still
// allows is written (a relative change too, which a store's one-statement save then leaves
// to the sequence); any other write, and a delete of a record a new ref field may point to,
// is refused (EINVALID) with the reload message, and writes nothing.
func RunOldClient(t *testing.T, open ClientsOpener) {
	old, another := open(t)
	other := another(t)
	ctx := actx(t, actAlice)
	apply := func(v int64, edits ...string) {
		t.Helper()
		res, err := other.(store.SchemaApplier).ApplySchema(ctx, partsEdited(t, edits...),
			store.ApplyOptions{AllowDestructive: true, ExportTo: io.Discard})
		if err != nil || res.ToVersion != v {
			t.Fatalf("apply schema version %d: %v (%+v)", v, err, res)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), reloadMessage) {
			t.Errorf("%s by a client opened before: %v, want EINVALID with %q", what, err, reloadMessage)
		}
	}
	get := func(kind store.Kind, id int64) *store.Record {
		t.Helper()
		r, err := other.FindRecord(ctx, kind, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	s, err := old.CreateRecord(ctx, "supplier", store.Values{"code": "S1", "name": "One"})
	if err != nil {
		t.Fatal(err)
	}

	// A narrowed limit.
	const long = "ABCDEFGHIJKLMNOP"
	apply(2, "max_chars: 32}", "max_chars: 8}")
	_, err = old.UpdateRecord(ctx, "supplier", s.ID, store.Update{BaseVersion: 1, Set: store.Values{"code": long}})
	refused("a save over the narrowed limit", err)
	_, err = old.CreateRecord(ctx, "supplier", store.Values{"code": long, "name": "Two"})
	refused("a create over the narrowed limit", err)
	if r := get("supplier", s.ID); r.Version != 1 || r.Fields["code"] != "S1" {
		t.Errorf("after the refused save: version %d %v", r.Version, r.Fields)
	}
	if _, err := old.UpdateRecord(ctx, "supplier", s.ID, store.Update{Add: map[string]int64{"rating": 2}}); err != nil {
		t.Errorf("a relative change the new schema allows: %v", err)
	}
	if _, err := old.UpdateRecord(ctx, "supplier", s.ID, store.Update{BaseVersion: 2, Set: store.Values{"code": "SHORT"}}); err != nil {
		t.Errorf("a save the narrowed limit allows: %v", err)
	}
	s2, err := old.CreateRecord(ctx, "supplier", store.Values{"code": "S2", "name": "Two"})
	if err != nil {
		t.Fatalf("a create the narrowed limit allows: %v", err)
	}
	if r := get("supplier", s.ID); r.Version != 3 || r.Fields["code"] != "SHORT" || r.Fields["rating"] != int64(2) {
		t.Errorf("after the allowed saves: version %d %v", r.Version, r.Fields)
	}

	// A counter that is no longer one: the relative change is refused.
	apply(3, "max_chars: 32}", "max_chars: 8}", "rule: counter", "rule: scalar")
	_, err = old.UpdateRecord(ctx, "supplier", s.ID, store.Update{Add: map[string]int64{"rating": 1}})
	refused("a relative change of a field no longer a counter", err)
	if r := get("supplier", s.ID); r.Version != 3 || r.Fields["rating"] != int64(2) {
		t.Errorf("after the refused relative change: version %d %v", r.Version, r.Fields)
	}

	// A removed enum value.
	p, err := old.CreateRecord(ctx, "part", store.Values{"label": "P1"})
	if err != nil {
		t.Fatal(err)
	}
	apply(4, "max_chars: 32}", "max_chars: 8}", "rule: counter", "rule: scalar", "values: [draft, active, retired]", "values: [draft, active]")
	_, err = old.UpdateRecord(ctx, "part", p.ID, store.Update{BaseVersion: 1, Set: store.Values{"status": "retired"}})
	refused("a save of a removed enum value", err)
	_, err = old.CreateRecord(ctx, "part", store.Values{"label": "P2", "status": "retired"})
	refused("a create with a removed enum value", err)
	if _, err := old.UpdateRecord(ctx, "part", p.ID, store.Update{BaseVersion: 1, Set: store.Values{"status": "active"}}); err != nil {
		t.Errorf("a save of an enum value the new schema keeps: %v", err)
	}
	if r := get("part", p.ID); r.Version != 2 || r.Fields["status"] != "active" {
		t.Errorf("after the enum change: version %d %v", r.Version, r.Fields)
	}

	// A new ref to supplier: the old client's delete would not look for its referrers.
	apply(5, "max_chars: 32}", "max_chars: 8}", "rule: counter", "rule: scalar", "values: [draft, active, retired]", "values: [draft, active]",
		"      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n",
		"      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n      - {name: supplier, type: ref, to: supplier, owner: editor, rule: scalar}\n")
	_, err = old.DeleteRecord(ctx, "supplier", s2.ID, store.Delete{ExpectVersion: 1})
	refused("a delete of a kind a new ref points to", err)
	if r := get("supplier", s2.ID); r.Version != 1 {
		t.Errorf("after the refused delete: version %d", r.Version)
	}
}
