package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestEditor_TabsAndCRLFStayEditable: a description with a tab and CRLF line endings (the
// CLI accepts both) is editable; the body editor shows the tab as spaces, and saving keeps
// the tab and the CRLF endings.
func TestEditor_TabsAndCRLFStayEditable(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	const desc = "Tab\there\r\nSecond line\r\n"
	if _, err := s.UpdateRecord(actorCtx("cli"), store.KindProduct, 1, store.Update{BaseVersion: 1,
		Set: store.Values{"description": desc}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	if strings.Contains(d.screen(), "control characters") {
		t.Fatalf("a tab and CRLF made the description read-only:\n%s", d.screen())
	}
	if !strings.Contains(d.screen(), "description    Tab    here  (+1 lines)") {
		t.Fatalf("the closed description does not show its first line plainly:\n%s", d.screen())
	}
	focusField(t, d, "description")
	if scr := d.screen(); !strings.Contains(scr, "Tab here") || strings.Contains(scr, `\t`) || strings.Contains(scr, `\r`) {
		t.Fatalf("the body editor does not show the tab as spaces and the line ends as breaks:\n%s", scr)
	}
	d.key("down")
	d.typeText("My ")
	d.key("ctrl+s")
	d.waitFor("saved v3")
	if got, want := mustRecord(t, s, 1).Fields["description"], "Tab\there\r\nMy Second line\r\n"; got != want {
		t.Fatalf("description = %q, want %q (tab and CRLF kept)", got, want)
	}
}

// TestEditor_OtherControlCharactersStayReadOnly: an escape sequence in a description is
// shown escaped and the field cannot be edited (writing it back would be refused).
func TestEditor_OtherControlCharactersStayReadOnly(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, hostileDesc{s}, "alice")
	openProduct(t, d, 1, "enter")
	scr := d.app.Render()
	if strings.Contains(scr, "\x1b[2J") {
		t.Fatalf("raw escape sequence reached the screen: %q", scr)
	}
	for i, fi := range d.app.editor.fields {
		if fi.f.Name == "description" && fi.readOnly != "contains control characters" {
			t.Fatalf("field %d description: read-only %q, want control characters", i, fi.readOnly)
		}
	}
	if !strings.Contains(d.screen(), `Evil\x1b[2J`) {
		t.Fatalf("escaped description not shown:\n%s", d.screen())
	}
}

// hostileDesc is a store whose product 1 has an escape sequence in its description, as
// another program could have written it.
type hostileDesc struct{ store.Store }

func (h hostileDesc) poison(r *store.Record) *store.Record {
	if r != nil && r.ID == 1 && r.Kind == store.KindProduct {
		r.Fields["description"] = "Evil\x1b[2J description\n"
	}
	return r
}

func (h hostileDesc) FindRecord(ctx context.Context, k store.Kind, id int64) (*store.Record, error) {
	r, err := h.Store.FindRecord(ctx, k, id)
	return h.poison(r), err
}
