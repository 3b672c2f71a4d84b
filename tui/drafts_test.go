package tui

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// mustNoDraft fails when d's store keeps a draft of product id on disk.
func mustNoDraft(t *testing.T, d *driver, id int64) {
	t.Helper()
	p := d.app.c.drafts.path(store.KindProduct, id)
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		data, _ := os.ReadFile(p)
		t.Fatalf("draft still on disk (%v): %s", err, data)
	}
}

// TestDraft_OfferedOnlyOnItsStore: a draft made on one store is not offered when the same
// user opens the same id on another store, and is still offered on its own store.
func TestDraft_OfferedOnlyOnItsStore(t *testing.T) {
	a, b := newFakeStore(t), newFakeStore(t)
	mustSeed(t, a, 1)
	mustSeed(t, b, 1)
	dir := t.TempDir()
	on := func(id string) func(*Options) {
		return func(o *Options) { o.DraftDir, o.StoreID = dir, id }
	}
	da := newDriver(t, a, "alice", on("store-a"))
	openProduct(t, da, 1, "enter")
	focusField(t, da, "name")
	da.typeText(" made on a")
	da.key("tab") // a field change writes the draft

	db := newDriver(t, b, "alice", on("store-b"))
	openProduct(t, db, 1, "enter")
	if db.app.editor.mode == modeOfferDraft || strings.Contains(db.screen(), "Unsaved edits") {
		t.Fatalf("store b offered store a's draft:\n%s", db.screen())
	}
	db.key("esc") // nothing edited: leaving b must not touch a's draft
	db.waitFor("[ products ]")

	da2 := newDriver(t, a, "alice", on("store-a"))
	openProduct(t, da2, 1, "enter")
	da2.waitFor("Unsaved edits from")
	da2.key("y")
	if got := da2.app.editor.fields[1].text(); got != "Product 1 made on a" {
		t.Fatalf("restored name = %q", got)
	}
}

// TestDraft_LegacyOfferedWithWarning: a draft from before drafts carried a store id is
// offered with a warning to check it, and becomes this store's draft once restored.
func TestDraft_LegacyOfferedWithWarning(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	dir := t.TempDir()
	old := filepath.Join(dir, "alice", "product-1.json")
	if err := os.MkdirAll(filepath.Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"user": "alice", "kind": "product", "id": 1, "base_version": 1,
		"saved": t0, "values": map[string]string{"name": "Old draft name"}})
	if err := os.WriteFile(old, data, 0o600); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.DraftDir = dir })
	openProduct(t, d, 1, "enter")
	d.waitFor("store unknown: check it.  y restore · n discard")
	d.key("y")
	d.settle()
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the old draft is still offered everywhere: %v", err)
	}
	dr, err := d.app.c.drafts.Load(store.KindProduct, 1)
	if err != nil || dr == nil || dr.legacy || dr.StoreID != "test-store" || dr.Values["name"] != "Old draft name" {
		t.Fatalf("restored draft not kept as this store's: %+v, %v", dr, err)
	}
}

// TestDraft_DiscardIsFinal: esc then y right after typing (a draft write still on its way)
// deletes the draft for good; reopening offers nothing. The old editor wrote the draft again
// while leaving, racing the delete, and lost the race most of the time; eight rounds make a
// regression all but certain to show.
func TestDraft_DiscardIsFinal(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	for round := range 8 {
		openProduct(t, d, 1, "enter")
		if d.app.editor.mode == modeOfferDraft {
			t.Fatalf("round %d: a discarded draft came back:\n%s", round, d.screen())
		}
		focusField(t, d, "name")
		d.typeText(" typed")
		d.apply(keyMsg("tab")) // writes the draft, asynchronously
		d.apply(keyMsg("esc"))
		d.apply(keyMsg("y"))
		d.settle()
		d.waitFor("edits discarded")
		mustNoDraft(t, d, 1)
	}
}

// TestDraft_DiscardAfterExternalEditor: the text coming back from $EDITOR writes a draft;
// discarding right after still leaves none.
func TestDraft_DiscardAfterExternalEditor(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	for range 4 {
		openProduct(t, d, 1, "enter")
		focusField(t, d, "description")
		e := d.app.editor
		// What tea.ExecProcess delivers when the editor exits.
		d.apply(extEditedMsg{ed: e, field: e.focus, value: "Written in vi.\n", start: e.currentDraft()})
		d.apply(keyMsg("esc"))
		d.apply(keyMsg("y"))
		d.settle()
		d.waitFor("edits discarded")
		mustNoDraft(t, d, 1)
	}
}

// TestDraft_MergeWithNothingToSaveLeavesNone: a conflict keeps a draft; a merge that ends
// equal to their version saves nothing and leaves no draft behind.
func TestDraft_MergeWithNothingToSaveLeavesNone(t *testing.T) {
	_, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "price", "12.00")
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.key("m")
	alice.waitFor("1 of 1 conflict")
	alice.key("2") // theirs: the result is bob's version
	alice.key("ctrl+s")
	alice.waitFor("nothing to save")
	alice.settle()
	mustNoDraft(t, alice, 1)
	if !strings.Contains(alice.screen(), "nothing to save: the result equals v2") {
		t.Fatalf("the status does not say why nothing was saved:\n%s", alice.screen())
	}
}

func TestDraft_OfferedAfterCrash(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	dir := t.TempDir()
	withDir := func(o *Options) { o.DraftDir = dir }
	d := newDriver(t, s, "alice", withDir)
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText(" draft")
	d.key("tab") // a field change writes the draft
	d.settle()
	fi, err := os.Stat(d.app.c.drafts.path(store.KindProduct, 1))
	if err != nil {
		t.Fatalf("no draft on disk after a field change: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("draft mode %v, want 0600", fi.Mode().Perm())
	}
	// "Crash": a new TUI on the same draft directory.
	d2 := newDriver(t, s, "alice", withDir)
	openProduct(t, d2, 1, "enter")
	d2.waitFor("Unsaved edits from")
	d2.golden("editor_draft_offer")
	d2.key("y")
	d2.waitFor("draft from")
	d2.key("ctrl+s")
	d2.waitFor("saved v2")
	if got := mustRecord(t, s, 1).Fields["name"]; got != "Product 1 draft" {
		t.Fatalf("name = %q", got)
	}
	if dr, _ := d2.app.c.drafts.Load(store.KindProduct, 1); dr != nil {
		t.Fatal("draft not deleted after a successful save")
	}
}
