package tui

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// The form's rules, tested without a program: no keys, no commands, no store.

func mustForm(t *testing.T, kind store.Kind, role store.Role, vals store.Values) *form {
	t.Helper()
	reg := store.DefaultRegistry()
	fields := store.Values{}
	for _, f := range reg.Fields(kind) {
		fields[f.Name] = f.Zero()
	}
	maps.Copy(fields, vals)
	f := newForm(reg, kind, role)
	f.fill(&store.Record{Kind: kind, ID: 1, Version: 4, Fields: fields})
	return &f
}

func (f *form) field(t *testing.T, name string) *fieldInput {
	t.Helper()
	for _, fi := range f.fields {
		if fi.f.Name == name {
			return fi
		}
	}
	t.Fatalf("no field %s", name)
	return nil
}

func product() store.Values {
	return store.Values{"sku": "SKU-1", "name": "Lamp", "description": "One.\nTwo.\n", "price": int64(1000), "stock": int64(20)}
}

func TestForm_ToUpdate(t *testing.T) {
	f := mustForm(t, store.KindProduct, store.RoleEditor, product())
	if f.changed() {
		t.Fatal("a freshly filled form reports changes")
	}
	f.field(t, "price").setText("12.50")
	f.field(t, "stock").delta = -3
	u, err := f.toUpdate()
	if err != nil {
		t.Fatal(err)
	}
	if u.BaseVersion != 4 || !maps.Equal(u.Add, map[string]int64{"stock": -3}) || len(u.Set) != 1 || u.Set["price"] != int64(1250) {
		t.Fatalf("update = %+v, want price set, stock -3 on v4", u)
	}
	if got := f.values()["stock"]; got != int64(17) {
		t.Fatalf("my stock = %v, want base plus delta 17", got)
	}
	// Typing a value over a counter makes the change absolute.
	f.field(t, "stock").setText("5")
	if u, _ := f.toUpdate(); u.Add != nil || u.Set["stock"] != int64(5) {
		t.Fatalf("typed counter: %+v, want stock set to 5", u)
	}
	f.field(t, "price").setText("ten")
	if _, err := f.toUpdate(); err == nil || !f.changed() {
		t.Fatalf("a price that does not parse: err %v, changed %v", err, f.changed())
	}
}

func TestForm_ChangedIgnoresReverts(t *testing.T) {
	f := mustForm(t, store.KindProduct, store.RoleEditor, product())
	name := f.field(t, "name")
	name.setText("Lamp!")
	if !f.changed() {
		t.Fatal("an edit is not a change")
	}
	name.setText("Lamp")
	if f.changed() {
		t.Fatal("an edit typed back to the base is still a change")
	}

	n := newForm(store.DefaultRegistry(), store.KindProduct, store.RoleEditor)
	n.fill(nil)
	if n.changed() {
		t.Fatal("a new record with zero values reports changes")
	}
	n.fields[0].setText("NEW-1")
	if !n.changed() {
		t.Fatal("a typed sku on a new record is not a change")
	}
}

func TestForm_RebaseKeepsRelativeChanges(t *testing.T) {
	f := mustForm(t, store.KindProduct, store.RoleEditor, product())
	f.field(t, "stock").delta = -3
	f.field(t, "name").setText("Lamp, mine")
	cur := f.rec.Clone()
	cur.Version = 6
	cur.Fields["stock"], cur.Fields["price"] = int64(18), int64(1500)
	merged := f.values()
	merged["price"] = int64(1500)
	f.rebase(cur, merged, f.deltas())
	u, err := f.toUpdate()
	if err != nil {
		t.Fatal(err)
	}
	if u.BaseVersion != 6 || !maps.Equal(u.Add, map[string]int64{"stock": -3}) || len(u.Set) != 1 || u.Set["name"] != "Lamp, mine" {
		t.Fatalf("after rebase: %+v, want name set and stock -3 on v6", u)
	}
}

func TestForm_TypedSinceSnapshot(t *testing.T) {
	f := mustForm(t, store.KindProduct, store.RoleEditor, product())
	f.field(t, "name").setText("Lamp A")
	sent := f.snapshot()
	if got := f.typedSince(sent); len(got) != 0 {
		t.Fatalf("typed since a fresh snapshot: %v", got)
	}
	f.field(t, "name").setText("Lamp AB")
	f.field(t, "description").setText("One.\nTwo.\nThree.\n")
	got := slices.Sorted(maps.Keys(f.typedSince(sent)))
	if want := []int{1, 2}; !slices.Equal(got, want) {
		t.Fatalf("typed since: fields %v, want %v", got, want)
	}
}

func TestForm_EditsRoundTrip(t *testing.T) {
	f := mustForm(t, store.KindProduct, store.RoleEditor, product())
	f.field(t, "name").setText("Lamp 2")
	f.field(t, "stock").delta = 2
	vals, deltas := f.edits()
	if _, ok := vals["thumbnail"]; ok {
		t.Fatal("edits keep a field the editor may not write")
	}
	g := mustForm(t, store.KindProduct, store.RoleEditor, product())
	if !g.differs(vals, deltas) {
		t.Fatal("edits do not differ from the record they were made on")
	}
	g.setEdits(vals, deltas)
	if g.differs(vals, deltas) {
		t.Fatal("a form with the edits set still differs from them")
	}
}

