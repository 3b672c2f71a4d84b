package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// The TUI on a schema of its own (store/testdata/parts.yaml: suppliers, parts, areas, no
// product or document): tabs, columns, saves, a reference picked and a tree moved.

// newPartsStore returns a memory store with the parts schema on the fixed clock.
func newPartsStore(t *testing.T) *memory.DB {
	t.Helper()
	reg, err := store.LoadRegistry(filepath.Join("..", "store", "testdata", "parts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := memory.New(store.Options{Registry: reg, Now: func() time.Time { return t0 }})
	s.SetClock(func() time.Time { return t0 })
	t.Cleanup(func() { s.Close() })
	return s
}

// mustCreate creates a record of kind as seed and returns its id.
func mustCreate(t *testing.T, s store.Store, kind store.Kind, vals store.Values) int64 {
	t.Helper()
	r, err := s.CreateRecord(actorCtx("seed"), kind, vals)
	if err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	return r.ID
}

// mustFind reads record id of kind.
func mustFind(t *testing.T, s store.Store, kind store.Kind, id int64) *store.Record {
	t.Helper()
	r, err := s.FindRecord(context.Background(), kind, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// toTab presses tab on the list until the tab of table is the selected one.
func toTab(t *testing.T, d *driver, table string) {
	t.Helper()
	for range 5 {
		if strings.Contains(d.screen(), "[ "+table+" ]") {
			d.settle()
			return
		}
		d.key("tab")
	}
	t.Fatalf("the tab %s never got selected:\n%s", table, d.screen())
}

// screenLine is the screen's line i (0: the title and the tabs).
func screenLine(d *driver, i int) string {
	return strings.Split(d.screen(), "\n")[i]
}

func TestSchema_TabsFollowTheSchema(t *testing.T) {
	s := newPartsStore(t)
	mustCreate(t, s, "part", store.Values{"label": "Hinge"})
	d := newDriver(t, s, "alice")
	top := screenLine(d, 0)
	for _, want := range []string{"[ suppliers ]", "parts", "areas"} {
		if !strings.Contains(top, want) {
			t.Errorf("tabs %q lack %q", top, want)
		}
	}
	if strings.Contains(top, "products") || strings.Contains(top, "documents") {
		t.Errorf("tabs %q show the sample's kinds", top)
	}
	if i, j, k := strings.Index(top, "suppliers"), strings.Index(top, "parts"), strings.Index(top, "areas"); !(i < j && j < k) {
		t.Errorf("tabs %q not in schema order", top)
	}
	if !strings.Contains(d.screen(), "tab suppliers/parts/areas") {
		t.Errorf("the footer does not name the tabs:\n%s", d.screen())
	}
	d.key("?")
	d.waitFor("suppliers/parts/areas")
	if !strings.Contains(d.screen(), "move/pick ref") {
		t.Errorf("the help does not say ctrl+o picks references:\n%s", d.screen())
	}
	d.key("esc")
	d.key("tab")
	d.waitFor("[ parts ]")
	d.waitFor("Hinge")
	d.key("tab")
	d.waitFor("[ areas ]")
	d.key("tab")
	d.waitFor("[ suppliers ]")
}

func TestSchema_SupplierRowShowsNameAndCode(t *testing.T) {
	s := newPartsStore(t)
	mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	mustCreate(t, s, "supplier", store.Values{"code": "BOLT-07", "name": "Bolt Brothers"})
	d := newDriver(t, s, "alice")
	d.waitFor("Acme Tools")
	hdr := screenLine(d, 1)
	if !strings.Contains(hdr, "name") || !strings.Contains(hdr, "code") {
		t.Errorf("header %q lacks name and code", hdr)
	}
	row := screenLine(d, 2)
	for _, want := range []string{"1", "Acme Tools", "ACME-01", "v1", "seed"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	if strings.Index(row, "Acme Tools") > strings.Index(row, "ACME-01") {
		t.Errorf("row %q: the title comes after the code", row)
	}

	// s cycles through the schema's sort fields: code (unique), name (the title), then id.
	d.key("s")
	d.waitFor("by code ▲")
	d.key("o")
	d.waitFor("by code ▼")
	if row := screenLine(d, 2); !strings.Contains(row, "Bolt Brothers") {
		t.Errorf("by code descending the first row is %q", row)
	}
	d.key("s")
	d.waitFor("by name ▲")
	d.key("s")
	d.waitFor("sorted by id")
}

func TestSchema_ListColumnsFitTheWidth(t *testing.T) {
	s := newPartsStore(t)
	mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools", "rating": int64(4),
		"notes": "never shown in the list"})
	d := newDriver(t, s, "alice")
	d.waitFor("Acme Tools")
	if strings.Contains(screenLine(d, 1), "rating") {
		t.Errorf("at 80 columns the rating has no room:\n%s", d.screen())
	}
	d.apply(tea.WindowSizeMsg{Width: 140, Height: 24})
	d.settle()
	hdr, row := screenLine(d, 1), screenLine(d, 2)
	if !strings.Contains(hdr, "rating") || strings.Contains(hdr, "notes") {
		t.Errorf("at 140 columns the header is %q, want rating and no notes (a text)", hdr)
	}
	if strings.Contains(row, "never shown") {
		t.Errorf("row %q shows a text field", row)
	}
}

// openRow opens the list's row holding text with enter and waits for the editor.
func openRow(t *testing.T, d *driver, text, header string) {
	t.Helper()
	d.waitFor(text)
	for range 20 {
		if strings.Contains(selectedLine(d.screen()), text) {
			d.key("enter")
			d.waitFor(header)
			return
		}
		d.key("j")
	}
	t.Fatalf("no row %q:\n%s", text, d.screen())
}

func TestSchema_SavePartStatus(t *testing.T) {
	s := newPartsStore(t)
	id := mustCreate(t, s, "part", store.Values{"label": "Hinge"})
	d := newDriver(t, s, "alice")
	toTab(t, d, "parts")
	openRow(t, d, "Hinge", "part 1 · v1")
	focusField(t, d, "status")
	replaceField(d, "active")
	d.key("ctrl+s")
	d.waitFor("saved v2")
	if got := mustFind(t, s, "part", id).Fields["status"]; got != "active" {
		t.Fatalf("status = %v after the save, want active", got)
	}
}

func TestSchema_PickSupplierForPart(t *testing.T) {
	s := newPartsStore(t)
	mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	bolt := mustCreate(t, s, "supplier", store.Values{"code": "BOLT-07", "name": "Bolt Brothers"})
	// A part with the same id as a supplier: its title must not stand for the supplier's.
	part := mustCreate(t, s, "part", store.Values{"label": "Hinge"})
	mustCreate(t, s, "part", store.Values{"label": "Latch"})
	d := newDriver(t, s, "alice")
	toTab(t, d, "parts")
	openRow(t, d, "Hinge", "part 1 · v1")
	focusField(t, d, "supplier")
	if !strings.Contains(d.screen(), "ctrl+o pick supplier") {
		t.Errorf("the footer does not offer the picker:\n%s", d.screen())
	}
	d.key("ctrl+o")
	d.waitFor("pick a supplier  ")
	d.waitFor("2 · Bolt Brothers")
	d.typeText("bolt")
	d.waitUntil("only Bolt Brothers listed", func() bool {
		return !strings.Contains(d.screen(), "Acme Tools") && strings.Contains(selectedLine(d.screen()), "Bolt Brothers")
	})
	d.key("enter")
	d.waitFor("supplier: supplier 2 · Bolt Brothers")
	if !strings.Contains(d.screen(), "2 · Bolt Brothers") {
		t.Errorf("the form does not name the supplier picked:\n%s", d.screen())
	}
	d.key("ctrl+s")
	d.waitFor("saved v2")
	if got := mustFind(t, s, "part", part).Fields["supplier"]; got != bolt {
		t.Fatalf("supplier = %v after the pick, want %d", got, bolt)
	}

	// The list's supplier column names it; opened again, the form shows its name beside
	// the id (not part 2's label).
	d.key("esc")
	d.waitFor("[ parts ]")
	d.waitUntil("the row names the supplier", func() bool {
		row := selectedLine(d.screen())
		return strings.Contains(row, "Hinge") && strings.Contains(row, "Bolt Brothers")
	})
	if hdr := screenLine(d, 1); !strings.Contains(hdr, "supplier") {
		t.Errorf("header %q lacks the supplier column", hdr)
	}
	openRow(t, d, "Hinge", "part 1 · v2")
	d.waitFor("2 · Bolt Brothers")
	if strings.Contains(d.screen(), "2 · Latch") {
		t.Errorf("the supplier is named by the part with its id:\n%s", d.screen())
	}

	// esc leaves the field as it was.
	focusField(t, d, "supplier")
	d.key("ctrl+o")
	d.waitFor("pick a supplier  ")
	d.key("esc")
	d.waitFor("nothing picked")
	if got := d.app.editor.fields[1].text(); got != "2" {
		t.Errorf("supplier field %q after esc, want 2", got)
	}
}

func TestSchema_MoveArea(t *testing.T) {
	s := newPartsStore(t)
	north := mustCreate(t, s, "area", store.Values{"name": "North"})
	south := mustCreate(t, s, "area", store.Values{"name": "South"})
	d := newDriver(t, s, "alice")
	toTab(t, d, "areas")
	openRow(t, d, "South", "area 2 · v1")
	d.key("ctrl+o")
	d.waitFor("move area 2")
	d.waitFor("(this area)")
	pickParent(t, d, "1 · North")
	d.key("enter")
	d.waitFor("moved under 1 · North")
	if got := mustFind(t, s, "area", south).Fields[store.ParentField]; got != north {
		t.Fatalf("parent_id = %v after the move, want %d", got, north)
	}
	d.key("esc")
	d.waitFor("[ areas ]")
	d.waitFor("  South") // indented under North in the tree
	if !strings.Contains(d.screen(), "[-] North") {
		t.Errorf("the list does not show North with a child:\n%s", d.screen())
	}
}

func TestSchema_ConflictOnCustomFieldEndsInMergeView(t *testing.T) {
	s := newPartsStore(t)
	id := mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	alice := newDriver(t, s, "alice")
	bob := newDriver(t, s, "bob")
	openRow(t, alice, "Acme Tools", "supplier 1 · v1")
	openRow(t, bob, "Acme Tools", "supplier 1 · v1")
	focusField(t, bob, "name")
	replaceField(bob, "Acme Tools GmbH")
	bob.key("ctrl+s")
	bob.waitFor("saved v2")
	alice.waitFor("bob saved v2 (name)")
	focusField(t, alice, "name")
	replaceField(alice, "Acme Tooling")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	if !strings.Contains(alice.screen(), "supplier 1 · conflict") {
		t.Errorf("the dialog does not name the supplier:\n%s", alice.screen())
	}
	alice.key("m")
	alice.waitFor("1 of 1 conflict left")
	if !strings.Contains(alice.screen(), "merge supplier 1") {
		t.Errorf("not the merge view of supplier 1:\n%s", alice.screen())
	}
	alice.key("1") // mine
	alice.waitFor("0 of 1 conflict left")
	alice.key("ctrl+s")
	alice.waitFor("saved v3")
	if got := mustFind(t, s, "supplier", id).Fields["name"]; got != "Acme Tooling" {
		t.Fatalf("name = %v after the merge, want alice's", got)
	}
}

// TestSchema_TeatestConflictOnCustomField runs two real programs (teatest, 80x24) on one
// store with the parts schema: bob saves a supplier's name, alice saves another name from
// the version she opened, and the conflict she gets ends in the merge view, where she keeps
// hers.
func TestSchema_TeatestConflictOnCustomField(t *testing.T) {
	s := newPartsStore(t)
	id := mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	start := func(user string) *teatest.TestModel {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		app, err := New(ctx, s, Options{User: user, DraftDir: filepath.Join(t.TempDir(), "drafts"), Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24),
			teatest.WithProgramOptions(tea.WithEnvironment([]string{"TERM=xterm-256color"}), tea.WithColorProfile(colorprofile.Ascii)))
		waitForAll(t, tm, "Acme Tools")
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		waitForAll(t, tm, "ACME-01", "saves check the version")
		tm.Send(tea.KeyPressMsg{Code: tea.KeyTab}) // from code to name
		tm.Send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
		return tm
	}
	alice, bob := start("alice"), start("bob")

	bob.Type("Acme Tools GmbH")
	bob.Send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	waitForAll(t, bob, "saved v2")
	bob.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})

	alice.Type("Acme Tooling")
	alice.Send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	waitForAll(t, alice, "collide:")
	alice.Send(tea.KeyPressMsg{Code: 'm', Text: "m"})
	waitForAll(t, alice, "merge supplier 1", "1 of 1 conflict left")
	alice.Send(tea.KeyPressMsg{Code: '1', Text: "1"})
	alice.Send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	waitForAll(t, alice, "saved v3")
	alice.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	alice.FinalModel(t, teatest.WithFinalTimeout(teatestWait))
	bob.FinalModel(t, teatest.WithFinalTimeout(teatestWait))

	r := mustFind(t, s, "supplier", id)
	if got := r.Fields["name"]; got != "Acme Tooling" || r.Version != 3 || r.UpdatedBy != "alice" {
		t.Fatalf("after the merge: name %v at v%d by %s, want alice's Acme Tooling at v3", got, r.Version, r.UpdatedBy)
	}
}

func TestSchema_CreateSupplierAndPartWithPickedSupplier(t *testing.T) {
	s := newPartsStore(t)
	d := newDriver(t, s, "alice")
	d.waitFor("nothing here")
	d.key("n")
	d.waitFor("new supplier")
	focusField(t, d, "code")
	d.typeText("ZEN-1")
	focusField(t, d, "name")
	d.typeText("Zenith Parts")
	d.key("ctrl+s")
	d.waitFor("created supplier 1")
	d.key("esc")
	d.waitFor("[ suppliers ]")
	d.waitFor("Zenith Parts")
	if row := selectedLine(d.screen()); !strings.Contains(row, "Zenith Parts") || !strings.Contains(row, "ZEN-1") {
		t.Errorf("the new supplier's row is %q", row)
	}

	// A new part: its supplier picked before it exists.
	toTab(t, d, "parts")
	d.key("n")
	d.waitFor("new part")
	focusField(t, d, "label")
	d.typeText("Spring")
	focusField(t, d, "supplier")
	d.key("ctrl+o")
	d.waitFor("pick a supplier  new part")
	d.typeText("zen")
	d.waitUntil("Zenith Parts selected", func() bool { return strings.Contains(selectedLine(d.screen()), "1 · Zenith Parts") })
	d.key("enter")
	d.waitFor("1 · Zenith Parts")
	d.key("ctrl+s")
	d.waitFor("created part 1")
	recs, err := s.FindRecords(context.Background(), store.Filter{Kind: "part"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Fields["supplier"] != int64(1) || recs[0].Fields["label"] != "Spring" {
		t.Fatalf("parts after the create: %+v", recs)
	}
}

// A kind none of whose fields is searched (the parts schema's areas) says so at /, rather
// than opening a filter that can only find nothing.
func TestSchema_FilterOnKindWithoutSearch(t *testing.T) {
	s := newPartsStore(t)
	mustCreate(t, s, "area", store.Values{"name": "South"})
	d := newDriver(t, s, "alice")
	toTab(t, d, "areas")
	d.waitFor("South")
	d.key("/")
	d.waitFor("areas have no field a search looks in")
	d.typeText("Sou")
	if !strings.Contains(d.screen(), "South") || strings.Contains(d.screen(), "/Sou") {
		t.Errorf("the keys went into a filter:\n%s", d.screen())
	}
}

// The reference picker finds a record by its title also when the schema does not mark the
// title field search: typing narrows the list to the titles that hold the text.
func TestSchema_PickByUnsearchedTitle(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "store", "testdata", "parts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "required: true, search: true}\n      - {name: rating", "required: true}\n      - {name: rating", 1)
	reg, err := store.ParseRegistry("parts-unsearched", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.SearchFields("supplier")) != 1 {
		t.Fatalf("supplier searches %d fields; the test wants notes alone", len(reg.SearchFields("supplier")))
	}
	s := memory.New(store.Options{Registry: reg, Now: func() time.Time { return t0 }})
	t.Cleanup(func() { s.Close() })
	mustCreate(t, s, "supplier", store.Values{"code": "ACME-01", "name": "Acme Tools"})
	mustCreate(t, s, "supplier", store.Values{"code": "BOLT-07", "name": "Bolt Brothers"})
	mustCreate(t, s, "part", store.Values{"label": "Hinge"})
	d := newDriver(t, s, "alice")
	toTab(t, d, "parts")
	openRow(t, d, "Hinge", "part 1 · v1")
	focusField(t, d, "supplier")
	d.key("ctrl+o")
	d.waitFor("2 · Bolt Brothers")
	d.typeText("brot")
	d.waitUntil("only Bolt Brothers listed", func() bool {
		return !strings.Contains(d.screen(), "Acme Tools") && strings.Contains(selectedLine(d.screen()), "Bolt Brothers")
	})
	d.key("enter")
	d.waitFor("supplier: supplier 2 · Bolt Brothers")
}
