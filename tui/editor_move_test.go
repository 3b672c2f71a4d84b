package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// mustDocs creates documents by title; parents[i] is the index of document i's parent, or -1.
func mustDocs(t *testing.T, s store.Store, titles []string, parents []int) []int64 {
	t.Helper()
	ctx := actorCtx("seed")
	ids := make([]int64, len(titles))
	for i, title := range titles {
		vals := store.Values{"title": title, "body": "Body of " + title + ".\n"}
		if parents[i] >= 0 {
			vals["parent_id"] = ids[parents[i]]
		}
		r, err := s.CreateRecord(ctx, store.KindDocument, vals)
		if err != nil {
			t.Fatalf("create %s: %v", title, err)
		}
		ids[i] = r.ID
	}
	return ids
}

func mustDoc(t *testing.T, s store.Store, id int64) *store.Record {
	t.Helper()
	r, err := s.FindRecord(context.Background(), store.KindDocument, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openDocument opens the document titled title from the documents tab.
func openDocument(t *testing.T, d *driver, title, k string) {
	t.Helper()
	d.key("tab")
	d.waitFor("[ documents ]")
	for range 30 {
		if strings.Contains(d.screen(), "▸ ") && strings.Contains(selectedLine(d.screen()), title) {
			d.key(k)
			d.waitFor("document ")
			return
		}
		d.key("j")
	}
	t.Fatalf("no document %q in the list:\n%s", title, d.screen())
}

// selectedLine is the line of the screen that holds the selection mark.
func selectedLine(scr string) string {
	for _, l := range strings.Split(scr, "\n") {
		if strings.HasPrefix(l, "▸ ") {
			return l
		}
	}
	return ""
}

// pickParent moves the picker's cursor to the row holding text.
func pickParent(t *testing.T, d *driver, text string) {
	t.Helper()
	for range 30 {
		if strings.Contains(selectedLine(d.screen()), text) {
			return
		}
		d.key("j")
	}
	t.Fatalf("the picker has no row %q:\n%s", text, d.screen())
}

func TestEditor_MoveDocument(t *testing.T) {
	s := newFakeStore(t)
	ids := mustDocs(t, s, []string{"Handbook", "Onboarding", "Archive"}, []int{-1, 0, -1})
	d := newDriver(t, s, "alice")
	openDocument(t, d, "Onboarding", "e")
	d.waitFor("lease: you")
	d.key("ctrl+o")
	d.waitFor("Put it under:")
	d.waitFor("(current parent)")
	d.golden("move_picker")
	pickParent(t, d, "Archive")
	d.key("enter")
	d.waitFor("moved under 3 · Archive → v2")
	if got := mustDoc(t, s, ids[1]).Fields["parent_id"]; got != ids[2] {
		t.Fatalf("parent = %v, want %d", got, ids[2])
	}
	d.waitFor("parent         3 · Archive")

	// To the top level: the first row.
	d.key("ctrl+o")
	d.waitFor("(top level)")
	for range 5 {
		d.key("k")
	}
	d.key("enter")
	d.waitFor("moved under the top level → v3")
	if got := mustDoc(t, s, ids[1]).Fields["parent_id"]; got != nil {
		t.Fatalf("parent = %v, want none", got)
	}
}

// TestEditor_MoveRefusedCycle: moving a document under its own child is refused with the
// store's words, the picker stays open, and nothing moves.
func TestEditor_MoveRefusedCycle(t *testing.T) {
	s := newFakeStore(t)
	ids := mustDocs(t, s, []string{"Handbook", "Onboarding"}, []int{-1, 0})
	d := newDriver(t, s, "alice")
	openDocument(t, d, "Handbook", "enter")
	d.key("ctrl+o")
	d.waitFor("(inside this document)")
	pickParent(t, d, "Onboarding")
	d.key("enter")
	d.waitFor("move: moving 1 under 2 would create a cycle")
	if !strings.Contains(d.screen(), "Put it under:") {
		t.Fatalf("the picker closed after a refused move:\n%s", d.screen())
	}
	if got := mustDoc(t, s, ids[0]); got.Fields["parent_id"] != nil || got.Version != 1 {
		t.Fatalf("the refused move wrote: %+v", got)
	}
	d.key("esc")
	d.waitFor("move cancelled")
}

// TestEditor_MoveRefusedDepth: a move that would make the tree deeper than MaxDepth is
// refused with the store's message.
func TestEditor_MoveRefusedDepth(t *testing.T) {
	s := newFakeStore(t)
	titles := []string{"Top"}
	parents := []int{-1}
	for i := 1; i < store.MaxDepth; i++ {
		titles = append(titles, "Level "+itoa(int64(i)))
		parents = append(parents, i-1)
	}
	titles = append(titles, "Loose", "Loose child")
	parents = append(parents, -1, len(titles)-2)
	mustDocs(t, s, titles, parents)
	d := newDriver(t, s, "alice")
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	openDocument(t, d, "Loose", "enter")
	d.key("ctrl+o")
	d.waitFor("Put it under:")
	pickParent(t, d, "Level "+itoa(store.MaxDepth-1))
	d.golden("move_picker_15rows")
	d.key("enter")
	d.waitFor("levels deep (max " + itoa(store.MaxDepth) + ")")
}

// TestEditor_MoveRefusedLeasedParent: a parent someone else holds a lease on is refused
// (ELEASE), named by the store.
func TestEditor_MoveRefusedLeasedParent(t *testing.T) {
	s := newFakeStore(t)
	ids := mustDocs(t, s, []string{"Handbook", "Onboarding"}, []int{-1, -1})
	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindDocument, RecordID: ids[0],
		Group: s.Registry().TreeGroup(store.KindDocument), TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	openDocument(t, d, "Onboarding", "enter")
	d.key("ctrl+o")
	d.waitFor("Put it under:")
	pickParent(t, d, "Handbook")
	d.key("enter")
	d.waitFor("move: ")
	if !strings.Contains(d.screen(), "bob") {
		t.Fatalf("the refusal does not name the holder:\n%s", d.screen())
	}
	if got := mustDoc(t, s, ids[1]).Fields["parent_id"]; got != nil {
		t.Fatalf("moved under a leased parent: %v", got)
	}
}

// TestEditor_MoveKeepsEdits: typed edits stay in the form across a move, and the next save
// sends them on top of the moved version without a conflict.
func TestEditor_MoveKeepsEdits(t *testing.T) {
	s := newFakeStore(t)
	ids := mustDocs(t, s, []string{"Handbook", "Onboarding"}, []int{-1, -1})
	d := newDriver(t, s, "alice")
	openDocument(t, d, "Onboarding", "enter")
	focusField(t, d, "title")
	d.typeText(" guide")
	d.key("ctrl+o")
	d.waitFor("Put it under:")
	pickParent(t, d, "Handbook")
	d.key("enter")
	d.waitFor("your edits are kept")
	d.key("ctrl+s")
	d.waitFor("saved v3")
	r := mustDoc(t, s, ids[1])
	if r.Fields["title"] != "Onboarding guide" || r.Fields["parent_id"] != ids[0] {
		t.Fatalf("after move and save: %v", r.Fields)
	}
}