func TestForm_ReadOnlyFields(t *testing.T) {
	vals := product()
	vals["description"] = "Tab\tand CRLF\r\n"
	vals["name"] = "Escape\x1b[2J"
	f := mustForm(t, store.KindProduct, store.RoleEditor, vals)
	for name, want := range map[string]string{
		"description": "", "name": "contains control characters", "thumbnail": "owned by system",
	} {
		if got := f.field(t, name).readOnly; got != want {
			t.Errorf("%s: read-only %q, want %q", name, got, want)
		}
	}
	if got := f.field(t, "name").shownText(); got != `Escape\x1b[2J` {
		t.Errorf("name shown as %q", got)
	}

	d := mustForm(t, store.KindDocument, store.RoleEditor, store.Values{"title": "Child", "parent_id": int64(7)})
	if ids := d.missingTitles(); !slices.Equal(ids, []refKey{{store.KindDocument, 7}}) {
		t.Fatalf("titles to ask: %v", ids)
	}
	if ids := d.missingTitles(); len(ids) != 0 {
		t.Fatalf("titles asked twice: %v", ids)
	}
	d.setTitle(store.KindDocument, 7, "Handbook")
	if got := d.field(t, "parent_id").shownText(); got != "7 · Handbook" {
		t.Fatalf("parent shown as %q", got)
	}
}

func TestForm_UndoRedo(t *testing.T) {
	f := mustForm(t, store.KindProduct, store.RoleEditor, product())
	name := f.field(t, "name")
	edit := func(typed, to string) {
		name.noteEdit(name.state(), typed)
		name.setText(to)
	}
	edit("B", "LampB")
	edit("i", "LampBi")   // same word: same step
	edit(" ", "LampBi ")  // the space ends the word, in its step
	edit("x", "LampBi x") // a new word
	edit("", "")          // a deletion: a step of its own
	for _, want := range []string{"LampBi x", "LampBi ", "Lamp"} {
		if !name.undoEdit() || name.text() != want {
			t.Fatalf("undo: %q, want %q", name.text(), want)
		}
	}
	if name.undoEdit() {
		t.Fatal("undo past the loaded value")
	}
	if !name.redoEdit() || name.text() != "LampBi " {
		t.Fatalf("redo: %q", name.text())
	}
	if f.changed() != true {
		t.Fatal("a redone edit is not a change")
	}
	// A counter's relative change is part of the state an undo restores.
	stock := f.field(t, "stock")
	stock.noteEdit(stock.state(), "")
	stock.delta = -3
	if !stock.undoEdit() || stock.delta != 0 {
		t.Fatalf("undo of a counter step left delta %d", stock.delta)
	}
	// Loading a version forgets what could be undone: it was made on another base.
	f.fill(f.rec)
	if name.undoEdit() || name.redoEdit() {
		t.Fatal("undo history survived a new base")
	}
}

func TestForm_NextStop(t *testing.T) {
	vals := product()
	vals["search_index"] = "one\ntwo\nthree"
	f := mustForm(t, store.KindProduct, store.RoleEditor, vals)
	var stops []string
	i := -1
	for range len(f.fields) {
		i = f.nextStop(i, 1)
		if slices.Contains(stops, f.fields[i].f.Name) {
			break
		}
		stops = append(stops, f.fields[i].f.Name)
	}
	// Editable fields, and the long system text to read; not the one-line system fields.
	want := []string{"sku", "name", "description", "categories", "price", "stock", "availability", "search_index"}
	if !slices.Equal(stops, want) {
		t.Fatalf("tab stops %v, want %v", stops, want)
	}
}

// TestForm_OffSchemaStoredValue: a stored value the schema refuses (another program wrote
// it) is marked, does not count as an edit, and does not stop a save of the other fields;
// a value typed into that field is checked as any other.
func TestForm_OffSchemaStoredValue(t *testing.T) {
	vals := product()
	vals["availability"] = "gone"
	f := mustForm(t, store.KindProduct, store.RoleEditor, vals)
	if f.changed() {
		t.Fatal("a form holding a stored value the schema refuses reports changes")
	}
	av := f.field(t, "availability")
	if got := av.offSchemaHint(); !strings.Contains(got, `"gone" is not one of`) {
		t.Fatalf("hint = %q, want the reason the stored value is refused", got)
	}
	f.field(t, "name").setText("Lamp II")
	u, err := f.toUpdate()
	if err != nil {
		t.Fatalf("save of another field: %v", err)
	}
	if len(u.Set) != 1 || u.Set["name"] != "Lamp II" {
		t.Fatalf("update = %+v, want the name alone", u)
	}
	av.setText("gone for good")
	if av.offSchemaHint() != "" {
		t.Fatal("the hint stays on a changed value")
	}
	if _, err := f.toUpdate(); err == nil || !strings.Contains(err.Error(), "availability") {
		t.Fatalf("save of a typed value outside the schema: %v, want an error naming availability", err)
	}
}
