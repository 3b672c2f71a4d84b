package tui

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

func TestHelp(t *testing.T) {
	s := newFakeStore(t)
	d := newDriver(t, s, "alice")
	d.key("?")
	d.golden("help")
	d.key("?")
	if d.app.showHelp {
		t.Fatal("? did not close the help")
	}
}

// TestHelp_Editor: in a field, ? is text and f1 opens the help; where nothing is typed
// (a read-only record), ? opens it too.
func TestHelp_Editor(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText("?")
	if d.app.showHelp {
		t.Fatal("? in a text field opened the help")
	}
	if got := d.app.editor.fields[d.app.editor.focus].text(); got != "Product 1?" {
		t.Fatalf("name = %q after typing ?, want %q", got, "Product 1?")
	}
	if !strings.Contains(d.screen(), "f1 help") {
		t.Fatalf("the editor's footer does not show f1:\n%s", d.screen())
	}
	d.key("f1")
	if !d.app.showHelp || !strings.Contains(d.screen(), "tandem · keys") {
		t.Fatalf("f1 did not open the help:\n%s", d.screen())
	}
	d.key("f1")
	if d.app.showHelp {
		t.Fatal("f1 did not close the help")
	}

	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 1,
		Group: store.GroupEditor, TTL: 600e9}); err != nil {
		t.Fatal(err)
	}
	d.key("esc")
	d.key("y")
	d.waitFor("products")
	openProduct(t, d, 1, "enter")
	d.waitFor("read-only")
	d.key("?")
	if !d.app.showHelp {
		t.Fatalf("? in a read-only record did not open the help:\n%s", d.screen())
	}
}

func TestHelp_ListsPagingAndLocks(t *testing.T) {
	d := newDriver(t, newFakeStore(t), "alice")
	d.key("?")
	scr := d.screen()
	for _, want := range []string{"pgup/pgdn page up/down", "locks", "enter   open the record"} {
		if !strings.Contains(scr, want) {
			t.Errorf("help lacks %q:\n%s", want, scr)
		}
	}
}
