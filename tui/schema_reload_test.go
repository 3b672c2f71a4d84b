package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// partsPlus returns the parts schema with a country field on suppliers and a warehouse
// kind: an additive change.
func partsPlus(t *testing.T) *store.Registry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "store", "testdata", "parts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data),
		"      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n",
		"      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n"+
			"      - {name: country, type: string, owner: editor, rule: scalar, default: NL}\n", 1)
	text += "  warehouse:\n    title: city\n    fields:\n      - {name: city, type: string, owner: editor, rule: scalar, required: true}\n"
	reg, err := store.ParseRegistry("parts+", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// A schema change applied while the TUI is open reaches it through the feed: the open form
// gains the new field with its value, keeps what was typed and says the schema changed;
// the save goes through; the list shows the new field's column and the new kind's tab.
func TestSchemaReload_NewFieldKeepsEdits(t *testing.T) {
	s := newPartsStore(t)
	id := mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	d := newDriver(t, s, "alice")
	openRow(t, d, "Acme Tools", "supplier 1 · v1")
	focusField(t, d, "name")
	replaceField(d, "Acme Tooling")
	if strings.Contains(d.screen(), "country") {
		t.Fatalf("the form shows country before the change:\n%s", d.screen())
	}

	if _, err := s.ApplySchema(actorCtx("admin"), partsPlus(t), store.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	d.waitFor("schema changed (version 1)") // the memory store's first recorded version
	d.waitFor("country")
	d.settle()
	scr := d.screen()
	if !strings.Contains(scr, "NL") {
		t.Errorf("the new field does not show its value NL:\n%s", scr)
	}
	if !strings.Contains(scr, "Acme Tooling") {
		t.Fatalf("the unsaved edit of name is gone:\n%s", scr)
	}
	d.key("ctrl+s")
	d.waitFor("saved v2")
	r := mustFind(t, s, "supplier", id)
	if r.Fields["name"] != "Acme Tooling" || r.Fields["country"] != "NL" {
		t.Errorf("saved supplier = %v; want name Acme Tooling, country NL", r.Fields)
	}

	d.key("esc")
	d.waitFor("[ suppliers ]")
	d.apply(tea.WindowSizeMsg{Width: 140, Height: 24})
	d.settle()
	if hdr := screenLine(d, 1); !strings.Contains(hdr, "country") {
		t.Errorf("the list header %q lacks the new field", hdr)
	}
	if top := screenLine(d, 0); !strings.Contains(top, "warehouses") {
		t.Errorf("tabs %q lack the new kind", top)
	}
	toTab(t, d, "warehouses")
	d.key("n")
	d.waitFor("city")
}

// A schema change that comes while the conflict dialog is open leaves the dialog alone; the
// form is rebuilt once the person is back to editing.
func TestSchemaReload_WaitsForTheDialog(t *testing.T) {
	s := newPartsStore(t)
	mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	d := newDriver(t, s, "alice")
	openRow(t, d, "Acme Tools", "supplier 1 · v1")
	focusField(t, d, "name")
	replaceField(d, "Acme Tooling")
	if _, err := s.UpdateRecord(actorCtx("bob"), "supplier", 1, store.Update{BaseVersion: 1, Set: store.Values{"name": "Acme Bob"}}); err != nil {
		t.Fatal(err)
	}
	d.settle()
	d.key("ctrl+s")
	d.waitFor("changed while you were editing")
	if _, err := s.ApplySchema(actorCtx("admin"), partsPlus(t), store.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	d.waitUntil("the reloaded schema", func() bool { return d.app.c.reg.Has("warehouse") })
	d.settle()
	if !strings.Contains(d.screen(), "changed while you were editing") {
		t.Fatalf("the schema change closed the conflict dialog:\n%s", d.screen())
	}
	d.key("esc")
	d.waitFor("country")
	if !strings.Contains(d.screen(), "Acme Tooling") {
		t.Errorf("the unsaved edit is gone after the dialog:\n%s", d.screen())
	}
}

// A field dropped by a schema change leaves the form; the person is told that the edit
// of it is not kept, and the edits of the other fields stay.
func TestSchemaReload_DroppedFieldSaysEditLost(t *testing.T) {
	s := newPartsStore(t)
	mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	d := newDriver(t, s, "alice")
	openRow(t, d, "Acme Tools", "supplier 1 · v1")
	focusField(t, d, "name")
	replaceField(d, "Acme Tooling")
	focusField(t, d, "notes")
	d.typeText("ships on fridays")
	data, err := os.ReadFile(filepath.Join("..", "store", "testdata", "parts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n", "", 1)
	next, err := store.ParseRegistry("parts-notes", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplySchema(actorCtx("admin"), next, store.ApplyOptions{AllowDestructive: true}); err != nil {
		t.Fatal(err)
	}
	d.waitFor("your edits of notes are not kept")
	if scr := d.screen(); strings.Contains(scr, "ships on fridays") || !strings.Contains(scr, "Acme Tooling") {
		t.Errorf("after notes was dropped the form shows:\n%s", scr)
	}
}

// A tab kept sorted by a field a schema change drops lists by id when shown again, rather
// than failing on a field the store no longer has.
func TestSchemaReload_DroppedSortField(t *testing.T) {
	s := newPartsStore(t)
	mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	d := newDriver(t, s, "alice")
	d.waitFor("Acme Tools")
	d.key("s")
	d.waitFor("by code ▲")
	toTab(t, d, "parts")
	data, err := os.ReadFile(filepath.Join("..", "store", "testdata", "parts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "      - {name: code,   type: string, owner: editor, rule: scalar, required: true, unique: true, max_chars: 32}\n", "", 1)
	next, err := store.ParseRegistry("parts-code", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplySchema(actorCtx("admin"), next, store.ApplyOptions{AllowDestructive: true}); err != nil {
		t.Fatal(err)
	}
	d.waitFor("the schema changed")
	toTab(t, d, "suppliers")
	d.waitFor("Acme Tools")
	if scr := d.screen(); strings.Contains(scr, "by code") || strings.Contains(scr, "code") {
		t.Errorf("the suppliers tab still follows the dropped code:\n%s", scr)
	}
}

// A save sent against the older schema, before the feed told the TUI of the change: after
// an additive change it applies; after a field it saves was dropped it fails with the
// store's message, and nothing is written.
func TestSchemaReload_SaveAgainstOlderSchema(t *testing.T) {
	s := newPartsStore(t)
	id := mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	d := newDriver(t, quietFeed{s}, "alice")
	openRow(t, d, "Acme Tools", "supplier 1 · v1")
	focusField(t, d, "name")
	replaceField(d, "Acme Tooling")
	if _, err := s.ApplySchema(actorCtx("admin"), partsPlus(t), store.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	d.key("ctrl+s")
	d.waitFor("saved v2")
	if r := mustFind(t, s, "supplier", id); r.Fields["name"] != "Acme Tooling" || r.Fields["country"] != "NL" {
		t.Errorf("after the additive change the save wrote %v", r.Fields)
	}

	focusField(t, d, "notes")
	d.typeText("ships on fridays")
	data, err := os.ReadFile(filepath.Join("..", "store", "testdata", "parts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n", "", 1)
	next, err := store.ParseRegistry("parts-notes", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplySchema(actorCtx("admin"), next, store.ApplyOptions{AllowDestructive: true}); err != nil {
		t.Fatal(err)
	}
	d.key("ctrl+s")
	d.waitFor("save: unknown field supplier.notes") // the memory store's words
	if r := mustFind(t, s, "supplier", id); r.Version != 2 {
		t.Errorf("the refused save wrote v%d", r.Version)
	}
}
