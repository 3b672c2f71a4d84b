package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// joined is the screen's text with its lines joined by spaces, to find a wrapped message.
func joined(d *driver) string {
	var out []string
	for _, l := range strings.Split(d.screen(), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return strings.Join(out, " ")
}

// TestStatusWraps_ConflictDialogAndMergeView: on a narrow terminal a long status in the
// conflict dialog and in the merge view wraps onto more lines instead of being cut.
func TestStatusWraps_ConflictDialogAndMergeView(t *testing.T) {
	_, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "price", "12.00")
	alice.waitFor("bob saved v2 (price)")
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.apply(tea.WindowSizeMsg{Width: 44, Height: 24})
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	alice.key("a")
	msg := alice.app.editor.conflict.status.text
	if len(msg) <= 44 || !strings.Contains(joined(alice), msg) {
		t.Fatalf("the conflict dialog's status %q is not shown whole at 44 columns:\n%s", msg, alice.screen())
	}
	alice.key("m")
	alice.key("ctrl+s")
	msg = alice.app.editor.merge.status.text
	if len(msg) <= 44 || !strings.Contains(joined(alice), msg) {
		t.Fatalf("the merge view's status %q is not shown whole at 44 columns:\n%s", msg, alice.screen())
	}
	if n := len(strings.Split(alice.screen(), "\n")); n != 24 {
		t.Fatalf("the merge view takes %d lines, want 24", n)
	}
}

// TestStatusWraps_CopyDelete: the screen of a working copy's delete conflict wraps a long
// status too.
func TestStatusWraps_CopyDelete(t *testing.T) {
	cs := newCopySetup(t, 1)
	d := cs.d
	d.apply(tea.WindowSizeMsg{Width: 44, Height: 24})
	s := &copyDelete{w: d.app.wc, cf: store.CopyConflict{Op: store.CopyDelete, Kind: store.KindProduct, ID: 1, Reason: "refused by the source for a reason long enough to wrap"}}
	s.status.warn("the source refused this delete (a reason): the same delete would be refused again; 2 keeps the source's record")
	d.app.c.send(openScreenMsg{id: scrCopyMerge, s: s})
	d.apply(layoutMsg{})
	d.settle()
	if !strings.Contains(joined(d), s.status.text) {
		t.Fatalf("the delete screen's status is not shown whole at 44 columns:\n%s", d.screen())
	}
}
