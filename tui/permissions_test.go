package tui

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestPermissions_ReadOnlyBeforeTyping: for a user limited to the documents below one
// root, before anyone types, the list marks the records they may not write read only (every
// product; the documents outside the subtree) and leaves the others free; such a record
// opens read only and typing changes nothing; a record inside the subtree opens for editing.
func TestPermissions_ReadOnlyBeforeTyping(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	ids := mustDocs(t, s, []string{"Handbook", "Chapter", "Other"}, []int{-1, 0, -1})
	perms := &store.Permissions{Access: store.AccessEditor, Subtrees: map[store.Kind][]int64{store.KindDocument: {ids[0]}}}
	d := newDriver(t, s, "sue", func(o *Options) { o.Perms = perms })
	d.waitFor("Product 1")
	if l := lineWith(d.screen(), "Product 1"); !strings.Contains(l, "read only") {
		t.Fatalf("a product row is not marked read only for a user limited to documents: %q", l)
	}
	openProduct(t, d, 1, "enter")
	d.waitFor("sue · read only")
	d.typeText("x")
	if d.app.editor.dirty() {
		t.Fatal("typing changed a record the user may not write")
	}
	d.key("esc")
	openDocument(t, d, "Chapter", "enter")
	d.waitFor("sue · optimistic")
	d.key("esc")
	d.waitFor("[ documents ]")
	scr := d.screen()
	if l := lineWith(scr, "Other"); !strings.Contains(l, "read only") {
		t.Errorf("a document outside the subtree is not marked read only: %q\n%s", l, scr)
	}
	for _, title := range []string{"Handbook", "Chapter"} {
		if l := lineWith(scr, title); strings.Contains(l, "read only") || !strings.Contains(l, "free") {
			t.Errorf("document %s inside the subtree is not free: %q\n%s", title, l, scr)
		}
	}
}
